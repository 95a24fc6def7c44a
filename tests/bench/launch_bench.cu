// launch_bench.cu -- a launch-bound loop for measuring the shim's passthrough cost.
//
//   launch_bench MODE [launches] [reps]   MODE: rt (<<<>>>) | drv (cuLaunchKernel) | inproc | nrinproc
//
// drv and inproc need a build with -DAG_BENCH_DRV and -lcuda (exported cuLaunchKernel:
// door 1).
//
// inproc: an A/B inside one process, immune to the run-to-run drift of a VM.  Blocks of
// 256 launches alternate between the exported cuLaunchKernel (the shim's wrapper when
// it is preloaded) and the driver's own cuLaunchKernel, found with glibc's real dlsym
// (dlvsym on the libc handle: the shim interposes dlsym, not dlvsym); only the launch
// calls are timed, with a sync after each block.  Without the shim both sides are the
// driver's function: a control that shows the noise floor.  Prints inproc_exported_reps,
// inproc_real_reps (ns per call per rep), inproc_bypassed (1 when the two pointers
// differ, i.e. a shim sits in between).  Passthrough only: bypassing the shim while it
// defers launches would reorder work.
// Empty kernels, one stream (the legacy default stream).  After a warm-up, each rep
// measures two things with CLOCK_MONOTONIC:
//   loop  -- `launches` back-to-back launches then one sync: ns per launch end to end
//   call  -- the same launches in batches of 256 with a sync after each batch, timing
//            only the launch calls (the host cost of a launch, queue never full)
// Prints every rep's value (loop_reps, call_reps), the medians (loop_ns, call_ns) and
// "launches_total N" (warm-up included: what a launch counter should see).
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__global__ void empty_kernel(void) {}

#define WARMUP 20000 /* launches before measuring; bench.sh's expected count uses it */

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                   \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#ifdef AG_BENCH_DRV
static CUfunction g_fn;
#endif
static int g_drv;

#ifdef AG_BENCH_DRV
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef void *(*dlsym_fn)(void *, const char *);

// The driver's own function `name`, past any dlsym interposer.
static void *real_driver_fn(const char *name)
{
    static const char *libs[] = {"libc.so.6", "libdl.so.2"};
    static const char *vers[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    dlsym_fn real_dlsym = NULL;
    for (int i = 0; i < 2 && !real_dlsym; i++) {
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);
        for (int j = 0; h && j < 2 && !real_dlsym; j++)
            real_dlsym = (dlsym_fn)dlvsym(h, "dlsym", vers[j]);
    }
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return real_dlsym && cuda ? real_dlsym(cuda, name) : NULL;
}

static double timed_block(launch_fn fn, int count)
{
    double t = now_ns();
    for (int i = 0; i < count; i++)
        if (fn(g_fn, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL) != CUDA_SUCCESS) {
            fprintf(stderr, "cuLaunchKernel failed\n");
            exit(2);
        }
    t = now_ns() - t;
    CK(cudaDeviceSynchronize());
    return t;
}

static int inproc(long n, int reps)
{
    launch_fn exported = cuLaunchKernel, real = (launch_fn)real_driver_fn("cuLaunchKernel");
    if (!real) {
        fprintf(stderr, "cannot find the driver's own cuLaunchKernel\n");
        return 2;
    }
    for (int i = 0; i < 40; i++) { // warm-up, both sides
        timed_block(exported, 256);
        timed_block(real, 256);
    }
    double ex[100], re[100];
    long total = 2L * 40 * 256;
    for (int r = 0; r < reps; r++) {
        double te = 0, tr = 0;
        long done = 0;
        for (int b = 0; done < n; b++) {
            int batch = n - done < 256 ? (int)(n - done) : 256;
            if (b & 1) { // alternate which side goes first
                tr += timed_block(real, batch);
                te += timed_block(exported, batch);
            } else {
                te += timed_block(exported, batch);
                tr += timed_block(real, batch);
            }
            done += batch;
        }
        ex[r] = te / (double)n;
        re[r] = tr / (double)n;
        total += 2 * n;
    }
    printf("inproc_exported_reps");
    for (int r = 0; r < reps; r++)
        printf(" %.1f", ex[r]);
    printf("\ninproc_real_reps");
    for (int r = 0; r < reps; r++)
        printf(" %.1f", re[r]);
    printf("\ninproc_bypassed %d\n", (void *)exported != (void *)real);
    printf("launches_total %ld\n", total);
    return 0;
}

// nrinproc: the engine's cost where it cannot help, inside one process.  Blocks of
// NR_BLOCK launches whose kernel, grid and block change at every launch (no window ever
// repeats), each block followed by a stream sync, alternate between the exported
// cuLaunchKernel + cuStreamSynchronize (the shim's wrappers: recorded by the engine,
// the window judged at the sync) and the driver's own pair (bypassing the shim, which
// never sees those blocks: nothing is held, so nothing is reordered).  Only the launch
// calls are timed.  Prints nr_exported_blocks / nr_real_blocks (ns per launch of every
// block, in order: pairs are (i, i)) and inproc_bypassed.
#define NR_BLOCK 100
typedef CUresult (*sync_fn)(CUstream);

#include "nr_kernels.cuh"

static CUfunction g_nr[2];
static CUdeviceptr g_nr_buf;
static CUstream g_nr_stream;

