// alloc_loop_prog.cu -- a loop that allocates and frees a temporary every iteration
// (issue 31: "a loop that allocates and frees a temporary each iteration").
//
// Per iteration:
//   cudaMalloc(&tmp, size)        size alternates between A and B KiB (default 1024 and
//                                 1536; --const: always A)
//   16 kernel launches            k_load (tmp from the persistent buffers a and b), 14
//                                 mixing steps on tmp (some reading b), k_store (a and b
//                                 from tmp): unsigned arithmetic, deterministic
//   cudaFree(tmp)
//   cudaStreamSynchronize(s)      unless --nosync
// --async: cudaMallocAsync / cudaFreeAsync on the stream instead (a created stream, blocking
// unless --nonblocking), then the sync unless --nosync.
//
// usage: alloc_loop_prog [--async] [--const] [--sizes A,B] [--nosync] [--stream]
//                        [--nonblocking] [--iters I] [--time] [--warmup W]
//   stream: the legacy default stream unless --stream / --nonblocking (--async always uses
//   a created stream); --iters default 200; --time: per-iteration host time (malloc .. sync)
//   after W warm-up iterations (default 20): "per_iter_us p50 <x> p90 <y>".  With --nosync
//   and --async, an iteration's host time is only the time to enqueue it.
//
// stdout: "result <16 hex>" (FNV-1a over a and b at the end), with --time the timing line.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill_hash.cuh"
#include "loop_timing.cuh"

#define KL(...)                                                                        \
    do {                                                                               \
        __VA_ARGS__;                                                                   \
        CK(cudaPeekAtLastError());                                                     \
    } while (0)

__global__ void k_seed(unsigned *x, int n, unsigned seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = mix32((unsigned)i * 2654435761u ^ seed);
}

// tmp[i] = a[i] * 3 + b[(i * 5 + 1) % nb]
__global__ void k_load(unsigned *tmp, int n, const unsigned *a, const unsigned *b, int nb)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        tmp[i] = a[i] * 3u + b[(int)(((unsigned)i * 5u + 1u) % (unsigned)nb)];
}

// tmp[i] = mix(tmp[i] + salt)
__global__ void k_mix(unsigned *tmp, int n, unsigned salt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        tmp[i] = mix32(tmp[i] + salt);
}

// tmp[i] ^= b[(i * 7 + salt) % nb] (reads across blocks of b)
__global__ void k_xorb(unsigned *tmp, int n, const unsigned *b, int nb, unsigned salt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        tmp[i] ^= b[(int)(((unsigned)i * 7u + salt) % (unsigned)nb)];
}

// tmp[i] = tmp[i] + tmp[i ^ 1] * 2 -- in place over pairs: each thread handles one pair
__global__ void k_pair(unsigned *tmp, int n)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int i = 2 * p;
    if (i + 1 < n) {
        unsigned x = tmp[i], y = tmp[i + 1];
        tmp[i] = x + y * 2u;
        tmp[i + 1] = y + x * 3u;
    }
}

// a[i] += tmp[i]; b[i] = b[i] * 5 ^ tmp[n - 1 - i] (for i < n)
__global__ void k_store(unsigned *a, unsigned *b, const unsigned *tmp, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] += tmp[i];
        b[i] = (b[i] * 5u) ^ tmp[n - 1 - i];
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: alloc_loop_prog [--async] [--const] [--sizes A,B] [--nosync] "
                    "[--stream] [--nonblocking] [--iters I] [--time] [--warmup W]\n");
    exit(1);
}

