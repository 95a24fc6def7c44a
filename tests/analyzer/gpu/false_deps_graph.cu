// false_deps_graph.cu -- gpu_validate.sh's graph workload: a graph built by hand
// (cudaGraphAddKernelNode) of STREAMS independent branches, each a chain of KERNELS long
// 2-block kernels on its own buffer, launched ITERS times on one stream.  The branches
// have no path between them and share the launch's hardware queue.  Whether they
// serialize there is the GPU's affair: the H100 runs the branches of one graph launch
// side by side on one channel, with 1 connection as with 32 (no false dependency: the
// analyzer must find none and predict the span it saw).
//
// The buffers are set with cudaMemsetAsync before the graph is instantiated: under
// AUTOGRAPH_TRACE tracing starts at the program's first recordable call (a launch, an
// async copy or memset, an event record or wait), and the graph data of a graph
// instantiated before that is not written beside the trace.
//
//   false_deps_graph [ITERS [STREAMS [KERNELS [ROUNDS]]]]   (false_deps_common.cuh)
#include "false_deps_common.cuh"

// The graph: branch b is kernels (b, 0) -> (b, 1) -> ... on buf[b].
static cudaGraph_t build(const fd_args &a, unsigned **buf, std::vector<unsigned> &salts,
                         std::vector<void *> &params)
{
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    salts.resize((size_t)a.streams * a.kernels);
    params.resize((size_t)a.streams * a.kernels * 3);
    for (int b = 0; b < a.streams; b++) {
        cudaGraphNode_t prev = NULL;
        for (int k = 0; k < a.kernels; k++) {
            size_t i = (size_t)b * a.kernels + k;
            cudaKernelNodeParams p = {};
            cudaGraphNode_t node;
            salts[i] = (unsigned)(b * 131 + k);
            params[3 * i] = &buf[b];
            params[3 * i + 1] = &salts[i];
            params[3 * i + 2] = (void *)&a.rounds;
            p.func = (void *)fd_work;
            p.gridDim = dim3(FD_BLOCKS);
            p.blockDim = dim3(FD_BLOCK);
            p.kernelParams = &params[3 * i];
            CK(cudaGraphAddKernelNode(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
            prev = node;
        }
    }
    return g;
}

int main(int argc, char **argv)
{
    fd_args a = fd_parse(argc, argv);
    unsigned *buf[FD_MAX_STREAMS];
    std::vector<unsigned> salts;
    std::vector<void *> params;
    std::vector<double> span, wall;
    cudaStream_t s;
    cudaEvent_t t0, t1;
    cudaGraphExec_t exec;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    for (int b = 0; b < a.streams; b++) {          // before the graph: see the top
        CK(cudaMalloc(&buf[b], FD_ELEMS * sizeof(unsigned)));
        CK(cudaMemsetAsync(buf[b], b, FD_ELEMS * sizeof(unsigned), s));
    }
    CK(cudaStreamSynchronize(s));
    cudaGraph_t g = build(a, buf, salts, params);
    CK(cudaGraphInstantiate(&exec, g, 0));
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < a.iters + 2; i++) {
        float ms = 0;
        double w0 = fd_now_us();
        CK(cudaEventRecord(t0, s));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaEventRecord(t1, s));
        CK(cudaEventSynchronize(t1));
        CK(cudaEventElapsedTime(&ms, t0, t1));
        if (i >= 2) {
            span.push_back(ms * 1000.0);
            wall.push_back(fd_now_us() - w0);
        }
    }
    fd_report(span, wall, buf, a.streams);
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    return 0;
}
