// launch_bench.cu -- a launch-bound loop for measuring the shim's passthrough cost.
//
//   launch_bench MODE [launches] [reps]   MODE: rt (<<<>>>) | drv (cuLaunchKernel) | inproc
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

// The driver's own cuLaunchKernel, past any dlsym interposer.
static launch_fn real_cuLaunchKernel(void)
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
    return real_dlsym && cuda ? (launch_fn)real_dlsym(cuda, "cuLaunchKernel") : NULL;
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
    launch_fn exported = cuLaunchKernel, real = real_cuLaunchKernel();
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
                     strcmp(argv[1], "inproc"))) {
        fprintf(stderr, "usage: %s rt|drv|inproc [launches] [reps]\n", argv[0]);
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
