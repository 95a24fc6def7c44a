// fanout_prog.cu -- GPU program of tests/gpu/trace.bats (issue 6's proof): the program's
// own CUDA graph, built with the explicit graph API, with more independent branches than
// one graph of the shim can hold and than the GPU runs at once.
//
//   fanout_prog ITERS [B] [K] [ROUNDS]
//
// The graph: a head kernel mixes acc; B independent chains of K kernels follow it (chain b
// works on its own buffer; its first kernel reads acc); a tail kernel folds every chain's
// buffer into acc.  Each chain kernel is one block of 64 threads doing ROUNDS rounds of
// integer mixing per element (default 4000: a few tens of us), so B up to a few hundred
// fit on the GPU's SMs at once and only the scheduling of the branches (hardware
// channels, queues) can serialize them.  The program instantiates the graph once and
// launches it ITERS times, each followed by cudaStreamSynchronize.  B defaults to 64,
// K to 1.
//
// stdout: "acc bytes <n> fnv1a64 <hex>" and one line per chain buffer, the same with and
// without the shim.  stderr: "replay_us X" (median of the timed launches' wall time).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prog_common.cuh"

#define MAX_BRANCHES 1024
#define THREADS 64

__global__ void k_mix(unsigned *x, const unsigned *acc, unsigned salt, int rounds)
{
    int i = threadIdx.x;
    unsigned v = x[i] ^ (acc ? acc[i] : 0u);
    for (int r = 0; r < rounds; r++)
        v = mix32(v + salt + (unsigned)r);
    x[i] = v;
}

// acc = acc folded with every chain buffer, in chain order (bufs: one array of nb * THREADS)
__global__ void k_fold_all(unsigned *acc, const unsigned *bufs, int nb)
{
    int i = threadIdx.x;
    unsigned v = acc[i];
    for (int j = 0; j < nb; j++)
        v = mix32(v ^ bufs[(size_t)j * THREADS + i]);
    acc[i] = v;
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                  void *fn, void **args)
{
    cudaKernelNodeParams p = {};
    cudaGraphNode_t node;
    p.func = fn;
    p.gridDim = dim3(1);
    p.blockDim = dim3(THREADS);
    p.kernelParams = args;
    CK(cudaGraphAddKernelNode(&node, g, deps, ndeps, &p));
    return node;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int iters = 0, nb = 64, k = 1, rounds = 4000;
    g_mode = "fanout";
    if (argc < 2 || argc > 5 || !posint(argv[1], &iters) || (argc > 2 && !posint(argv[2], &nb)) ||
        (argc > 3 && !posint(argv[3], &k)) || (argc > 4 && !posint(argv[4], &rounds)) ||
        nb > MAX_BRANCHES) {
        fprintf(stderr, "usage: fanout_prog ITERS [B (1..%d)] [K] [ROUNDS]\n", MAX_BRANCHES);
        return 1;
    }
    cudaStream_t s = new_stream();
    unsigned *acc = dev_u(THREADS, 7u, s), *bufs = dev_u(nb * THREADS, 100u, s);
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));

    // Argument storage lives until the graph is instantiated (the node copies it).
    unsigned *null_acc = NULL, head_salt = 0x5eedu;
    int head_rounds = rounds / 8;
    void *head_args[] = { &acc, &null_acc, &head_salt, &head_rounds };
    cudaGraphNode_t head = add_kernel(g, NULL, 0, (void *)k_mix, head_args);
    cudaGraphNode_t *tails = (cudaGraphNode_t *)calloc((size_t)nb, sizeof *tails);
    for (int b = 0; b < nb; b++) {
        cudaGraphNode_t prev = head;
        for (int j = 0; j < k; j++) {
            unsigned *x = bufs + (size_t)b * THREADS, salt = (unsigned)(b * 31 + j);
            const unsigned *in = j ? NULL : acc;
            void *args[] = { &x, &in, &salt, &rounds };
            prev = add_kernel(g, &prev, 1, (void *)k_mix, args);
        }
        tails[b] = prev;
    }
    void *fold_args[] = { &acc, &bufs, &nb };
    add_kernel(g, tails, (size_t)nb, (void *)k_fold_all, fold_args);

    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, g, 0));
    CK(cudaGraphLaunch(exec, s));                  // untimed: upload, lazy initialisation
    CK(cudaStreamSynchronize(s));
    double *t = (double *)calloc((size_t)iters, sizeof *t);
    for (int it = 0; it < iters; it++) {
        double t0 = now_us();
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        t[it] = now_us() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, by_value);
    fprintf(stderr, "replay_us %.3f\n", t[iters / 2]);
    print_dev("acc", acc, THREADS * sizeof(unsigned));
    print_dev("bufs", bufs, (size_t)nb * THREADS * sizeof(unsigned));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    free(tails);
    free(t);
    return finish(0);
}
