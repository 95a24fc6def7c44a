// false_deps_common.cuh -- what the false-dependency workloads of gpu_validate.sh share
// (false_deps_eager.cu, false_deps_graph.cu): their arguments, the long few-block
// kernel, and the timing lines they print.
//
//   PROGRAM [ITERS [STREAMS [KERNELS [ROUNDS]]]]
//
// ITERS timed iterations (default 20, after 2 untimed), STREAMS independent branches
// (default 8), KERNELS kernels per branch (default 4), ROUNDS rounds of integer mixing
// per element (default 10000: a kernel of a few hundred microseconds, so that a branch
// takes several times as long as the host takes to submit an iteration, even under a
// tracer: the spans are set by the GPU, not by the host).  Each kernel is 2 blocks of 128
// threads, so every branch fits on the GPU at once and only the hardware channels
// (CUDA_DEVICE_MAX_CONNECTIONS) can serialize them.
//
// stderr: "span_us X" (median over the timed iterations of the GPU span, from events
// recorded before the first and after the last kernel), "wall_us X" (median host time of
// an iteration, submission to synchronization), "iters N".  stdout: a checksum.
#ifndef FALSE_DEPS_COMMON_CUH
#define FALSE_DEPS_COMMON_CUH

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vector>

#include "../../gpu/prog_common.cuh"

#define FD_BLOCK 128
#define FD_BLOCKS 2
#define FD_ELEMS (FD_BLOCK * FD_BLOCKS)
#define FD_MAX_STREAMS 32

struct fd_args {
    int iters, streams, kernels, rounds;
};

static fd_args fd_parse(int argc, char **argv)
{
    fd_args a = { 20, 8, 4, 10000 };
    if (argc > 1) a.iters = atoi(argv[1]);
    if (argc > 2) a.streams = atoi(argv[2]);
    if (argc > 3) a.kernels = atoi(argv[3]);
    if (argc > 4) a.rounds = atoi(argv[4]);
    if (a.iters < 1 || a.streams < 1 || a.streams > FD_MAX_STREAMS || a.kernels < 1 ||
        a.rounds < 0) {
        fprintf(stderr, "usage: %s [ITERS [STREAMS (1..%d) [KERNELS [ROUNDS]]]]\n", argv[0],
                FD_MAX_STREAMS);
        exit(2);
    }
    return a;
}

// x = ROUNDS of mixing of x: long, and on 2 blocks only.
__global__ void fd_work(unsigned *x, unsigned salt, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    for (int r = 0; r < rounds; r++)
        v = mix32(v + salt + (unsigned)r);
    x[i] = v;
}

static double fd_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double fd_median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// The timing lines, and a checksum of the buffers on stdout.
static void fd_report(const std::vector<double> &span, const std::vector<double> &wall,
                      unsigned *const *bufs, int n)
{
    unsigned long long sum = 0;
    std::vector<unsigned> h(FD_ELEMS);
    for (int b = 0; b < n; b++) {
        CK(cudaMemcpy(h.data(), bufs[b], FD_ELEMS * sizeof(unsigned), cudaMemcpyDeviceToHost));
        for (unsigned v : h)
            sum = sum * 1099511628211ull + v;
    }
    printf("checksum %016llx\n", sum);
    fprintf(stderr, "span_us %.3f\nwall_us %.3f\niters %zu\n", fd_median(span), fd_median(wall),
            span.size());
}

#endif
