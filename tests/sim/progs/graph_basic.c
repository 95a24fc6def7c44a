/* graph_basic.c -- the program's own graphs: a fork/join stream capture, an
 * explicit graph (memset, kernel, host, memcpy, empty nodes), instantiate,
 * launch, whole-graph update (same and changed topology), per-node parameter
 * updates, and an illegal call inside a global-mode capture.
 * Counts (tests/bats/sim.bats relies on them): cuLaunchKernel 3 (all captured),
 * cuGraphLaunch 6, cuGraphInstantiateWithFlags 2.
 */
#include "prog.h"

#include <string.h>

static int host_calls;

static void on_host(void *user)
{
    host_calls += *(int *)user;
}

static CUfunction add_one, scale;
static int n = PROG_N;

static CUDA_KERNEL_NODE_PARAMS kernel_params(CUfunction f, void **args)
{
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = PROG_N, p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
    return p;
}

static void print_graph(const char *what, CUgraph g)
{
    CUgraphNode nodes[16];
    size_t nn = 16, ne = 0, nr = 0;
    CK(cuGraphGetNodes(g, nodes, &nn));
    CK(cuGraphGetEdges(g, NULL, NULL, NULL, &ne));
    CK(cuGraphGetRootNodes(g, NULL, &nr));
    printf("%s: nodes=%zu edges=%zu roots=%zu types=", what, nn, ne, nr);
    for (size_t i = 0; i < nn; i++) {
        CUgraphNodeType t;
        CK(cuGraphNodeGetType(nodes[i], &t));
        printf("%s%d", i ? "," : "", (int)t);
    }
    printf("\n");
}

/* Fork/join capture on s1 + s2; returns the executable graph. */
static CUgraphExec capture(CUstream s1, CUstream s2, CUdeviceptr a, CUdeviceptr b, int *ha)
{
    static int one = 1;
    int three = 3;
    void *a_args[] = { &a, &n }, *b_args[] = { &b, &three, &n };
    CUevent fork, join;
    CUgraph g;
    CUgraphExec exec;
    CUstreamCaptureStatus status;
    cuuint64_t id;
    const CUgraphNode *deps;
    size_t ndeps;

    CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    CK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemsetD32Async(a, 1, PROG_N, s1));
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s1, a_args, NULL));
    CK(cuEventRecord(fork, s1));
    CK(cuStreamWaitEvent(s2, fork, 0));
    CK(cuMemsetD32Async(b, 2, PROG_N, s2));
    CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, s2, b_args, NULL));
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s1, a_args, NULL));
    CK(cuEventRecord(join, s2));
    CK(cuStreamWaitEvent(s1, join, 0));
    CK(cuLaunchHostFunc(s1, on_host, &one));
    CK(cuMemcpyDtoHAsync(ha, a, PROG_N * sizeof(int), s1));
    CK(cuStreamGetCaptureInfo(s1, &status, &id, NULL, &deps, NULL, &ndeps));
    printf("capture: status=%d deps=%zu\n", (int)status, ndeps);
    CK(cuStreamEndCapture(s1, &g));
    print_graph("captured", g);
    CK(cuGraphInstantiate(&exec, g, 0));
    CK(cuGraphDestroy(g));
    return exec;
}

/* Explicit graph: memset -> add_one -> scale(2) -> {host, copy to hb} -> empty. */
static CUgraph build_explicit(CUcontext ctx, CUdeviceptr *b, int *hb, CUgraphNode *k1,
                              CUgraphNode *k2)
{
    static int two = 2, ten = 10;
    static void *k1_args[2], *k2_args[3];
    CUgraph eg;
    CUgraphNode mset, both[2], empty;
    CUDA_MEMSET_NODE_PARAMS ms = { .dst = *b, .value = 5, .elementSize = 4, .width = PROG_N,
                                   .height = 1 };
    CUDA_HOST_NODE_PARAMS hp = { .fn = on_host, .userData = &ten };
    CUDA_MEMCPY3D cp;

    k1_args[0] = b, k1_args[1] = &n;
    k2_args[0] = b, k2_args[1] = &two, k2_args[2] = &n;
    CUDA_KERNEL_NODE_PARAMS kp1 = kernel_params(add_one, k1_args);
    CUDA_KERNEL_NODE_PARAMS kp2 = kernel_params(scale, k2_args);
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE, cp.srcDevice = *b;
    cp.dstMemoryType = CU_MEMORYTYPE_HOST, cp.dstHost = hb;
    cp.WidthInBytes = PROG_N * sizeof(int), cp.Height = 1, cp.Depth = 1;
    CK(cuGraphCreate(&eg, 0));
    CK(cuGraphAddMemsetNode(&mset, eg, NULL, 0, &ms, ctx));
    CK(cuGraphAddKernelNode(k1, eg, &mset, 1, &kp1));
    CK(cuGraphAddKernelNode(k2, eg, k1, 1, &kp2));
    CK(cuGraphAddHostNode(&both[0], eg, k2, 1, &hp));
    CK(cuGraphAddMemcpyNode(&both[1], eg, k2, 1, &cp, ctx));
    CK(cuGraphAddEmptyNode(&empty, eg, both, 2));
    print_graph("explicit", eg);
    return eg;
}