static double nr_block(launch_fn launch, sync_fn sync, unsigned long long *rng)
{
    double t = 0;
    for (int j = 0; j < NR_BLOCK; j++) {
        unsigned long long r = (*rng += 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
        r ^= r >> 31;
        unsigned grid = 1 + (unsigned)(r % 64), block = 32u * (1 + (unsigned)(r >> 8) % 4);
        unsigned k = (unsigned)(r >> 32);
        void *params[] = {&g_nr_buf, &k};
        double t0 = now_ns();
        CUresult rc = launch(g_nr[(r >> 16) & 1], grid, 1, 1, block, 1, 1, 0, g_nr_stream,
                             params, NULL);
        t += now_ns() - t0;
        if (rc != CUDA_SUCCESS) {
            fprintf(stderr, "cuLaunchKernel failed: %d\n", (int)rc);
            exit(2);
        }
    }
    if (sync(g_nr_stream) != CUDA_SUCCESS) {
        fprintf(stderr, "cuStreamSynchronize failed\n");
        exit(2);
    }
    return t / NR_BLOCK;
}

static int nr_inproc(int blocks)
{
    launch_fn ex_launch = cuLaunchKernel, re_launch = (launch_fn)real_driver_fn("cuLaunchKernel");
    sync_fn ex_sync = cuStreamSynchronize, re_sync = (sync_fn)real_driver_fn("cuStreamSynchronize");
    cudaFunction_t f;
    if (!re_launch || !re_sync) {
        fprintf(stderr, "cannot find the driver's own functions\n");
        return 2;
    }
    CK(cudaGetFuncBySymbol(&f, (const void *)k_nr_a));
    g_nr[0] = (CUfunction)f;
    CK(cudaGetFuncBySymbol(&f, (const void *)k_nr_b));
    g_nr[1] = (CUfunction)f;
    CK(cudaMalloc((void **)&g_nr_buf, 64 * 128 * sizeof(unsigned)));
    CK(cudaStreamCreateWithFlags((cudaStream_t *)&g_nr_stream, cudaStreamNonBlocking));
    unsigned long long rng_ex = 1, rng_re = 1;
    double *ex = (double *)malloc((size_t)blocks * sizeof *ex);
    double *re = (double *)malloc((size_t)blocks * sizeof *re);
    if (!ex || !re)
        return 2;
    for (int b = 0; b < 100; b++) { // warm-up, both sides
        nr_block(ex_launch, ex_sync, &rng_ex);
        nr_block(re_launch, re_sync, &rng_re);
    }
    for (int b = 0; b < blocks; b++) {
        if (b & 1) { // alternate which side goes first
            re[b] = nr_block(re_launch, re_sync, &rng_re);
            ex[b] = nr_block(ex_launch, ex_sync, &rng_ex);
        } else {
            ex[b] = nr_block(ex_launch, ex_sync, &rng_ex);
            re[b] = nr_block(re_launch, re_sync, &rng_re);
        }
    }
    printf("nr_exported_blocks");
    for (int b = 0; b < blocks; b++)
        printf(" %.1f", ex[b]);
    printf("\nnr_real_blocks");
    for (int b = 0; b < blocks; b++)
        printf(" %.1f", re[b]);
    printf("\ninproc_bypassed %d\n", (void *)ex_launch != (void *)re_launch);
    return 0;
}
#endif

static inline void launch_one(void)
{
    if (g_drv) {
#ifdef AG_BENCH_DRV
        CUresult r = cuLaunchKernel(g_fn, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "cuLaunchKernel: %d\n", (int)r);
            exit(2);
        }
#endif
    } else {
        empty_kernel<<<1, 32>>>();
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "rt") && strcmp(argv[1], "drv") &&
                     strcmp(argv[1], "inproc") && strcmp(argv[1], "nrinproc"))) {
        fprintf(stderr, "usage: %s rt|drv|inproc|nrinproc [launches] [reps]\n", argv[0]);
        return 2;
    }
    g_drv = strcmp(argv[1], "rt") != 0;
#ifndef AG_BENCH_DRV
    if (g_drv) {
        fprintf(stderr, "%s: built without AG_BENCH_DRV (no libcuda link)\n", argv[0]);
        return 2;
    }
#endif
    long n = argc > 2 ? atol(argv[2]) : 100000;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (n < 256 || reps < 1 || reps > 100)
        return 2;
    CK(cudaFree(0));
#ifdef AG_BENCH_DRV
    cudaFunction_t f;
    CK(cudaGetFuncBySymbol(&f, (const void *)empty_kernel));
    g_fn = (CUfunction)f;
    if (!strcmp(argv[1], "inproc"))
        return inproc(n, reps);
    if (!strcmp(argv[1], "nrinproc"))
        return nr_inproc((int)(n / NR_BLOCK));
#endif

    for (int i = 0; i < WARMUP; i++)
        launch_one();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    double loop[100], call[100];
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            launch_one();
        CK(cudaDeviceSynchronize());
        loop[r] = (now_ns() - t0) / (double)n;

        double host = 0;
        long done = 0;
        while (done < n) {
            int batch = n - done < 256 ? (int)(n - done) : 256;
            double t = now_ns();
            for (int i = 0; i < batch; i++)
                launch_one();
            host += now_ns() - t;
            done += batch;
            CK(cudaDeviceSynchronize());
        }
        call[r] = host / (double)done;
    }
    CK(cudaGetLastError());
    printf("loop_reps");
    for (int r = 0; r < reps; r++)
        printf(" %.1f", loop[r]);
    printf("\ncall_reps");
    for (int r = 0; r < reps; r++)
        printf(" %.1f", call[r]);
    printf("\nloop_ns %.1f\ncall_ns %.1f\n", median(loop, reps), median(call, reps));
    printf("launches_total %ld\n", (long)WARMUP + 2L * reps * n);
    return 0;
}
