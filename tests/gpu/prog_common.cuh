// prog_common.cuh -- what the GPU suite's runtime-API test programs share
// (engine_prog.cu, capture_prog.cu, threads_prog.cu, errors_prog.cu, samples_prog.cu):
// the launch-and-count macro KL, a few deterministic kernels (seed, tiny, affine, heavy,
// combine), the "<mode> <buffer> bytes <n> fnv1a64 <hex>" result lines (FNV-1a and
// now_us come from loop_timing.cuh, mix32 from fill_hash.cuh), buffer and stream helpers,
// and the argument parser.  One translation unit per program includes it (static
// definitions).
#ifndef AG_PROG_COMMON_CUH
#define AG_PROG_COMMON_CUH

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.cuh"
#include "fill_hash.cuh"
#include "loop_timing.cuh"

// Kernel launches the program made (printed as "expected_launches N" on stderr).
static long g_launches;

// KL(kernel<<<...>>>(...)): launch, check, count (from any thread).  Variadic: <<<a, b>>>
// has commas.
#define KL(...)                                                                        \
    do {                                                                               \
        __VA_ARGS__;                                                                   \
        CK(cudaPeekAtLastError());                                                     \
        __atomic_fetch_add(&g_launches, 1, __ATOMIC_RELAXED);                          \
    } while (0)

// --- kernels -------------------------------------------------------------------------

__global__ void k_seed_u(unsigned *x, int n, unsigned seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = mix32((unsigned)i * 2654435761u ^ seed);
}

__global__ void k_seed_f(float *x, int n, unsigned seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = ag_fill_value(i, seed);
}

// tiny: one block; applying it with k then k' differs from k' then k.
__global__ void k_tiny(unsigned *x, unsigned k)
{
    x[threadIdx.x] = x[threadIdx.x] * 3u + k;
}

// x = x*mul + add (unsigned, wraps)
__global__ void k_affine(unsigned *x, int n, unsigned mul, unsigned add)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * mul + add;
}

// dst = `rounds` of mixing of (src ^ dst) with salt: long enough that a missing
// dependency between streams shows up as a different result.
__global__ void k_heavy(unsigned *dst, const unsigned *src, int n, unsigned salt, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = src[i] ^ (dst[i] * 0x9e3779b9u);
        for (int r = 0; r < rounds; r++)
            v = mix32(v + salt + (unsigned)r);
        dst[i] = v;
    }
}

// a = a + b*3 ^ c[other element]  (reads across blocks)
__global__ void k_combine(unsigned *a, const unsigned *b, const unsigned *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = (a[i] + b[i] * 3u) ^ c[(int)(((unsigned)i * 7u + 13u) % (unsigned)n)];
}

// --- hashes and result lines -----------------------------------------------------------

// The first word of every result line (the program's mode).
static const char *g_mode = "?";

static inline void print_hash(const char *name, size_t bytes, uint64_t h)
{
    printf("%s %s bytes %zu fnv1a64 %016llx\n", g_mode, name, bytes, (unsigned long long)h);
}

static inline void print_host(const char *name, const void *p, size_t bytes)
{
    print_hash(name, bytes, fnv1a(p, bytes, FNV_INIT));
}

// Copies a device buffer back (synchronous cudaMemcpy) and prints its hash.
static inline void print_dev(const char *name, const void *dptr, size_t bytes)
{
    void *h = malloc(bytes);
    if (!h) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    CK(cudaMemcpy(h, dptr, bytes, cudaMemcpyDeviceToHost));
    print_host(name, h, bytes);
    free(h);
}

// --- buffers and streams ---------------------------------------------------------------

static inline unsigned *dev_u(int n, unsigned seed, cudaStream_t s)
{
    unsigned *p;
    CK(cudaMalloc(&p, (size_t)n * sizeof *p));
    KL(k_seed_u<<<(n + 255) / 256, 256, 0, s>>>(p, n, seed));
    return p;
}

static inline float *dev_f(int n, unsigned seed, cudaStream_t s)
{
    float *p;
    CK(cudaMalloc(&p, (size_t)n * sizeof *p));
    KL(k_seed_f<<<(n + 255) / 256, 256, 0, s>>>(p, n, seed));
    return p;
}

static inline cudaStream_t new_stream(void)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

static inline cudaEvent_t new_event(void)
{
    cudaEvent_t e;
    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
}

// --- arguments -------------------------------------------------------------------------

// A positive integer argument (1..1e8); 0 when `s` is not one.
static inline int posint(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1 || v > 100000000)
        return 0;
    *out = (int)v;
    return 1;
}

// The end of main: no error left behind, every result printed, the launch count on stderr.
static inline int finish(int rc)
{
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    fflush(stdout);
    fprintf(stderr, "expected_launches %ld\n", g_launches);
    return rc;
}

#endif
