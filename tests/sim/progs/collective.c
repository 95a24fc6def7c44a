/* collective.c -- a loop with a collective kernel in its window, on the simulator: the
 * shim must never hold a collective past its own call (issue 32).
 *
 * collective MODE ITER [KERNEL]: ITER iterations of launches on a created stream s, two
 * of them collectives: a kernel named KERNEL (default ncclDevKernel_AllReduce_Sum_i32,
 * as NCCL's), launched once with cuLaunchKernelEx and a packed `extra` buffer (as NCCL
 * 2.19 and later do) and once with cuLaunchKernel and kernelParams (as cudart does for
 * older NCCL), launches before, between and after them.  A real collective waits on the
 * GPU for the other ranks; here it counts its runs in device memory.  The simulator runs
 * work at its submission, so right after each collective's call the program reads the
 * count (host memory in the simulator, no CUDA call): a collective the shim held is not
 * counted yet.  MODE:
 *   sync     a cuStreamSynchronize(s) after each iteration
 *   period   no sync until the end (period detection cuts the run)
 *   paced    as sync, the program busy 5 us before each call (paced chunks, launched
 *            by the launcher thread)
 *   streams  as sync, the collectives on a second stream s2 forked from s and joined
 *            back by events, with launches on s beside them
 *   streams-period   as streams, with no sync until the end (DDP's buckets without a
 *            loss.item(): period detection cuts a run that forks and joins streams)
 *   ddp      a DDP training step with no sync until the end: a memset of the
 *            gradients, a forward of 4 identical blocks of 4 launches (4 shapes, as a
 *            transformer block's kernels differ), a backward of 4
 *            blocks of 3 other launches whose gradient buckets (after blocks 2 and 4)
 *            go to a collective on s2 forked from s, the join, an optimizer of 3
 *            launches; the first step also makes the optimizer's state (2 memsets)
 * stdout: the buffers' sums (the same with and without the shim); stderr:
 * "collective: calls N, late L" (L: collectives not run when their call returned).
 */
#include "prog.h"

#include <string.h>
#include <time.h>

/* coll(int *count, int *data, int n): count[0] += 1; data = data * 3 % 1000 + count[0] */
static void prog_coll(sim_dim3 grid, sim_dim3 block, void **params)
{
    int *count = DEVPTR(int, params, 0);
    int *data = DEVPTR(int, params, 1);
    int n = PARAM(int, params, 2);
    count[0] += 1;
    for (size_t i = 0; i < SIM_THREADS_X(grid, block) && i < (size_t)n; i++)
        data[i] = data[i] * 3 % 1000 + count[0];
}
static const size_t prog_coll_sizes[] = { sizeof(CUdeviceptr), sizeof(CUdeviceptr), sizeof(int) };

static CUfunction add_one, add_two, scale, coll;
static CUstream s, s2;
static CUevent e1, e2;
static CUdeviceptr a, b, count;
static int busy, calls, late;

static void before_call(void)
{
    if (busy)
        prog_busy_us(busy);
}

/* One launch of f(p, n), or of scale(p, 1, n) when f is scale. */
static void launch_on(CUfunction f, CUdeviceptr *p, CUstream st)
{
    int n = PROG_N, one = 1;
    void *params[] = { p, &n }, *scale_params[] = { p, &one, &n };
    before_call();
    CK(cuLaunchKernel(f, 1, 1, 1, PROG_N, 1, 1, 0, st, f == scale ? scale_params : params,
                      NULL));
}

/* The same as add(p, st), in 2 blocks of half as many threads: another shape. */
static void add_split(CUdeviceptr *p, CUstream st)
{
    int n = PROG_N;
    void *params[] = { p, &n };
    before_call();
    CK(cuLaunchKernel(add_one, 2, 1, 1, PROG_N / 2, 1, 1, 0, st, params, NULL));
}

static void add(CUdeviceptr *p, CUstream st)
{
    launch_on(add_one, p, st);
}

/* Whether the collective just called has run: the count is its runs so far. */
static void check_ran(void)
{
    calls++;
    late += *(volatile int *)(uintptr_t)count != calls;
}

/* The collective on data, as NCCL launches it: cuLaunchKernelEx, a packed buffer. */
static void coll_ex(CUdeviceptr data, CUstream st)
{
    struct { CUdeviceptr count, data; int n, pad; } args;
    size_t size = sizeof args;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE,
                      &size, CU_LAUNCH_PARAM_END };
    CUlaunchConfig config = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                              .blockDimX = PROG_N, .blockDimY = 1, .blockDimZ = 1,
                              .hStream = st };
    memset(&args, 0, sizeof args);
    args.count = count, args.data = data, args.n = PROG_N;
    before_call();
    CK(cuLaunchKernelEx(&config, coll, NULL, extra));
    check_ran();
}

