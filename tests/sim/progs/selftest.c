/* selftest.c -- checks of the simulator itself (run without the shim):
 * resolver version selection, device / context / memory queries and errors,
 * launch validation, graph topological order and queries, capture rules,
 * executable-graph update, events, VMM aliasing, fault injection, default
 * streams and re-entrant host callbacks.  Prints TAP-like "ok N - what" lines
 * and exits 1 if any check fails.
 */
#define __CUDA_API_VERSION_INTERNAL 1   /* call every ABI by its export name */
#include "prog.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

static int checks, failures;

#define EXPECT(cond, ...)                                                    \
    do {                                                                     \
        int ok_ = (cond);                                                    \
        printf("%s %d - ", ok_ ? "ok" : "not ok", ++checks);                 \
        printf(__VA_ARGS__);                                                 \
        printf("\n");                                                        \
        failures += !ok_;                                                    \
    } while (0)
#define EXPECT_RC(call, want)                                                \
    do {                                                                     \
        CUresult rc_ = (call);                                               \
        EXPECT(rc_ == (want), "%s == %d (got %d)", #call, (int)(want), (int)rc_); \
    } while (0)

static CUcontext ctx;
static CUfunction saxpy, add_one;
static CUstream s1, s2;

/* ---- resolver */

static void expect_proc(const char *name, int version, cuuint64_t flags, void *want)
{
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = 99;
    CUresult rc = cuGetProcAddress_v2(name, &p, version, flags, &st);
    EXPECT(rc == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS && p == want,
           "cuGetProcAddress %s@%d flags=%llu", name, version, (unsigned long long)flags);
}

static void expect_no_proc(const char *name, int version, CUdriverProcAddressQueryResult want)
{
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = 99;
    CUresult rc = cuGetProcAddress_v2(name, &p, version, 0, &st);
    EXPECT(rc == CUDA_ERROR_NOT_FOUND && st == want && p == NULL,
           "cuGetProcAddress %s@%d not found, status %d (got rc %d status %d)", name,
           version, (int)want, (int)rc, (int)st);
}

static void test_procaddr(void)
{
    const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    void *p = NULL;
    expect_proc("cuMemAlloc", 3000, 0, (void *)&cuMemAlloc);
    expect_proc("cuMemAlloc", 3020, 0, (void *)&cuMemAlloc_v2);
    expect_proc("cuMemAlloc", 13000, PT, (void *)&cuMemAlloc_v2);
    expect_proc("cuGetProcAddress", 11030, 0, (void *)&cuGetProcAddress);
    expect_proc("cuGetProcAddress", 12000, 0, (void *)&cuGetProcAddress_v2);
    expect_proc("cuStreamBeginCapture", 10000, 0, (void *)&cuStreamBeginCapture);
    expect_proc("cuStreamBeginCapture", 10010, 0, (void *)&cuStreamBeginCapture_v2);
    expect_proc("cuStreamBeginCapture", 10000, PT, (void *)&cuStreamBeginCapture_ptsz);
    expect_proc("cuStreamBeginCapture", 10010, PT, (void *)&cuStreamBeginCapture_v2_ptsz);
    expect_proc("cuGraphInstantiate", 10000, 0, (void *)&cuGraphInstantiate);
    expect_proc("cuGraphInstantiate", 11000, 0, (void *)&cuGraphInstantiate_v2);
    expect_proc("cuGraphInstantiate", 12000, 0, (void *)&cuGraphInstantiateWithFlags);
    expect_proc("cuCtxCreate", 3020, 0, (void *)&cuCtxCreate_v2);
    expect_proc("cuCtxCreate", 11040, 0, (void *)&cuCtxCreate_v3);
    expect_proc("cuCtxCreate", 12050, 0, (void *)&cuCtxCreate_v4);
    expect_proc("cuLaunchKernel", 7000, PT, (void *)&cuLaunchKernel_ptsz);
    expect_proc("cuLaunchKernel", 6050, PT, (void *)&cuLaunchKernel);
    expect_proc("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                (void *)&cuLaunchKernel);
    expect_proc("cuMemcpyHtoD", 13000, PT, (void *)&cuMemcpyHtoD_v2_ptds);
    expect_proc("cuInit", 13000, PT, (void *)&cuInit);
    expect_no_proc("cuLaunchKernel", 3000, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    expect_no_proc("cuNoSuchFunction", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    expect_no_proc("cuMemAlloc_v2", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    EXPECT(cuGetProcAddress("cuInit", &p, 12000, 0) == CUDA_SUCCESS && p == (void *)&cuInit,
           "4-argument cuGetProcAddress resolves cuInit");
}

/* ---- device, errors, contexts */

static void test_device(void)
{
    int v = 0, major = 0, minor = 0;
    const char *s = NULL;
    CUdevice dev;
    CUcontext c = NULL, cur = NULL;
    CUdeviceptr d;

    EXPECT_RC(cuDeviceGetCount(&v), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT_RC(cuMemAlloc_v2(&d, 16), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT_RC(cuInit(0), CUDA_SUCCESS);
    EXPECT_RC(cuMemAlloc_v2(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuDriverGetVersion(&v) == CUDA_SUCCESS && v == 13000, "driver version 13000");
    EXPECT(cuDeviceGetCount(&v) == CUDA_SUCCESS && v == 1, "one device");
    EXPECT_RC(cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_RC(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    EXPECT(v == 1024, "MAX_THREADS_PER_BLOCK 1024");
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    EXPECT(major == 9 && minor == 0, "compute capability 9.0");
    EXPECT(cuGetErrorName(CUDA_ERROR_UNKNOWN, &s) == CUDA_SUCCESS &&
           !strcmp(s, "CUDA_ERROR_UNKNOWN"), "cuGetErrorName(999)");
    EXPECT(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s) == CUDA_SUCCESS &&
           !strcmp(s, "invalid argument"), "cuGetErrorString(1)");
    EXPECT_RC(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuCtxCreate_v4(&c, NULL, 0, dev), CUDA_SUCCESS);
    EXPECT(cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c, "cuCtxCreate pushes the context");
    EXPECT(cuCtxPopCurrent_v2(&cur) == CUDA_SUCCESS && cur == c, "cuCtxPopCurrent");
    EXPECT(cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == NULL, "empty context stack");
    EXPECT_RC(cuCtxDestroy_v2(c), CUDA_SUCCESS);
    EXPECT_RC(cuCtxSetCurrent(c), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT_RC(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    EXPECT_RC(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

/* ---- memory */

static void test_memory(void)
{
    CUdeviceptr d, base = 0;
    CUdeviceptr_v1 d32 = 0;
    size_t size = 0, pitch = 0, free_b = 0, total = 0;
    unsigned type = 0, h32[4];
    CUcontext owner = NULL;
    void *host = NULL;
    char local[64];

    EXPECT_RC(cuMemAlloc_v2(&d, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemAlloc_v2(&d, 1000), CUDA_SUCCESS);
    cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 10);
    cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, d);
    EXPECT(type == CU_MEMORYTYPE_DEVICE && owner == ctx, "pointer attributes of device memory");
    EXPECT(cuMemGetAddressRange_v2(&base, &size, d + 100) == CUDA_SUCCESS && base == d &&
           size == 1000, "cuMemGetAddressRange of an interior pointer");
    EXPECT_RC(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)local),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemFree_v2(d + 4), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemcpyHtoD_v2(d + 996, local, 8), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemcpyDtoH_v2(local, (CUdeviceptr)local, 8), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemsetD32_v2(d + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemAllocHost_v2(&host, 64), CUDA_SUCCESS);
    cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)host);
    EXPECT(type == CU_MEMORYTYPE_HOST, "pinned host memory is HOST");
    EXPECT_RC(cuMemHostRegister_v2(local, sizeof local, 0), CUDA_SUCCESS);
    EXPECT_RC(cuMemHostRegister_v2(local, sizeof local, 0),
              CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_RC(cuMemHostUnregister(local), CUDA_SUCCESS);
    EXPECT_RC(cuMemHostUnregister(local), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT(cuMemAllocPitch_v2(&base, &pitch, 100, 4, 4) == CUDA_SUCCESS && pitch == 512,
           "cuMemAllocPitch pitch 512");
    EXPECT(cuMemGetInfo_v2(&free_b, &total) == CUDA_SUCCESS && total - free_b == 1000 + 2048,
           "cuMemGetInfo counts live device memory");
    EXPECT_RC(cuMemAlloc(&d32, sizeof h32), CUDA_SUCCESS);
    EXPECT(d32 != 0 && cuMemsetD32(d32, 77, 4) == CUDA_SUCCESS &&
           cuMemcpyDtoH(h32, d32, sizeof h32) == CUDA_SUCCESS && h32[3] == 77,
           "legacy 32-bit cuMemAlloc / cuMemsetD32 / cuMemcpyDtoH");
    EXPECT_RC(cuMemFree(d32), CUDA_SUCCESS);
    EXPECT_RC(cuMemFree_v2(d), CUDA_SUCCESS);
    EXPECT_RC(cuMemFree_v2(d), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemFreeHost(host), CUDA_SUCCESS);
}

/* ---- launches */

static void test_launch(CUdeviceptr p)
{
    int n = PROG_N;
    float a = 1;
    size_t off = 0, size = 0, small = 4;
    unsigned char buf[16] = { 0 };
    void *args[] = { &p, &n }, *sargs[] = { &a, &p, &p, &n };
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                      CU_LAUNCH_PARAM_END };
    CUmodule mod;
    CUfunction f;
    CUlaunchAttribute at = { .id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                             .value.clusterDim = { 3, 1, 1 } };
    CUlaunchConfig cfg = { 4, 1, 1, 32, 1, 1, 0, NULL, &at, 1 };

    EXPECT_RC(cuLaunchKernel(add_one, 1, 1, 1, 1024, 2, 1, 0, NULL, args, NULL),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(add_one, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel((CUfunction)buf, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
              CUDA_ERROR_INVALID_HANDLE);
    EXPECT_RC(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, args, extra),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 65536, NULL, args, NULL),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536),
              CUDA_SUCCESS);
    EXPECT_RC(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 65536, NULL, args, NULL), CUDA_SUCCESS);
    EXPECT_RC(cuLaunchKernelEx(&cfg, add_one, args, NULL), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT_RC(cuLaunchCooperativeKernel(add_one, 100000, 1, 1, 32, 1, 1, 0, NULL, args),
              CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    EXPECT_RC(cuLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 0, s1, sargs, NULL), CUDA_SUCCESS);
    EXPECT(cuFuncGetParamInfo(saxpy, 3, &off, &size) == CUDA_SUCCESS && off == 24 && size == 4,
           "saxpy parameter 3 at offset 24, 4 bytes");
    EXPECT_RC(cuFuncGetParamInfo(saxpy, 4, &off, &size), CUDA_ERROR_INVALID_VALUE);
    cuModuleLoadData(&mod, "x");
    EXPECT_RC(cuModuleGetFunction(&f, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    EXPECT_RC(cuModuleLoad(&mod, "/nonexistent/module.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
}

/* ---- graph order and queries */

static char order[16];

static void record(void *c)
{
    strncat(order, (const char *)c, 1);
}

static void test_graph_order(void)
{
    CUgraph g;
    CUgraphExec x;
    CUgraphNode n[4], err;
    CUDA_HOST_NODE_PARAMS hp[4] = { { record, "a" }, { record, "b" }, { record, "c" },
                                    { record, "d" } };
    size_t num = 0;
    char log[8];

    cuGraphCreate(&g, 0);
    for (int i = 0; i < 4; i++)
        cuGraphAddHostNode(&n[i], g, NULL, 0, &hp[i]);
    CUgraphNode from[] = { n[2], n[3], n[0] }, to[] = { n[0], n[1], n[1] };
    EXPECT_RC(cuGraphAddDependencies_v2(g, from, to, NULL, 3), CUDA_SUCCESS);
    EXPECT_RC(cuGraphAddDependencies(g, from, to, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphGetEdges_v2(g, NULL, NULL, NULL, &num) == CUDA_SUCCESS && num == 3, "3 edges");
    EXPECT(cuGraphGetRootNodes(g, NULL, &num) == CUDA_SUCCESS && num == 2, "2 roots");
    EXPECT(cuGraphNodeGetDependencies(n[1], NULL, &num) == CUDA_SUCCESS && num == 2,
           "node b has 2 dependencies");
    EXPECT_RC(cuGraphInstantiateWithFlags(&x, g, 0), CUDA_SUCCESS);
    order[0] = '\0';
    cuGraphLaunch(x, s1);
    EXPECT(!strcmp(order, "cadb"), "topological order, earliest created ready node first (%s)",
           order);
    CUgraphNode back_from[] = { n[1] }, back_to[] = { n[2] };
    cuGraphAddDependencies(g, back_from, back_to, 1);
    EXPECT_RC(cuGraphInstantiate(&x, g, &err, log, sizeof log), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuGraphDestroyNode(n[1]), CUDA_SUCCESS);
    EXPECT(cuGraphGetNodes(g, NULL, &num) == CUDA_SUCCESS && num == 3, "destroyed node is gone");
    EXPECT(cuGraphGetEdges(g, NULL, NULL, &num) == CUDA_SUCCESS && num == 1, "and its edges");
    char path[] = "/tmp/sim-selftest-XXXXXX";
    int fd = mkstemp(path);
    char dot[512] = { 0 };
    EXPECT_RC(cuGraphDebugDotPrint(g, path, 0), CUDA_SUCCESS);
    EXPECT(fd >= 0 && read(fd, dot, sizeof dot - 1) > 0 && strstr(dot, "digraph") &&
           strstr(dot, "n2 -> n0"), "DOT output");
    close(fd);
    unlink(path);
    cuGraphDestroy(g);
}

/* ---- capture rules */

static void test_capture_fork(CUdeviceptr p, CUdeviceptr d);

static void test_capture_rules(CUdeviceptr p)
{
    int n = PROG_N;
    void *args[] = { &p, &n };
    CUgraph g = NULL;
    CUdeviceptr d;
    CUevent e;
    CUstreamCaptureStatus st;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    cuuint64_t id = 0;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;

    cuEventCreate(&e, 0);
    EXPECT_RC(cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
              CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_GLOBAL);
    cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, s1, args, NULL);
    cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, s1, args, NULL);
    EXPECT(cuStreamGetCaptureInfo_v2(s1, &st, &id, &g, &deps, &ndeps) == CUDA_SUCCESS &&
           st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id && g && ndeps == 1,
           "cuStreamGetCaptureInfo_v2 during capture");
    EXPECT_RC(cuEventRecord(e, s1), CUDA_SUCCESS);
    EXPECT_RC(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);
    EXPECT_RC(cuMemsetD32_v2(p, 0, 1), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    EXPECT_RC(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

    cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_GLOBAL);
    EXPECT_RC(cuMemAlloc_v2(&d, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_RC(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, s1, args, NULL),
              CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_RC(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

    cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    cuThreadExchangeStreamCaptureMode(&mode);
    EXPECT_RC(cuMemAlloc_v2(&d, 64), CUDA_SUCCESS);
    cuThreadExchangeStreamCaptureMode(&mode);
    EXPECT(mode == CU_STREAM_CAPTURE_MODE_RELAXED, "cuThreadExchangeStreamCaptureMode swaps");
    EXPECT_RC(cuStreamSynchronize(s1), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_RC(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

    cuEventDestroy_v2(e);
    test_capture_fork(p, d);
}

/* Fork / join rules. */
static void test_capture_fork(CUdeviceptr p, CUdeviceptr d)
{
    int n = PROG_N;
    void *args[] = { &p, &n };
    CUgraph g = NULL;
    CUevent e;
    CUstreamCaptureStatus st;

    cuEventCreate(&e, 0);
    cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_RELAXED);
    EXPECT_RC(cuMemFree_v2(d), CUDA_SUCCESS);
    cuEventRecord(e, s1);
    cuStreamWaitEvent(s2, e, 0);
    EXPECT(cuStreamIsCapturing(s2, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_ACTIVE,
           "waiting on a captured event forks the capture");
    cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, s2, args, NULL);
    EXPECT_RC(cuStreamEndCapture(s2, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
    EXPECT_RC(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

    cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_GLOBAL);
    cuEventRecord(e, s1);
    cuStreamWaitEvent(s2, e, 0);
    cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, s2, args, NULL);
    EXPECT_RC(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
    EXPECT(cuStreamIsCapturing(s2, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_NONE,
           "an ended capture releases forked streams");

    cuEventRecord(e, s2);                                   /* an eager record */
    cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_GLOBAL);
    EXPECT_RC(cuStreamWaitEvent(s1, e, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    cuStreamEndCapture(s1, &g);
    cuEventDestroy_v2(e);
}

static void test_capture_graphs(CUdeviceptr p)
{
    int n = PROG_N;
    void *args[] = { &p, &n };
    CUgraph user, g, cap;
    CUgraphExec x;
    CUgraphNode root, nodes[4];
    CUgraphNodeType t;
    CUstream nb;
    size_t num = 4;

    cuGraphCreate(&user, 0);
    cuGraphAddEmptyNode(&root, user, NULL, 0);
    EXPECT_RC(cuStreamBeginCaptureToGraph(s1, user, &root, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL),
              CUDA_SUCCESS);
    cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, s1, args, NULL);
    EXPECT(cuStreamEndCapture(s1, &g) == CUDA_SUCCESS && g == user,
           "capture into the caller's graph");
    EXPECT(cuGraphGetRootNodes(user, nodes, &num) == CUDA_SUCCESS && num == 1 && nodes[0] == root,
           "captured node depends on the given node");
    cuGraphInstantiateWithFlags(&x, user, 0);
    cuStreamBeginCapture_v2(s2, CU_STREAM_CAPTURE_MODE_GLOBAL);
    EXPECT_RC(cuGraphLaunch(x, s2), CUDA_SUCCESS);
    cuStreamEndCapture(s2, &cap);
    num = 4;
    cuGraphGetNodes(cap, nodes, &num);
    EXPECT(num == 1 && cuGraphNodeGetType(nodes[0], &t) == CUDA_SUCCESS &&
           t == CU_GRAPH_NODE_TYPE_GRAPH, "a captured graph launch is a child-graph node");
    cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING);
    cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    EXPECT_RC(cuMemsetD32_v2(p, 0, 1), CUDA_SUCCESS);
    EXPECT_RC(cuStreamEndCapture(nb, &g), CUDA_SUCCESS);
    cuGraphExecDestroy(x);
}

/* ---- executable graph update */

static void test_exec_update(CUdeviceptr p)
{
    int n = PROG_N;
    void *args[] = { &p, &n };
    CUDA_KERNEL_NODE_PARAMS kp = { .func = add_one, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                                   .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
                                   .kernelParams = args };
    CUgraph a, b, c;
    CUgraphNode k, e;
    CUgraphExec x;
    CUgraphExecUpdateResultInfo info;
    CUgraphExecUpdateResult res;

    cuGraphCreate(&a, 0);
    cuGraphAddKernelNode_v2(&k, a, NULL, 0, &kp);
    cuGraphInstantiateWithFlags(&x, a, 0);
    cuGraphCreate(&b, 0);
    cuGraphAddEmptyNode(&e, b, NULL, 0);
    EXPECT(cuGraphExecUpdate_v2(x, b, &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE &&
           info.result == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED && info.errorNode == e,
           "update with a changed node type fails");
    cuGraphCreate(&c, 0);
    cuGraphAddKernelNode_v2(&k, c, NULL, 0, &kp);
    cuGraphAddEmptyNode(&e, c, &k, 1);
    EXPECT(cuGraphExecUpdate(x, c, &e, &res) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE &&
           res == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, "legacy update, changed topology");
    cuGraphExecDestroy(x);
}

/* ---- events, VMM, default streams, re-entrant callbacks */

static void test_events(CUdeviceptr p)
{
    int n = PROG_N;
    void *args[] = { &p, &n };
    CUevent e1, e2, nt;
    float ms = -1;
    cuEventCreate(&e1, 0);
    cuEventCreate(&e2, 0);
    cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING);
    EXPECT_RC(cuEventElapsedTime_v2(&ms, e1, e2), CUDA_ERROR_INVALID_HANDLE);
    cuEventRecord(e1, s1);
    for (int i = 0; i < 3; i++)
        cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, s1, args, NULL);
    cuEventRecord(e2, s1);
    cuEventRecord(nt, s1);
    EXPECT(cuEventElapsedTime(&ms, e1, e2) == CUDA_SUCCESS && ms > 0.0039f && ms < 0.0041f,
           "elapsed time on the logical clock: 4 operations = 0.004 ms (%g)", ms);
    EXPECT_RC(cuEventElapsedTime(&ms, e1, nt), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_RC(cuEventSynchronize(e2), CUDA_SUCCESS);
}

static void test_vmm(void)
{
    CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
    CUmemAccessDesc acc = { prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    size_t gran = 0;
    unsigned v = 0;

    EXPECT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) ==
           CUDA_SUCCESS && gran == 2u << 20, "granularity 2 MiB");
    EXPECT_RC(cuMemAddressReserve(&va, 2 * gran, 0, 0, 0), CUDA_SUCCESS);
    EXPECT_RC(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
    EXPECT_RC(cuMemMap(va, gran, 0, h, 0), CUDA_SUCCESS);
    EXPECT_RC(cuMemMap(va + gran, gran, 0, h, 0), CUDA_SUCCESS);
    EXPECT_RC(cuMemMap(va, gran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemSetAccess(va, 2 * gran, &acc, 1), CUDA_SUCCESS);
    cuMemsetD32_v2(va + 64, 1234, 1);
    cuMemcpyDtoH_v2(&v, va + gran + 64, sizeof v);
    EXPECT(v == 1234, "two mappings of one allocation alias");
    EXPECT_RC(cuMemUnmap(va, 2 * gran), CUDA_SUCCESS);
    EXPECT_RC(cuMemRelease(h), CUDA_SUCCESS);
    EXPECT_RC(cuMemAddressFree(va, 2 * gran), CUDA_SUCCESS);
}

static unsigned long long other_ptds_id;

static void *other_thread(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    cuStreamGetId(CU_STREAM_PER_THREAD, &other_ptds_id);
    return NULL;
}

static int reentered;

static void reenter(void *user)
{
    CUcontext c = NULL;
    reentered = cuCtxGetCurrent(&c) == CUDA_SUCCESS && c == ctx &&
                cuMemsetD32_v2(*(CUdeviceptr *)user, 9, 1) == CUDA_SUCCESS;
}

static void test_streams(CUdeviceptr p)
{
    unsigned long long legacy = 0, legacy0 = 1, pt = 0, pt0 = 1;
    pthread_t t;
    unsigned v = 0;
    cuStreamGetId(CU_STREAM_LEGACY, &legacy);
    cuStreamGetId(NULL, &legacy0);
    cuStreamGetId(CU_STREAM_PER_THREAD, &pt);
    cuStreamGetId_ptsz(NULL, &pt0);
    EXPECT(legacy == legacy0 && pt == pt0 && pt != legacy,
           "handle 0 is the legacy stream, or the per-thread one through _ptsz");
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    EXPECT(other_ptds_id && other_ptds_id != pt, "each thread has its own per-thread stream");
    EXPECT_RC(cuLaunchHostFunc(s1, reenter, &p), CUDA_SUCCESS);
    cuMemcpyDtoH_v2(&v, p, sizeof v);
    EXPECT(reentered && v == 9, "a host function may call the driver");
    EXPECT_RC(cuStreamDestroy_v2(CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
}

static void test_faults(void)
{
    int v = 0;
    EXPECT_RC(cuDeviceGetCount(&v), CUDA_SUCCESS);
    EXPECT_RC(cuDeviceGetCount(&v), (CUresult)42);
    EXPECT_RC(cuDeviceGetCount(&v), CUDA_SUCCESS);
}

int main(void)
{
    CUmodule mod;
    CUdeviceptr p;

    /* before the first driver call: SIM_FAIL is read once */
    setenv("SIM_FAIL", "cuDeviceGetCount:4:42", 1);
    test_device();                          /* calls cuDeviceGetCount twice */
    test_faults();                          /* calls #3, #4, #5 */
    test_procaddr();
    test_memory();
    prog_register(sim_register_kernel);
    cuModuleLoadData(&mod, "sim-module");
    cuModuleGetFunction(&saxpy, mod, "saxpy");
    cuModuleGetFunction(&add_one, mod, "add_one");
    cuStreamCreate(&s1, 0);
    cuStreamCreate(&s2, 0);
    CK(cuMemAlloc_v2(&p, PROG_N * sizeof(int)));
    test_launch(p);
    test_graph_order();
    test_capture_rules(p);
    test_capture_graphs(p);
    test_exec_update(p);
    test_events(p);
    test_vmm();
    test_streams(p);
    printf("%d checks, %d failed\n", checks, failures);
    return failures != 0;
}
