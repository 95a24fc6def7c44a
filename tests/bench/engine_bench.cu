// engine_bench.cu -- the auto-graphing engine's benchmark loops (tests/bench/engine_bench.sh).
//
//   engine_bench eager    N ITERS WARMUP   N tiny kernels on one stream, then
//                                          cudaStreamSynchronize; run without and with the shim
//   engine_bench graph    N ITERS WARMUP   the same N launches captured once by hand
//                                          (cudaStreamBeginCapture .. cudaGraphInstantiate),
//                                          then cudaGraphLaunch + sync per iteration
//                                          (run without the shim)
//   engine_bench chunked  N ITERS WARMUP   the same N launches captured by hand into the
//                                          graphs of the shim's chunk plan (AUTOGRAPH_CHUNK
//                                          launches, default 8, each next chunk
//                                          AUTOGRAPH_CHUNK_GROWTH times the last, default 3, up
//                                          to 256; a tail shorter than the first chunk joins the
//                                          chunk before it), launched one after the other + sync
//                                          per iteration (run without the shim): the cost of
//                                          cutting a window into chunks, without the holding
//   engine_bench norepeat N ITERS WARMUP   N launches then a sync, but the kernel, grid and
//                                          block size change every launch (pseudo-random:
//                                          no window ever repeats)
//   ... [SPIN]                             eager, graph and chunked with SPIN > 0: each kernel
//                                          is one block of 128 threads per SM taking SPIN
//                                          dependent steps (a few us for SPIN in the
//                                          thousands), longer than its launch: the GPU is
//                                          the bottleneck and the launches queue up
//
// WARMUP iterations run first (the shim builds its graphs there), then ITERS timed ones
// (CLOCK_MONOTONIC around each iteration: launches + sync).  Prints
//   us_per_kernel_samples v1 v2 ...   every timed iteration, microseconds per kernel
//   median_us_per_kernel X
//   mean_us_per_kernel X
//   median_submit_us_per_kernel X     the host's time from the iteration's start to the
//                                     return of its last launch call (the launches, or
//                                     with the shim the held ops and the chunk graphs
//                                     launched among them), per kernel: what the program's
//                                     thread spends submitting, the sync left out
//   kernels_total K                   kernel executions (warm-up included)
//   hash H                            FNV-1a of the result buffer: all three loops of one N
//                                     (eager, eager with shim, graph) give the same H
// Every CUDA call is checked (exit 2 with a message).
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../gpu/cuda_check.cuh"

#define T 32          /* threads of a tiny kernel */
#define NR_ELEMS 8192 /* norepeat buffer: up to 64 blocks of 128 threads */

__global__ void k_tiny(unsigned *x, unsigned k)
{
    x[threadIdx.x] = x[threadIdx.x] * 3u + k;
}

#define SPIN_THREADS 128
__global__ void k_spin(unsigned *x, unsigned k, int spin)
{
    unsigned i = blockIdx.x * SPIN_THREADS + threadIdx.x, v = x[i];
    for (int s = 0; s < spin; s++)
        v = v * 1664525u + k;
    x[i] = v;
}

/* Kernel i of a loop: the tiny one, or with spin > 0 one block per SM spinning. */
static void launch(unsigned *x, int i, int spin, int sms, cudaStream_t s)
{
    if (spin > 0)
        k_spin<<<sms, SPIN_THREADS, 0, s>>>(x, (unsigned)i, spin);
    else
        k_tiny<<<1, T, 0, s>>>(x, (unsigned)i);
}

#include "nr_kernels.cuh"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* The shim's chunk plan (shim/build_template.c, plan_chunks) for the switches
 * AUTOGRAPH_CHUNK and AUTOGRAPH_CHUNK_GROWTH in the environment (the shim's defaults
 * where unset; AUTOGRAPH_CHUNK_MAX is taken as its default): the length of chunk c,
 * which starts at op `pos` of `n`. */
#define CHUNK_MAX 256
#define MAX_CHUNKS 512
static int env_int(const char *name, int fallback, int min)
{
    const char *v = getenv(name);
    int x = v && *v ? atoi(v) : fallback;
    return x < min ? fallback : x;
}

static int chunk_len(int c, int pos, int n)
{
    int first = env_int("AUTOGRAPH_CHUNK", 8, 1);
    int growth = env_int("AUTOGRAPH_CHUNK_GROWTH", 3, 1);
    long size = first;
    int len;
    for (int i = 0; i < c; i++)
        size = size * growth < CHUNK_MAX ? size * growth : CHUNK_MAX;
    len = size < n - pos ? (int)size : n - pos;
    return n - (pos + len) < first ? n - pos : len;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n), sorted. */
