/* cycle_shapes.c -- an inference loop whose shape cycles (tests/bats/engine_sim.bats):
 *
 *   cycle_shapes [ITER]
 *
 * Each iteration: a one-op window (a memset of one word, then cuStreamSynchronize: an
 * upload, futile for the engine), then 16 launches on a created stream whose shape
 * depends on the iteration mod 8 (the grid of the first launch, which launch is scale
 * instead of add_one: a batch size cycling 1..8), then cuStreamSynchronize.  No two
 * windows in a row are alike.  stdout: "sum N" over the buffer at the end.
 */
#include "prog.h"
int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one, scale; CUstream s;
    CUdeviceptr a; int n = PROG_N, minus = -1, iters = argc > 1 ? atoi(argv[1]) : 200;
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemsetD32(a, 1, PROG_N));
    for (int it = 0; it < iters; it++) {
        int bs = it % 8;
        CK(cuMemsetD32Async(a + 4 * (it % 4), (unsigned)it, 1, s));
        CK(cuStreamSynchronize(s));
        for (int k = 0; k < 16; k++) {
            void *aa[] = { &a, &n }, *sa[] = { &a, &minus, &n };
            if ((k & 7) == bs)
                CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, s, sa, NULL));
            else
                CK(cuLaunchKernel(add_one, 1 + (k == 0 ? bs : 0), 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
        }
        CK(cuStreamSynchronize(s));
    }
    int h[PROG_N]; CK(cuMemcpyDtoH(h, a, sizeof h)); long long sum = 0;
    for (int i = 0; i < PROG_N; i++) sum += h[i];
    printf("sum %lld\n", sum);
    return 0;
}