/* The collective on data through cuLaunchKernel and kernelParams. */
static void coll_params(CUdeviceptr *data, CUstream st)
{
    int n = PROG_N;
    void *params[] = { &count, data, &n };
    before_call();
    CK(cuLaunchKernel(coll, 1, 1, 1, PROG_N, 1, 1, 0, st, params, NULL));
    check_ran();
}

/* One iteration on s: 3 launches, a collective, 2 launches, a collective, 2 launches. */
static void one_stream(void)
{
    for (int k = 0; k < 3; k++)
        add(&a, s);
    coll_ex(a, s);
    add(&a, s);
    add(&a, s);
    coll_params(&a, s);
    add(&a, s);
    add(&a, s);
}

/* One iteration on s and s2: s2 forked from s, its collectives beside launches on s,
 * then joined back. */
static void two_streams(void)
{
    add(&a, s);
    add(&a, s);
    CK(cuEventRecord(e1, s));
    CK(cuStreamWaitEvent(s2, e1, 0));
    add(&b, s2);
    coll_ex(b, s2);
    add(&a, s);
    add(&a, s);
    add(&b, s2);
    coll_params(&b, s2);
    add(&a, s);
    CK(cuEventRecord(e2, s2));
    CK(cuStreamWaitEvent(s, e2, 0));
    add(&a, s);
    add(&a, s);
}

/* A gradient bucket's all-reduce: s2 forked from s, the collective, joined back. */
static void bucket(void)
{
    CK(cuEventRecord(e1, s));
    CK(cuStreamWaitEvent(s2, e1, 0));
    coll_ex(b, s2);
    CK(cuEventRecord(e2, s2));
}

/* One DDP training step (mode ddp): forward, backward with buckets, optimizer. */
static void ddp_step(int it)
{
    if (it == 0) {                              /* the optimizer's state */
        CK(cuMemsetD32Async(a, 0, PROG_N, s));
        CK(cuMemsetD32Async(a, 0, PROG_N, s));
    }
    CK(cuMemsetD32Async(b, 0, PROG_N, s));      /* zero_grad */
    for (int blk = 0; blk < 4; blk++) {         /* forward */
        launch_on(add_one, &a, s);
        launch_on(scale, &a, s);
        launch_on(add_two, &a, s);
        add_split(&a, s);
    }
    launch_on(scale, &a, s);                    /* the loss */
    for (int blk = 0; blk < 4; blk++) {         /* backward */
        launch_on(scale, &b, s);
        launch_on(add_two, &b, s);
        launch_on(add_two, &b, s);
        if (blk % 2 == 1)
            bucket();
    }
    CK(cuStreamWaitEvent(s, e2, 0));            /* DDP waits for its all-reduces */
    for (int k = 0; k < 3; k++)                 /* optimizer */
        launch_on(k == 1 ? add_two : add_one, &a, s);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *name = argc > 3 ? argv[3] : "ncclDevKernel_AllReduce_Sum_i32";
    int iters = argc > 2 ? atoi(argv[2]) : 0, host[PROG_N];
    int both = !strcmp(mode, "streams-period"), ddp = !strcmp(mode, "ddp");
    int period = both || ddp || !strcmp(mode, "period");
    int streams = both || !strcmp(mode, "streams");
    CUcontext ctx;
    CUmodule mod;

    if ((!period && !streams && strcmp(mode, "sync") && strcmp(mode, "paced")) ||
        iters <= 0) {
        fprintf(stderr, "usage: collective sync|period|paced|streams|streams-period|ddp "
                "ITER [KERNEL]\n");
        return 2;
    }
    busy = !strcmp(mode, "paced") ? 5 : 0;
    prog_setup(&ctx, &mod);
    if (sim_register_kernel(name, prog_coll, 3, prog_coll_sizes))
        return 1;
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&add_two, mod, "add_two"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuModuleGetFunction(&coll, mod, name));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&a, sizeof host));
    CK(cuMemAlloc(&b, sizeof host));
    CK(cuMemAlloc(&count, sizeof(int)));
    CK(cuMemsetD32(a, 0, PROG_N));
    CK(cuMemsetD32(b, 0, PROG_N));
    CK(cuMemsetD32(count, 0, 1));
    for (int it = 0; it < iters; it++) {
        if (ddp)
            ddp_step(it);
        else if (streams)
            two_streams();
        else
            one_stream();
        if (!period)
            CK(cuStreamSynchronize(s));
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(host, a, sizeof host));
    printf("collective: a sum %ld", prog_sum_int(host, PROG_N));
    CK(cuMemcpyDtoH(host, b, sizeof host));
    printf(", b sum %ld\n", prog_sum_int(host, PROG_N));
    fprintf(stderr, "collective: calls %d, late %d\n", calls, late);
    return 0;
}