static double median(const double *v, int n)
{
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    if ((argc != 5 && argc != 6) ||
        (strcmp(argv[1], "eager") && strcmp(argv[1], "graph") &&
         strcmp(argv[1], "chunked") && strcmp(argv[1], "norepeat"))) {
        fprintf(stderr, "usage: %s eager|graph|chunked|norepeat N ITERS WARMUP [SPIN]\n",
                argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int n = atoi(argv[2]), iters = atoi(argv[3]), warmup = atoi(argv[4]);
    int spin = argc == 6 ? atoi(argv[5]) : 0;
    int norepeat = !strcmp(mode, "norepeat"), chunked = !strcmp(mode, "chunked");
    if (n < 1 || n > 100000 || iters < 1 || iters > 10000000 || warmup < 0 || spin < 0 ||
        spin > 10000000 || (spin && norepeat)) {
        fprintf(stderr, "bad N/ITERS/WARMUP/SPIN\n");
        return 2;
    }
    int graph = !strcmp(mode, "graph") || chunked, sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    size_t elems = norepeat ? NR_ELEMS : spin ? (size_t)sms * SPIN_THREADS : T;

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned *x;
    CK(cudaMalloc(&x, elems * sizeof *x));
    CK(cudaMemsetAsync(x, 0x5a, elems * sizeof *x, s));
    CK(cudaStreamSynchronize(s));

    cudaGraphExec_t exec[MAX_CHUNKS];
    cudaGraph_t g[MAX_CHUNKS];
    int nchunks = 0;
    if (graph) {
        for (int j = 0, len; j < n; j += len, nchunks++) {
            len = chunked ? chunk_len(nchunks, j, n) : n;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
            for (int i = j; i < j + len; i++)
                launch(x, i, spin, sms, s);
            CK(cudaGetLastError());
            CK(cudaStreamEndCapture(s, &g[nchunks]));
            CK(cudaGraphInstantiate(&exec[nchunks], g[nchunks], 0));
        }
    }

    uint64_t rng = 12345;
    double *us = (double *)malloc((size_t)iters * sizeof *us);
    double *submit = (double *)malloc((size_t)iters * sizeof *submit);
    if (!us || !submit)
        return 2;
    for (int it = -warmup; it < iters; it++) {
        double t0 = now_us();
        if (graph) {
            for (int c = 0; c < nchunks; c++)
                CK(cudaGraphLaunch(exec[c], s));
        } else if (norepeat) {
            for (int j = 0; j < n; j++) {
                uint64_t r = splitmix(&rng);
                unsigned grid = 1 + (unsigned)(r % 64), block = 32u * (1 + (unsigned)(r >> 8) % 4);
                if ((r >> 16) & 1)
                    k_nr_a<<<grid, block, 0, s>>>(x, (unsigned)(r >> 32));
                else
                    k_nr_b<<<grid, block, 0, s>>>(x, (unsigned)(r >> 32));
            }
        } else {
            for (int j = 0; j < n; j++)
                launch(x, j, spin, sms, s);
        }
        double t1 = now_us();
        CK(cudaPeekAtLastError());
        CK(cudaStreamSynchronize(s));
        double dt = now_us() - t0;
        if (it >= 0) {
            us[it] = dt / n;
            submit[it] = (t1 - t0) / n;
        }
    }

    unsigned *h = (unsigned *)malloc(elems * sizeof *h);
    if (!h)
        return 2;
    CK(cudaMemcpy(h, x, elems * sizeof *x, cudaMemcpyDeviceToHost));
    uint64_t hash = 0xcbf29ce484222325ull;
    const unsigned char *b = (const unsigned char *)h;
    for (size_t i = 0; i < elems * sizeof *h; i++) {
        hash ^= b[i];
        hash *= 0x100000001b3ull;
    }

    double sum = 0;
    printf("us_per_kernel_samples");
    for (int i = 0; i < iters; i++) {
        printf(" %.4f", us[i]);
        sum += us[i];
    }
    qsort(us, (size_t)iters, sizeof *us, cmp_double);
    qsort(submit, (size_t)iters, sizeof *submit, cmp_double);
    printf("\nmedian_us_per_kernel %.4f\nmean_us_per_kernel %.4f\n", median(us, iters),
           sum / iters);
    printf("median_submit_us_per_kernel %.4f\n", median(submit, iters));
    printf("kernels_total %lld\nhash %016llx\n", (long long)(warmup + iters) * n,
           (unsigned long long)hash);
    for (int c = 0; c < nchunks; c++) {
        CK(cudaGraphExecDestroy(exec[c]));
        CK(cudaGraphDestroy(g[c]));
    }
    CK(cudaFree(x));
    CK(cudaStreamDestroy(s));
    free(us);
    free(submit);
    free(h);
    return 0;
}
