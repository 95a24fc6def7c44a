/* futile_pair.c -- a loop of two windows the engine cannot graph (tests/bats/
 * engine_sim.bats): a one-word memset, cuStreamSynchronize, then KERNELS (default 3,
 * fewer than AUTOGRAPH_MIN_OPS) launches of add_one, cuStreamSynchronize.
 *
 *   futile_pair [ITER [KERNELS]]
 *
 * The second window is longer than the first: skimming that started after the first
 * is outgrown by it, and the first is "followed" until the second turns out futile too
 * (match_futile.c); then both are skimmed.  stdout: "sum N" over the buffer at the end.
 */
#include "prog.h"
int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one; CUstream s; CUdeviceptr a;
    int n = PROG_N, iters = argc > 1 ? atoi(argv[1]) : 200, kernels = argc > 2 ? atoi(argv[2]) : 3;
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    for (int it = 0; it < iters; it++) {
        CK(cuMemsetD32Async(a, (unsigned)it, 1, s));
        CK(cuStreamSynchronize(s));
        for (int k = 0; k < kernels; k++) {
            void *aa[] = { &a, &n };
            CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
        }
        CK(cuStreamSynchronize(s));
    }
    int h[PROG_N]; CK(cuMemcpyDtoH(h, a, sizeof h)); long long sum = 0;
    for (int i = 0; i < PROG_N; i++) sum += h[i];
    printf("sum %lld\n", sum);
    return 0;
}
