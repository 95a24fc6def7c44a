/* churn.c -- the driver calls of loops that make and destroy their CUDA objects every
 * iteration, as tests/gpu/churn_prog.cu makes them on a GPU: the shim must keep their
 * results exact, whatever handles the driver gives the new objects (the old ones'
 * again, or others).
 *
 *   churn MODE [ITER]
 *
 *   events   cuEventCreate of start and stop, a record of start, 5 launches on the
 *            legacy stream, a record of stop, cuEventSynchronize, cuEventElapsedTime,
 *            cuMemcpyDtoH of the buffer into a stack array, cuEventDestroy of both
 *   streams  cuStreamCreate (non-blocking), 5 launches on it, cuMemcpyDtoHAsync into
 *            pinned memory, cuStreamSynchronize, cuStreamDestroy
 *   pinned   cuMemAllocHost of a buffer (two sizes in turn), the host fills it,
 *            cuMemcpyHtoDAsync, 4 launches, cuMemcpyDtoHAsync back into it, a
 *            synchronize of the legacy stream, the host reads it, cuMemFreeHost
 *
 * ITER: iterations (default 300).  stdout: "sum N" over every value read back.
 */
#include <string.h>

#include "prog.h"

static CUfunction add_one, add_two, scale;
static int n = PROG_N;

/* 4 launches on s over a (add_one, scale by 3, add_two, add_one) */
static void step(CUstream s, CUdeviceptr *a)
{
    int three = 3;
    void *one[] = { a, &n }, *sc[] = { a, &three, &n };
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, one, NULL));
    CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, s, sc, NULL));
    CK(cuLaunchKernel(add_two, 1, 1, 1, PROG_N, 1, 1, 0, s, one, NULL));
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, one, NULL));
}

static long run_events(CUdeviceptr a, int iters)
{
    long sum = 0;
    for (int it = 0; it < iters; it++) {
        CUevent start, stop;
        int h[PROG_N];
        float ms = -1;
        CK(cuEventCreate(&start, CU_EVENT_DEFAULT));
        CK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
        CK(cuEventRecord(start, 0));
        step(0, &a);
        void *one[] = { &a, &n };
        CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, 0, one, NULL));
        CK(cuEventRecord(stop, 0));
        CK(cuEventSynchronize(stop));
        CK(cuEventElapsedTime(&ms, start, stop));
        if (!(ms >= 0)) {
            fprintf(stderr, "churn: elapsed time %g\n", (double)ms);
            exit(1);
        }
        CK(cuMemcpyDtoH(h, a, sizeof h));
        sum += prog_sum_int(h, PROG_N) % 1000003;
        CK(cuEventDestroy(start));
        CK(cuEventDestroy(stop));
        CK(cuMemsetD32(a, (unsigned)it, PROG_N));  /* keeps the values small */
    }
    return sum;
}

static long run_streams(CUdeviceptr a, int iters)
{
    long sum = 0;
    int *h;
    CK(cuMemAllocHost((void **)&h, PROG_N * sizeof *h));
    for (int it = 0; it < iters; it++) {
        CUstream s;
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CK(cuMemsetD32Async(a, (unsigned)it, PROG_N, s));
        step(s, &a);
        void *one[] = { &a, &n };
        CK(cuLaunchKernel(add_two, 1, 1, 1, PROG_N, 1, 1, 0, s, one, NULL));
        CK(cuMemcpyDtoHAsync(h, a, PROG_N * sizeof *h, s));
        CK(cuStreamSynchronize(s));
        sum += prog_sum_int(h, PROG_N) % 1000003;
        CK(cuStreamDestroy(s));
    }
    CK(cuMemFreeHost(h));
    return sum;
}

static long run_pinned(CUdeviceptr a, int iters)
{
    long sum = 0;
    for (int it = 0; it < iters; it++) {
        int words = (it & 1) ? PROG_N : PROG_N / 2, *h;
        CK(cuMemAllocHost((void **)&h, (size_t)words * sizeof *h));
        for (int i = 0; i < words; i++)
            h[i] = (i * 7 + it) % 101;
        CK(cuMemcpyHtoDAsync(a, h, (size_t)words * sizeof *h, 0));
        step(0, &a);
        CK(cuMemcpyDtoHAsync(h, a, (size_t)words * sizeof *h, 0));
        CK(cuStreamSynchronize(0));
        sum += prog_sum_int(h, words) % 1000003;
        CK(cuMemFreeHost(h));
    }
    return sum;
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUmodule mod;
    CUdeviceptr a;
    const char *mode = argc > 1 ? argv[1] : "";
    int iters = argc > 2 ? atoi(argv[2]) : 300;
    long sum;
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&add_two, mod, "add_two"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuMemAlloc(&a, PROG_N * sizeof(int)));
    CK(cuMemsetD32(a, 1, PROG_N));
    if (!strcmp(mode, "events"))
        sum = run_events(a, iters);
    else if (!strcmp(mode, "streams"))
        sum = run_streams(a, iters);
    else if (!strcmp(mode, "pinned"))
        sum = run_pinned(a, iters);
    else {
        fprintf(stderr, "usage: churn events|streams|pinned [ITER]\n");
        return 2;
    }
    int h[PROG_N];
    CK(cuMemcpyDtoH(h, a, sizeof h));
    printf("sum %ld\n", sum + prog_sum_int(h, PROG_N));
    return 0;
}
