/* runtime_launch.c -- kernel launches through the runtime's launch calls, on the
 * simulator with the stand-in libcudart (tests/sim/cudart_stand_in.c).
 *
 * runtime_launch ITER [LOOPS]: three loops of ITER steps (LOOPS, a bit mask, picks
 * them: 7 by default), each step a window ended by a sync:
 *   1. a created stream: add_one through cudaLaunchKernel (a host stub) and scale
 *      through __cudaLaunchKernel (a function handle), six times, scale's factor
 *      flipping sign every step (patched args); every 9th step one more add_one on
 *      another buffer in the middle (a replay stops there);
 *   2. the per-thread default stream: the same through the _ptsz calls with stream 0;
 *   3. the legacy stream: cudaLaunchKernel with stream 0, ten times.
 * Prints the buffers' sums (stdout, the same with and without the shim), and on
 * stderr how many runtime calls it made and how many reached the stand-in.
 */
#include "prog.h"
#include "cudart_stand_in.h"

#define RT(call)                                                                      \
    do {                                                                              \
        int rt_rc_ = (call);                                                          \
        if (rt_rc_ != 0) {                                                            \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, rt_rc_); \
            exit(1);                                                                  \
        }                                                                             \
        made++;                                                                       \
    } while (0)

static const char stub_add_one = 0, stub_scale = 0;   /* host stubs: their addresses */
static unsigned long made;

static long sum_of(CUdeviceptr p)
{
    int host[PROG_N];
    CK(cuMemcpyDtoH(host, p, sizeof host));
    return prog_sum_int(host, PROG_N);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 40, n = PROG_N;
    int loops = argc > 2 ? atoi(argv[2]) : 7;
    struct dim3_like grid = { 1, 1, 1 }, block = { PROG_N, 1, 1 };
    CUcontext ctx;
    CUmodule mod;
    CUfunction add_one, scale;
    CUstream s;
    CUdeviceptr a, b, c;

    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    if (cudart_stand_in_register(&stub_add_one, add_one) ||
        cudart_stand_in_register(&stub_scale, scale))
        return 1;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&a, PROG_N * sizeof(int)));
    CK(cuMemAlloc(&b, PROG_N * sizeof(int)));
    CK(cuMemAlloc(&c, PROG_N * sizeof(int)));
    CK(cuMemsetD32(a, 0, PROG_N));
    CK(cuMemsetD32(b, 0, PROG_N));
    CK(cuMemsetD32(c, 0, PROG_N));
    for (int it = 0; it < iters && (loops & 1); it++) {
        int flip = it & 1 ? -1 : 1;
        void *pa[] = { &a, &n }, *pc[] = { &c, &n }, *sa[] = { &a, &flip, &n };
        for (int k = 0; k < 6; k++) {
            RT(cudaLaunchKernel(&stub_add_one, grid, block, pa, 0, s));
            if (k == 3 && it % 9 == 8)
                RT(cudaLaunchKernel(&stub_add_one, grid, block, pc, 0, s));
            RT(__cudaLaunchKernel(scale, grid, block, sa, 0, s));
        }
        CK(cuStreamSynchronize(s));
    }
    for (int it = 0; it < iters && (loops & 2); it++) {
        int third = it % 3 ? 1 : -1;
        void *pb[] = { &b, &n }, *sb[] = { &b, &third, &n };
        for (int k = 0; k < 4; k++) {
            RT(cudaLaunchKernel_ptsz(&stub_add_one, grid, block, pb, 0, NULL));
            RT(__cudaLaunchKernel_ptsz(scale, grid, block, sb, 0, NULL));
        }
        CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    }
    for (int it = 0; it < iters && (loops & 4); it++) {
        void *pc[] = { &c, &n };
        for (int k = 0; k < 10; k++)
            RT(cudaLaunchKernel(&stub_add_one, grid, block, pc, 0, NULL));
        CK(cuCtxSynchronize());
    }
    printf("runtime_launch: sums %ld %ld %ld\n", sum_of(a), sum_of(b), sum_of(c));
    fprintf(stderr, "runtime_launch: runtime calls %lu, reached the runtime %lu\n", made,
            cudart_stand_in_calls());
    return 0;
}
