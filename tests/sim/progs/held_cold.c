/* held_cold.c -- held launches with the caches cold between them, on the simulator
 * (tests/bench/cold_bench.sh counts the cache lines the shim misses per held launch).
 *
 * held_cold WINDOWS rt|drv [cold]: WINDOWS windows of 20 launches of add_one on a
 * created stream, each window ended by a sync; rt launches through cudaLaunchKernel
 * (the stand-in libcudart, tests/sim/cudart_stand_in.c), drv through cuLaunchKernel.
 * Before each launch (cold, the default, 1) it writes 1 MiB of its own, evicting the
 * caches as a Python program does between two PyTorch ops, then rewrites 32 KiB of
 * the stack below its own frame (the launch path's stack is warm in a real program,
 * so its frames do not count).  Prints the sum of the buffer (the same with and
 * without the shim).
 */
#include "prog.h"
#include "cudart_stand_in.h"

#include <string.h>

static const char stub_add_one = 0;
static unsigned char evict_buf[1 << 20];

static void __attribute__((noinline)) warm_stack(void)
{
    volatile char buf[32768];
    for (size_t i = 0; i < sizeof buf; i += 64)
        buf[i] = 0;
}

static void evict(void)
{
    for (size_t i = 0; i < sizeof evict_buf; i += 64)
        evict_buf[i]++;
    warm_stack();
}

int main(int argc, char **argv)
{
    int windows = argc > 1 ? atoi(argv[1]) : 100, n = PROG_N;
    int rt = argc > 2 && !strcmp(argv[2], "rt"), cold = argc > 3 ? atoi(argv[3]) : 1;
    struct dim3_like grid = { 1, 1, 1 }, block = { PROG_N, 1, 1 };
    CUcontext ctx;
    CUmodule mod;
    CUfunction add_one;
    CUstream s;
    CUdeviceptr a;
    int host[PROG_N];

    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    if (cudart_stand_in_register(&stub_add_one, add_one))
        return 1;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&a, PROG_N * sizeof(int)));
    CK(cuMemsetD32(a, 0, PROG_N));
    for (int w = 0; w < windows; w++) {
        void *pa[] = { &a, &n };
        for (int k = 0; k < 20; k++) {
            if (cold)
                evict();
            if (rt) {
                if (cudaLaunchKernel(&stub_add_one, grid, block, pa, 0, s) != 0)
                    return 1;
            } else {
                CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, pa, NULL));
            }
        }
        CK(cuStreamSynchronize(s));
    }
    CK(cuMemcpyDtoH(host, a, sizeof host));
    printf("held_cold: sum %ld\n", prog_sum_int(host, PROG_N));
    return 0;
}
