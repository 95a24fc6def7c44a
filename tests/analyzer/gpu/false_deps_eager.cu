// false_deps_eager.cu -- gpu_validate.sh's eager workload: STREAMS non-blocking streams,
// each a chain of KERNELS long 2-block kernels on its own buffer, forked from and
// joined into stream 0 by events.  The branches are independent; the host submits
// them depth first (all of stream 0's kernels, then all of stream 1's, ...), as a
// program that works through its streams one after the other does.  With
// CUDA_DEVICE_MAX_CONNECTIONS=1 the streams share one hardware queue, which
// dispatches in submission order: a stream's second kernel waits there for its first,
// and the next stream's first kernel waits behind it (false dependencies that cost
// time: the branches run one after the other).  Submitted breadth first (every
// stream's first kernel, then every second one) the queue would run the branches side
// by side even so.  With 32 connections every stream has its own queue.  The host
// submits a whole iteration (STREAMS x KERNELS launches) long before the GPU finishes
// it.
//
//   false_deps_eager [ITERS [STREAMS [KERNELS [ROUNDS]]]]   (false_deps_common.cuh)
#include "false_deps_common.cuh"

struct eager_run {
    fd_args a;
    cudaStream_t s[FD_MAX_STREAMS];
    cudaEvent_t fork, done[FD_MAX_STREAMS], t0, t1;
    unsigned *buf[FD_MAX_STREAMS];
};

// One iteration: t0 and the fork on stream 0, the branches stream by stream, the
// join, t1; then the host waits for t1.
static void iteration(eager_run *r, unsigned salt, double *span_us, double *wall_us)
{
    float ms = 0;
    double w0 = fd_now_us();
    CK(cudaEventRecord(r->t0, r->s[0]));
    CK(cudaEventRecord(r->fork, r->s[0]));
    for (int b = 1; b < r->a.streams; b++)
        CK(cudaStreamWaitEvent(r->s[b], r->fork, 0));
    for (int b = 0; b < r->a.streams; b++)          // depth first: see the top
        for (int k = 0; k < r->a.kernels; k++) {
            fd_work<<<FD_BLOCKS, FD_BLOCK, 0, r->s[b]>>>(r->buf[b], salt + (unsigned)k, r->a.rounds);
            CK(cudaPeekAtLastError());
        }
    for (int b = 1; b < r->a.streams; b++) {
        CK(cudaEventRecord(r->done[b], r->s[b]));
        CK(cudaStreamWaitEvent(r->s[0], r->done[b], 0));
    }
    CK(cudaEventRecord(r->t1, r->s[0]));
    CK(cudaEventSynchronize(r->t1));
    CK(cudaEventElapsedTime(&ms, r->t0, r->t1));
    *span_us = ms * 1000.0;
    *wall_us = fd_now_us() - w0;
}

int main(int argc, char **argv)
{
    eager_run r;
    std::vector<double> span, wall;
    r.a = fd_parse(argc, argv);
    CK(cudaEventCreate(&r.t0));
    CK(cudaEventCreate(&r.t1));
    CK(cudaEventCreateWithFlags(&r.fork, cudaEventDisableTiming));
    for (int b = 0; b < r.a.streams; b++) {
        CK(cudaStreamCreateWithFlags(&r.s[b], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&r.done[b], cudaEventDisableTiming));
        CK(cudaMalloc(&r.buf[b], FD_ELEMS * sizeof(unsigned)));
        CK(cudaMemset(r.buf[b], b, FD_ELEMS * sizeof(unsigned)));
    }
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < r.a.iters + 2; i++) {
        double s, w;
        iteration(&r, (unsigned)i * 7919u, &s, &w);
        if (i >= 2) {
            span.push_back(s);
            wall.push_back(w);
        }
    }
    fd_report(span, wall, r.buf, r.a.streams);
    return 0;
}
