// rules_prog.cu -- what the driver lets a replay change in an executable graph, tried
// on the GPU (tests/gpu/engine.bats; docs/how-it-works.md cites the answers).
//
// A graph of one kernel node, one memset node and one 1-D device-to-device memcpy
// node is captured and instantiated; then each rule patches one node through
// cudaGraphExec*NodeSetParams, launches, and compares the bytes with the same work
// done eagerly:
//   kernel-grid    the kernel node's grid, block and dynamic shared memory changed
//   kernel-func    another kernel function (same parameter list, same context)
//   memset-size    the memset node's width (element count) changed
//   memset-dst     the memset node's destination moved to another allocation
//   memcpy-size    the memcpy node's byte count changed
//   memcpy-ptrs    the memcpy node's source and destination moved to other allocations
// stdout: "rule <name> ok" (accepted, same bytes as eager), "rule <name> refused <err>"
// (the driver returned an error: the shim must not rely on it), or "rule <name> WRONG"
// (accepted with other bytes: a driver bug the shim would inherit).  Exit status 2 on an
// unexpected CUDA error.
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "cuda_check.cuh"

enum { N = 1 << 14 };

__global__ void k_fill(unsigned *x, int n, unsigned salt)
{
    extern __shared__ unsigned sh[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sh[threadIdx.x % 32] = salt;
    __syncthreads();
    if (i < n)
        x[i] = x[i] * 2654435761u + sh[threadIdx.x % 32] + (unsigned)i;
}

__global__ void k_fill2(unsigned *x, int n, unsigned salt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = (x[i] ^ salt) * 40503u + 7u;
}

struct bufs { unsigned *k, *m, *m2, *src, *dst, *src2, *dst2; };

static int reset(const bufs &b)
{
    unsigned *all[] = { b.k, b.m, b.m2, b.src, b.dst, b.src2, b.dst2 };
    for (int i = 0; i < 7; i++)
        CK(cudaMemset(all[i], 0x11 * (i + 1), N * sizeof(unsigned)));
    // the work runs on a non-blocking stream, which does not wait for the legacy one
    CK(cudaDeviceSynchronize());
    return 0;
}

static int snapshot(const bufs &b, unsigned *host)
{
    unsigned *all[] = { b.k, b.m, b.m2, b.src, b.dst, b.src2, b.dst2 };
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < 7; i++)
        CK(cudaMemcpy(host + (size_t)i * N, all[i], N * sizeof(unsigned), cudaMemcpyDeviceToHost));
    return 0;
}

static unsigned h_eager[7 * N], h_graph[7 * N];

// One rule: `patch` changes the executable and `eager` does the patched work eagerly.
template <class P, class E>
static int rule(const char *name, cudaGraphExec_t exec, cudaStream_t s, const bufs &b, P patch,
                E eager)
{
    if (reset(b) || eager() || snapshot(b, h_eager) || reset(b))
        return 2;
    cudaError_t rc = patch();
    if (rc != cudaSuccess) {
        printf("rule %s refused %s\n", name, cudaGetErrorName(rc));
        cudaGetLastError();
        return 0;
    }
    CK(cudaGraphLaunch(exec, s));
    if (snapshot(b, h_graph))
        return 2;
    printf("rule %s %s\n", name, memcmp(h_eager, h_graph, sizeof h_eager) ? "WRONG" : "ok");
    return 0;
}