int main(int argc, char **argv)
{
    int async = 0, constant = 0, nosync = 0, smode = 0, iters = 200, timing = 0, warmup = 20;
    int kib[2] = {1024, 1536};
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--async"))
            async = 1;
        else if (!strcmp(argv[a], "--const"))
            constant = 1;
        else if (!strcmp(argv[a], "--nosync"))
            nosync = 1;
        else if (!strcmp(argv[a], "--stream"))
            smode = 1;
        else if (!strcmp(argv[a], "--nonblocking"))
            smode = 2;
        else if (!strcmp(argv[a], "--time"))
            timing = 1;
        else if (!strcmp(argv[a], "--iters") && a + 1 < argc)
            iters = intarg(argv[++a], 1, 10000000);
        else if (!strcmp(argv[a], "--warmup") && a + 1 < argc)
            warmup = intarg(argv[++a], 0, 1000000);
        else if (!strcmp(argv[a], "--sizes") && a + 1 < argc) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", argv[++a]);
            char *comma = strchr(buf, ',');
            if (!comma)
                usage();
            *comma = 0;
            kib[0] = intarg(buf, 4, 1 << 20);
            kib[1] = intarg(comma + 1, 4, 1 << 20);
        } else
            usage();
    }
    if (async && smode == 0)
        smode = 1;
    if (timing && iters < warmup + 50)
        iters = warmup + 50;

    cudaStream_t s = 0;
    if (smode == 1)
        CK(cudaStreamCreate(&s));
    else if (smode == 2)
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    int nmax = (kib[0] > kib[1] ? kib[0] : kib[1]) * 1024 / 4; // words
    unsigned *a, *b;
    CK(cudaMalloc(&a, (size_t)nmax * 4));
    CK(cudaMalloc(&b, (size_t)nmax * 4));
    const int tb = 256;
    KL(k_seed<<<(nmax + tb - 1) / tb, tb, 0, s>>>(a, nmax, 0x1234u));
    KL(k_seed<<<(nmax + tb - 1) / tb, tb, 0, s>>>(b, nmax, 0xbeefu));
    CK(cudaStreamSynchronize(s));

    double *times = (double *)malloc(sizeof(double) * (size_t)iters);
    if (!times)
        return 2;
    int ntimes = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = now_us();
        int words = (constant ? kib[0] : kib[it & 1]) * 1024 / 4;
        unsigned *tmp;
        if (async)
            CK(cudaMallocAsync((void **)&tmp, (size_t)words * 4, s));
        else
            CK(cudaMalloc(&tmp, (size_t)words * 4));
        int g = (words + tb - 1) / tb;
        KL(k_load<<<g, tb, 0, s>>>(tmp, words, a, b, nmax));
        for (int k = 0; k < 14; k++) {
            unsigned salt = (unsigned)(it * 16 + k);
            switch (k % 3) {
            case 0: KL(k_mix<<<g, tb, 0, s>>>(tmp, words, salt)); break;
            case 1: KL(k_xorb<<<g, tb, 0, s>>>(tmp, words, b, nmax, (unsigned)k)); break;
            case 2: KL(k_pair<<<(words / 2 + tb - 1) / tb, tb, 0, s>>>(tmp, words)); break;
            }
        }
        KL(k_store<<<g, tb, 0, s>>>(a, b, tmp, words));
        if (async)
            CK(cudaFreeAsync(tmp, s));
        else
            CK(cudaFree(tmp));
        if (!nosync)
            CK(cudaStreamSynchronize(s));
        double t1 = now_us();
        if (timing && it >= warmup)
            times[ntimes++] = t1 - t0;
    }
    CK(cudaStreamSynchronize(s));

    unsigned *ha = (unsigned *)malloc((size_t)nmax * 4), *hb = (unsigned *)malloc((size_t)nmax * 4);
    if (!ha || !hb)
        return 2;
    CK(cudaMemcpy(ha, a, (size_t)nmax * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb, b, (size_t)nmax * 4, cudaMemcpyDeviceToHost));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint64_t h = fnv1a(ha, (size_t)nmax * 4, FNV_INIT);
    h = fnv1a(hb, (size_t)nmax * 4, h);
    printf("result %016llx\n", (unsigned long long)h);
    if (timing) // ntimes >= 50
        print_percentiles("per_iter_us", times, ntimes);
    fflush(stdout);
    if (smode)
        CK(cudaStreamDestroy(s));
    CK(cudaFree(a));
    CK(cudaFree(b));
    free(ha);
    free(hb);
    free(times);
    return 0;
}
