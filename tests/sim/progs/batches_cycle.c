/* batches_cycle.c -- an inference loop shaped like PyTorch's with a batch size cycling
 * 1..8 (tests/bats/engine_sim.bats):
 *
 *   batches_cycle [ITER [SPLIT]]
 *
 * Each iteration: a pageable upload of the batch (cuMemcpyHtoDAsync from the stack,
 * then cuStreamSynchronize, as x.to("cuda") does), then 9 "GEMMs" (add_one, or add_two
 * for batch sizes below SPLIT, default 2: cuBLAS picks another kernel for small
 * batches; the last one's grid is the batch size) with a "ReLU" (scale by 1) after each
 * but the last, then a pageable download of the output (cuMemcpyDtoHAsync to the stack,
 * cuStreamSynchronize, as out.cpu() does), summed on the host.
 * stdout: "sum N" over every download and the buffer at the end.
 */
#include "prog.h"
int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one, add_two, scale; CUstream s;
    CUdeviceptr a; int n = PROG_N, one = 1;
    int iters = argc > 1 ? atoi(argv[1]) : 200, split = argc > 2 ? atoi(argv[2]) : 2;
    int layers = 9;
    long long sum = 0;
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&add_two, mod, "add_two"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemsetD32(a, 1, PROG_N));
    for (int it = 0; it < iters; it++) {
        int bs = 1 + it % 8, in[8], out[8];
        for (int i = 0; i < bs; i++)
            in[i] = it + i;
        CK(cuMemcpyHtoDAsync(a, in, bs * sizeof(int), s));
        CK(cuStreamSynchronize(s));
        for (int k = 0; k < layers; k++) {
            void *aa[] = { &a, &n }, *sa[] = { &a, &one, &n };
            CK(cuLaunchKernel(bs < split ? add_two : add_one, k == layers - 1 ? bs : 4, 1,
                              1, PROG_N / 4, 1, 1, 0, s, aa, NULL));
            if (k < layers - 1)
                CK(cuLaunchKernel(scale, 2, 1, 1, PROG_N / 2, 1, 1, 0, s, sa, NULL));
        }
        CK(cuMemcpyDtoHAsync(out, a, bs * sizeof(int), s));
        CK(cuStreamSynchronize(s));
        for (int i = 0; i < bs; i++)
            sum += out[i];
    }
    int h[PROG_N]; CK(cuMemcpyDtoH(h, a, sizeof h));
    for (int i = 0; i < PROG_N; i++) sum += h[i];
    printf("sum %lld\n", sum);
    return 0;
}
