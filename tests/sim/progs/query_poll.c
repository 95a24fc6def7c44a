/* query_poll.c -- a loop whose host polls work the loop does not hold (engine_sim.bats:
 * queries that can see nothing held end no window):
 *
 *   query_poll [ITER] [spin]
 *
 * Each iteration: 24 launches on a created stream s, with, after a number of them that
 * changes every iteration, a cuStreamQuery of another created stream s2 and a
 * cuEventQuery of an event recorded on s2 (as a watchdog polls a communication
 * stream); every 50th iteration also a cuEventQuery of an event just recorded on s
 * (it sees held work: the window must end there); then cuStreamSynchronize(s).  stdout:
 * "sum N" over the buffer and the number of queries that returned CUDA_SUCCESS.
 * With `spin` the loop never synchronizes: the host spins on cuEventQuery of the
 * event recorded on s until it returns CUDA_SUCCESS, as a program that polls does.
 */
#include "prog.h"

#include <string.h>

int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one; CUstream s, s2; CUevent e_s, e_s2;
    CUdeviceptr a; int n = PROG_N, iters = argc > 1 ? atoi(argv[1]) : 200, ready = 0;
    int spin = argc > 2 && strcmp(argv[2], "spin") == 0;
    void *aa[] = { &a, &n };
    int h[PROG_N];
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamCreate(&s2, 0));
    CK(cuEventCreate(&e_s, 0));
    CK(cuEventCreate(&e_s2, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemsetD32(a, 0, PROG_N));
    CK(cuEventRecord(e_s2, s2));
    for (int it = 0; it < iters; it++) {
        int poll_at = (it * 7) % 24;
        for (int k = 0; k < 24; k++) {
            if (k == poll_at) {
                ready += cuStreamQuery(s2) == CUDA_SUCCESS;
                ready += cuEventQuery(e_s2) == CUDA_SUCCESS;
            }
            CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
            if (k == 20)
                CK(cuEventRecord(e_s, s));
            if (k == 21 && it % 50 == 49)
                ready += cuEventQuery(e_s) == CUDA_SUCCESS;   /* sees held work */
        }
        if (spin)
            while (cuEventQuery(e_s) == CUDA_ERROR_NOT_READY)
                ;
        else
            CK(cuStreamSynchronize(s));
    }
    CK(cuMemcpyDtoH(h, a, sizeof h));
    printf("sum %ld ready %d\n", prog_sum_int(h, PROG_N), ready);
    return 0;
}
