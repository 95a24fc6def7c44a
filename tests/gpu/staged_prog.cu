// staged_prog.cu -- copies from and to pageable host memory, and synchronous copies, while
// the GPU runs behind the host (realistic.bats: the shim's staging ring, shim/record_stage.c,
// must never reuse a slot that a held copy has not read yet).
//
// usage: staged_prog [--mode burst|scalar|sync] [--iters I] [--words W] [--spin S]
//   burst   per iteration: a pageable host array of W words filled with the iteration's
//           values, cudaMemcpyAsync of it to the device (the array overwritten right after
//           the call), then k_slow (spins S clock ticks, so the GPU falls behind) and k_fold
//           (folds the uploaded words into an accumulator); no synchronization until the end
//   scalar  the same, and every iteration a cudaMemcpyAsync of the accumulator's first word
//           into a stack variable (pageable: the call returns once done), folded on the host
//   sync    the same with synchronous cudaMemcpy for the upload and for the read back, and a
//           synchronous cudaMemset of a scratch buffer on the legacy stream each iteration
//   All work on a created blocking stream (burst, scalar) or the legacy stream (sync).
//   Defaults: burst, 2000 iterations, 16384 words (64 KiB per copy), spin 20000.
//
// stdout: "result <16 hex>" (FNV-1a over the accumulator and the host's fold).  Every CUDA
// call is checked: an error prints a message and exits 2.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"

__global__ void k_slow(long long ticks)
{
    long long start = clock64();
    while (clock64() - start < ticks) {
    }
}

__global__ void k_fold(unsigned *acc, const unsigned *in, int n, unsigned salt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        acc[i] = (acc[i] ^ in[i]) * 16777619u + salt;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    const char *mode = "burst";
    int iters = 2000, words = 16384;
    long long spin = 20000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
        else if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--words")) words = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--spin")) spin = atoll(argv[i + 1]);
        else { fprintf(stderr, "staged_prog: unknown option %s\n", argv[i]); return 2; }
    }
    int sync = !strcmp(mode, "sync"), scalar = !strcmp(mode, "scalar");
    if ((!sync && !scalar && strcmp(mode, "burst")) || iters <= 0 || words <= 0) {
        fprintf(stderr, "usage: staged_prog [--mode burst|scalar|sync] [--iters I] "
                        "[--words W] [--spin S]\n");
        return 2;
    }
    size_t bytes = (size_t)words * sizeof(unsigned);
    unsigned *host = (unsigned *)malloc(bytes), *acc, *in, *scratch;
    uint64_t h = 1469598103934665603ull;
    cudaStream_t s = 0;
    if (!sync)
        CK(cudaStreamCreate(&s));
    CK(cudaMalloc(&acc, bytes));
    CK(cudaMalloc(&in, bytes));
    CK(cudaMalloc(&scratch, bytes));
    CK(cudaMemset(acc, 0, bytes));
    CK(cudaDeviceSynchronize());
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < words; i++)
            host[i] = (unsigned)it * 2654435761u + (unsigned)i * 40503u;
        if (sync) {
            CK(cudaMemset(scratch, it & 0xff, bytes));
            CK(cudaMemcpy(in, host, bytes, cudaMemcpyHostToDevice));
        } else {
            CK(cudaMemcpyAsync(in, host, bytes, cudaMemcpyHostToDevice, s));
        }
        memset(host, 0xee, bytes);             // the copy took the array at its call
        k_slow<<<1, 1, 0, s>>>(spin);
        k_fold<<<(words + 255) / 256, 256, 0, s>>>(acc, in, words, (unsigned)it);
        CK(cudaPeekAtLastError());
        if (sync || scalar) {
            unsigned first = 0;
            if (sync)
                CK(cudaMemcpy(&first, acc, sizeof first, cudaMemcpyDeviceToHost));
            else
                CK(cudaMemcpyAsync(&first, acc, sizeof first, cudaMemcpyDeviceToHost, s));
            h = fnv(h, &first, sizeof first);  // read at the return: no synchronization
        }
    }
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(host, acc, bytes, cudaMemcpyDeviceToHost));
    h = fnv(h, host, bytes);
    printf("result %016llx\n", (unsigned long long)h);
    return 0;
}
