/* log_replay.c -- the log normal form: runs the same iteration twice, the
 * second time either eagerly ("eager") or captured into a graph and launched
 * ("graph").  With SIM_LOG_GRAPH=plain and SIM_LOG_SKIP=event both logs must be
 * identical (events used for fork/join are not graph nodes, so they only
 * appear eagerly); with SIM_LOG_GRAPH=marked the graph's lines carry "g:".
 * The iteration forks onto a second stream, joins back, and allocates and
 * frees stream-ordered memory.
 */
#include "prog.h"

#include <string.h>

static CUfunction saxpy, add_one;
static CUstream s1, s2;
static CUevent fork_ev, join_ev;
static CUdeviceptr x, y, a;
static int host_calls;

static void on_host(void *user)
{
    (void)user;
    host_calls++;
}

static void iteration(const float *hx)
{
    CUdeviceptr tmp;
    float alpha = 0.5f;
    int n = PROG_N;
    void *saxpy_args[] = { &alpha, &x, &y, &n }, *add_args[] = { &tmp, &n };

    CK(cuMemAllocAsync(&tmp, PROG_N * sizeof(int), s1));
    CK(cuMemsetD32Async(tmp, 7, PROG_N, s1));
    CK(cuMemcpyHtoDAsync(x, hx, PROG_N * sizeof(float), s1));
    CK(cuEventRecord(fork_ev, s1));
    CK(cuStreamWaitEvent(s2, fork_ev, 0));
    CK(cuLaunchKernel(saxpy, 1, 1, 1, PROG_N, 1, 1, 0, s2, saxpy_args, NULL));
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s1, add_args, NULL));
    CK(cuEventRecord(join_ev, s2));
    CK(cuStreamWaitEvent(s1, join_ev, 0));
    CK(cuMemcpyDtoDAsync(a, tmp, PROG_N * sizeof(int), s1));
    CK(cuMemFreeAsync(tmp, s1));
    CK(cuLaunchHostFunc(s1, on_host, NULL));
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUmodule mod;
    float hx[PROG_N], hy[PROG_N];
    int ha[PROG_N];
    int graph = argc > 1 && strcmp(argv[1], "graph") == 0;

    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&saxpy, mod, "saxpy"));
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuStreamCreate(&s1, 0));
    CK(cuStreamCreate(&s2, 0));
    CK(cuEventCreate(&fork_ev, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&join_ev, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&x, sizeof hx));
    CK(cuMemAlloc(&y, sizeof hy));
    CK(cuMemAlloc(&a, sizeof ha));
    CK(cuMemsetD32(y, 0, PROG_N));
    for (int i = 0; i < PROG_N; i++)
        hx[i] = (float)i;

    iteration(hx);
    if (graph) {
        CUgraph g;
        CUgraphExec exec;
        CK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
        iteration(hx);
        CK(cuStreamEndCapture(s1, &g));
        CK(cuGraphInstantiate(&exec, g, 0));
        CK(cuGraphLaunch(exec, s1));
    } else {
        iteration(hx);
    }
    CK(cuStreamSynchronize(s1));
    CK(cuMemcpyDtoH(hy, y, sizeof hy));
    CK(cuMemcpyDtoH(ha, a, sizeof ha));
    printf("log_replay: sum(y)=%.1f sum(a)=%ld host_calls=%d\n", prog_sum_float(hy, PROG_N),
           prog_sum_int(ha, PROG_N), host_calls);
    return 0;
}