/* Whole-graph updates (same topology with factor 3, then a changed topology)
 * and per-node updates (the executable's count, the source graph's do not). */
static void updates(CUgraphExec exec, CUgraph eg, CUgraphNode k1, CUgraphNode k2,
                    CUdeviceptr b, CUstream s, const int *hb)
{
    int three = 3, four = 4, one = 1;
    void *k2c_args[] = { &b, &three, &n }, *k2x_args[] = { &b, &four, &n };
    void *k1x_args[] = { &b, &one };        /* n = 1 in the source graph only */
    CUDA_KERNEL_NODE_PARAMS kp2c = kernel_params(scale, k2c_args);
    CUDA_KERNEL_NODE_PARAMS kp2x = kernel_params(scale, k2x_args);
    CUDA_KERNEL_NODE_PARAMS kp1x = kernel_params(add_one, k1x_args);
    CUgraphExecUpdateResultInfo info;
    CUgraph eg2, eg3;
    CUgraphNode k2c, extra;
    CUresult rc;

    CK(cuGraphClone(&eg2, eg));
    CK(cuGraphNodeFindInClone(&k2c, k2, eg2));
    CK(cuGraphKernelNodeSetParams(k2c, &kp2c));
    CK(cuGraphExecUpdate(exec, eg2, &info));
    CK(cuGraphLaunch(exec, s));
    printf("update same topology: result=%d b=%d\n", (int)info.result, hb[0]);
    CK(cuGraphClone(&eg3, eg));
    CK(cuGraphAddEmptyNode(&extra, eg3, NULL, 0));
    rc = cuGraphExecUpdate(exec, eg3, &info);
    printf("update changed topology: rc=%d result=%d\n", (int)rc, (int)info.result);
    CK(cuGraphExecKernelNodeSetParams(exec, k2, &kp2x));
    CK(cuGraphLaunch(exec, s));
    printf("exec node params: b=%d\n", hb[0]);
    CK(cuGraphKernelNodeSetParams(k1, &kp1x));
    CK(cuGraphLaunch(exec, s));
    CK(cuStreamSynchronize(s));
    printf("source node params: b[0]=%d b[255]=%d host_calls=%d\n", hb[0], hb[255], host_calls);
    CK(cuGraphDestroy(eg2));
    CK(cuGraphDestroy(eg3));
}

/* An illegal call inside a global-mode capture invalidates it. */
static void illegal_capture(CUstream s)
{
    CUgraph bad;
    CUstreamCaptureStatus st;
    CUdeviceptr tmp;
    CUresult rc;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    rc = cuMemAlloc(&tmp, 64);
    CK(cuStreamIsCapturing(s, &st));
    printf("illegal alloc in capture: rc=%d status=%d\n", (int)rc, (int)st);
    rc = cuStreamEndCapture(s, &bad);
    CK(cuStreamIsCapturing(s, &st));
    printf("end invalidated capture: rc=%d graph=%s status=%d\n", (int)rc,
           bad ? "set" : "NULL", (int)st);
}

int main(void)
{
    CUcontext ctx;
    CUmodule mod;
    CUstream s1, s2;
    CUdeviceptr a, b;
    CUgraphExec exec, exec2;
    CUgraph eg;
    CUgraphNode k1, k2;
    int ha[PROG_N], hb[PROG_N];

    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&s1, 0));
    CK(cuStreamCreate(&s2, 0));
    CK(cuMemAlloc(&a, sizeof ha));
    CK(cuMemAlloc(&b, sizeof hb));

    exec = capture(s1, s2, a, b, ha);
    for (int i = 0; i < 2; i++)
        CK(cuGraphLaunch(exec, s1));
    CK(cuStreamSynchronize(s1));
    CK(cuMemcpyDtoH(hb, b, sizeof hb));
    printf("captured run: a=%d b=%d sum(a)=%ld host_calls=%d\n", ha[0], hb[0],
           prog_sum_int(ha, PROG_N), host_calls);

    eg = build_explicit(ctx, &b, hb, &k1, &k2);
    CK(cuGraphInstantiate(&exec2, eg, 0));
    CK(cuGraphLaunch(exec2, s2));
    CK(cuStreamSynchronize(s2));
    printf("explicit run: b=%d host_calls=%d\n", hb[0], host_calls);
    updates(exec2, eg, k1, k2, b, s2, hb);
    illegal_capture(s1);

    CK(cuGraphExecDestroy(exec));
    CK(cuGraphExecDestroy(exec2));
    CK(cuGraphDestroy(eg));
    return 0;
}