int main(void)
{
    bufs b;
    unsigned **all[] = { &b.k, &b.m, &b.m2, &b.src, &b.dst, &b.src2, &b.dst2 };
    for (int i = 0; i < 7; i++)
        CK(cudaMalloc(all[i], N * sizeof(unsigned)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int n = N;
    unsigned salt = 5u;

    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    k_fill<<<N / 256 / 2, 128, 128, s>>>(b.k, n, salt);
    CK(cudaMemsetAsync(b.m, 0x5a, N / 2 * sizeof(unsigned), s));
    CK(cudaMemcpyAsync(b.dst, b.src, N / 2 * sizeof(unsigned), cudaMemcpyDeviceToDevice, s));
    CK(cudaStreamEndCapture(s, &g));
    size_t nn = 0;
    CK(cudaGraphGetNodes(g, NULL, &nn));
    if (nn != 3) {
        fprintf(stderr, "rules_prog: %zu nodes captured, not 3\n", nn);
        return 2;
    }
    cudaGraphNode_t nodes[3], kn = NULL, mn = NULL, cn = NULL;
    CK(cudaGraphGetNodes(g, nodes, &nn));
    for (int i = 0; i < 3; i++) {
        cudaGraphNodeType t;
        CK(cudaGraphNodeGetType(nodes[i], &t));
        if (t == cudaGraphNodeTypeKernel) kn = nodes[i];
        if (t == cudaGraphNodeTypeMemset) mn = nodes[i];
        if (t == cudaGraphNodeTypeMemcpy) cn = nodes[i];
    }
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, g, 0));
    cudaKernelNodeParams kp;
    CK(cudaGraphKernelNodeGetParams(kn, &kp));
    cudaMemsetParams mp;
    CK(cudaGraphMemsetNodeGetParams(mn, &mp));
    cudaMemcpy3DParms cp;
    CK(cudaGraphMemcpyNodeGetParams(cn, &cp));
    void *args[] = { &b.k, &n, &salt };
    const size_t half = N / 2 * sizeof(unsigned);
    // every rule's eager side also does the other two nodes' work as captured
    auto rest_m = [&]() { return cudaMemsetAsync(b.m, 0x5a, half, s); };
    auto rest_c = [&]() {
        return cudaMemcpyAsync(b.dst, b.src, half, cudaMemcpyDeviceToDevice, s);
    };
    auto rest_k = [&]() {
        k_fill<<<N / 256 / 2, 128, 128, s>>>(b.k, n, salt);
        return cudaGetLastError();
    };

    if (rule("kernel-grid", exec, s, b,
             [&]() {
                 cudaKernelNodeParams q = kp;
                 q.gridDim = dim3(N / 256);
                 q.blockDim = dim3(256);
                 q.sharedMemBytes = 256;
                 q.kernelParams = args;
                 return cudaGraphExecKernelNodeSetParams(exec, kn, &q);
             },
             [&]() {
                 k_fill<<<N / 256, 256, 256, s>>>(b.k, n, salt);
                 return (int)(rest_m() || rest_c());
             }))
        return 2;
    if (rule("kernel-func", exec, s, b,
             [&]() {
                 cudaKernelNodeParams q = kp;
                 q.func = (void *)k_fill2;
                 q.gridDim = dim3(N / 256);
                 q.blockDim = dim3(256);
                 q.sharedMemBytes = 0;
                 q.kernelParams = args;
                 return cudaGraphExecKernelNodeSetParams(exec, kn, &q);
             },
             [&]() {
                 k_fill2<<<N / 256, 256, 0, s>>>(b.k, n, salt);
                 return (int)(rest_m() || rest_c());
             }))
        return 2;
    // back to the captured kernel for the rules that follow
    CK(cudaGraphExecKernelNodeSetParams(exec, kn, &kp));
    if (rule("memset-size", exec, s, b,
             [&]() {
                 cudaMemsetParams q = mp;
                 q.width = N * sizeof(unsigned) / mp.elementSize;   // all N words
                 return cudaGraphExecMemsetNodeSetParams(exec, mn, &q);
             },
             [&]() {
                 return (int)(rest_k() || cudaMemsetAsync(b.m, 0x5a, N * sizeof(unsigned), s) ||
                              rest_c());
             }))
        return 2;
    CK(cudaGraphExecMemsetNodeSetParams(exec, mn, &mp));
    if (rule("memset-dst", exec, s, b,
             [&]() {
                 cudaMemsetParams q = mp;
                 q.dst = b.m2;
                 return cudaGraphExecMemsetNodeSetParams(exec, mn, &q);
             },
             [&]() {
                 return (int)(rest_k() || cudaMemsetAsync(b.m2, 0x5a, half, s) || rest_c());
             }))
        return 2;
    CK(cudaGraphExecMemsetNodeSetParams(exec, mn, &mp));
    if (rule("memcpy-size", exec, s, b,
             [&]() {
                 cudaMemcpy3DParms q = cp;
                 q.extent.width = N * sizeof(unsigned);
                 return cudaGraphExecMemcpyNodeSetParams(exec, cn, &q);
             },
             [&]() {
                 return (int)(rest_k() || rest_m() ||
                              cudaMemcpyAsync(b.dst, b.src, N * sizeof(unsigned),
                                              cudaMemcpyDeviceToDevice, s));
             }))
        return 2;
    CK(cudaGraphExecMemcpyNodeSetParams(exec, cn, &cp));
    if (rule("memcpy-ptrs", exec, s, b,
             [&]() {
                 cudaMemcpy3DParms q = cp;
                 q.srcPtr.ptr = b.src2;
                 q.dstPtr.ptr = b.dst2;
                 return cudaGraphExecMemcpyNodeSetParams(exec, cn, &q);
             },
             [&]() {
                 return (int)(rest_k() || rest_m() ||
                              cudaMemcpyAsync(b.dst2, b.src2, half, cudaMemcpyDeviceToDevice, s));
             }))
        return 2;
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    return 0;
}
