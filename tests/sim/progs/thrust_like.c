/* thrust_like.c -- the driver calls of a Thrust transform-and-reduce loop, as
 * samples_prog --mode thrust makes them on a GPU: per iteration, on the legacy stream,
 * a kernel and a synchronize (thrust::transform), then cuMemAlloc of a temporary, two
 * kernels, a copy of the sum into a stack variable, a synchronize, cuMemFree, a
 * synchronize (thrust::reduce).  Nothing in it can be graphed: windows of one to three
 * ops between synchronizations, and an allocation in each.  For measuring what the
 * shim costs where it can only step aside (make bench-cold, callgrind).
 *
 *   thrust_like [ITER [STEPS [SLEEP_MS]]]
 *
 * Then, after SLEEP_MS (default 0; longer than the speed guard's longest idle pause:
 * its next look comes at the first synchronize), STEPS (default 0) steps that can be
 * graphed: 12 launches and a synchronize each.  stdout: "sum N" over every
 * value read back and the buffer at the end.
 */
#include "prog.h"
int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one; CUdeviceptr a, t;
    int n = PROG_N, iters = argc > 1 ? atoi(argv[1]) : 2000, steps = argc > 2 ? atoi(argv[2]) : 0;
    long sleep_ms = argc > 3 ? atol(argv[3]) : 0;
    long long sum = 0;
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemsetD32(a, 0, PROG_N));
    for (int it = 0; it < iters; it++) {
        void *aa[] = { &a, &n };
        CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, 0, aa, NULL));
        CK(cuStreamSynchronize(0));
        CK(cuMemAlloc(&t, PROG_N * 4 * (1 + it % 2)));
        void *ta[] = { &t, &n };
        CK(cuMemcpyDtoDAsync(t, a, PROG_N * 4, 0));
        CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, 0, ta, NULL));
        int v;
        CK(cuMemcpyDtoHAsync(&v, t, sizeof v, 0));
        CK(cuStreamSynchronize(0));
        CK(cuMemFree(t));
        CK(cuStreamSynchronize(0));
        sum += v;
    }
    struct timespec pause = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };
    nanosleep(&pause, NULL);
    for (int st = 0; st < steps; st++) {
        void *aa[] = { &a, &n };
        for (int k = 0; k < 12; k++)
            CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, 0, aa, NULL));
        CK(cuStreamSynchronize(0));
    }
    int h[PROG_N];
    CK(cuMemcpyDtoH(h, a, sizeof h));
    for (int i = 0; i < PROG_N; i++)
        sum += h[i];
    printf("sum %lld\n", sum);
    return 0;
}
