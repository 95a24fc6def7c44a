/* branches.c -- a fork-join workload with many independent branches, for the trace
 * tests on the simulator (tests/bats/trace_sim.bats; the GPU twin is
 * tests/gpu/branches_prog.cu).
 *
 *   branches ITER [B] [K]
 *
 * B branches (default 12, 2..16) of K kernels each (default 3): each iteration,
 * add_one(a[0]) on s0, an event there that streams s1..s(B-1) wait for, K add_one
 * (or scale by -1 every second one) on each branch's own buffer (s0 is branch 0),
 * an event on every branch that s0 waits for, a memset of the scratch buffer on s0,
 * then cuStreamSynchronize(s0).  A final cuMemcpyDtoH per buffer; stdout: the sums.
 */
#include "prog.h"

#define MAX_BRANCHES 16

static CUfunction add_one, scale;
static CUstream streams[MAX_BRANCHES];
static CUevent fork_ev, join_ev[MAX_BRANCHES];
static CUdeviceptr bufs[MAX_BRANCHES], scratch;
static int n = PROG_N;

static void branch(int b, int k_count)
{
    int minus = -1;
    void *a_args[] = { &bufs[b], &n }, *s_args[] = { &bufs[b], &minus, &n };
    for (int k = 0; k < k_count; k++) {
        if (k % 2)
            CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, streams[b], s_args, NULL));
        else
            CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, streams[b], a_args, NULL));
    }
}

static void iteration(int b_count, int k_count)
{
    void *a_args[] = { &bufs[0], &n };
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, streams[0], a_args, NULL));
    CK(cuEventRecord(fork_ev, streams[0]));
    for (int b = 1; b < b_count; b++)
        CK(cuStreamWaitEvent(streams[b], fork_ev, 0));
    for (int b = 0; b < b_count; b++) {
        branch(b, k_count);
        if (b > 0)
            CK(cuEventRecord(join_ev[b], streams[b]));
    }
    for (int b = 1; b < b_count; b++)
        CK(cuStreamWaitEvent(streams[0], join_ev[b], 0));
    CK(cuMemsetD32Async(scratch, 7u, PROG_N, streams[0]));
    CK(cuStreamSynchronize(streams[0]));
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUmodule mod;
    int iters = argc > 1 ? atoi(argv[1]) : 0, b_count = argc > 2 ? atoi(argv[2]) : 12;
    int k_count = argc > 3 ? atoi(argv[3]) : 3, host[PROG_N];

    if (iters <= 0 || b_count < 2 || b_count > MAX_BRANCHES || k_count < 1) {
        fprintf(stderr, "usage: branches ITER [B (2..%d)] [K (>= 1)]\n", MAX_BRANCHES);
        return 2;
    }
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuEventCreate(&fork_ev, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&scratch, PROG_N * 4));
    for (int b = 0; b < b_count; b++) {
        CK(cuStreamCreate(&streams[b], CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate(&join_ev[b], CU_EVENT_DISABLE_TIMING));
        CK(cuMemAlloc(&bufs[b], PROG_N * 4));
        CK(cuMemsetD32(bufs[b], (unsigned)b, PROG_N));
    }
    for (int it = 0; it < iters; it++)
        iteration(b_count, k_count);
    for (int b = 0; b < b_count; b++) {
        CK(cuMemcpyDtoH(host, bufs[b], sizeof host));
        printf("branches: buffer %d sum %ld\n", b, prog_sum_int(host, PROG_N));
    }
    return 0;
}
