// branches_prog.cu -- GPU program of tests/gpu/trace.bats and tests/bench/trace_bench.sh: a
// fork-join graph with more independent branches than the GPU's hardware channels.
//
//   branches_prog ITERS [B] [K] [ROUNDS]
//
// One iteration (one window of the shim: it ends at the stream sync): on s0 a head
// kernel mixes acc; an event there forks streams s1..s(B-1); every branch b (s0 is
// branch 0) runs K kernels on its own buffer (each reads acc, so every branch depends on
// the head), each kernel 2 blocks of 128 threads doing ROUNDS rounds of integer mixing
// per element (default 1500: about 30 us on an H100; few blocks, so all branches fit on
// the GPU at once and only the channels can serialize them); every branch but s0 records
// an event that s0 waits for; a tail kernel on s0 folds every branch buffer into acc;
// cudaStreamSynchronize(s0).  B defaults to 16 (s0 + 15 streams: the most streams one
// graph of the shim holds), K to 3.  Under the shim, with AUTOGRAPH_CHUNK=256, each
// iteration after the warm-up is one graph: head -> B independent chains of K -> tail.
//
// stdout: "<buffer> bytes <n> fnv1a64 <hex>" per branch buffer and acc, the same with
// and without the shim.  stderr: "loop_us_per_iter X" (wall time of the ITERS
// iterations / ITERS, after one untimed iteration) and "expected_launches N".
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prog_common.cuh"

#define MAX_BRANCHES 16
#define BLOCK 128
#define BLOCKS 2
#define ELEMS (BLOCK * BLOCKS)

struct branch_bufs {
    unsigned *p[MAX_BRANCHES];
};

// x = ROUNDS of mixing of x ^ acc (acc NULL: x alone)
__global__ void k_work(unsigned *x, const unsigned *acc, unsigned salt, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i] ^ (acc ? acc[i] : 0u);
    for (int r = 0; r < rounds; r++)
        v = mix32(v + salt + (unsigned)r);
    x[i] = v;
}

// acc = acc folded with every branch buffer, in branch order
__global__ void k_fold(unsigned *acc, branch_bufs b, int nb)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = acc[i];
    for (int j = 0; j < nb; j++)
        v = mix32(v ^ b.p[j][i]);
    acc[i] = v;
}

struct work {
    int b, k, rounds;
    cudaStream_t s[MAX_BRANCHES];
    cudaEvent_t fork, join[MAX_BRANCHES];
    branch_bufs bufs;
    unsigned *acc;
};

static void iteration(const work &w)
{
    KL(k_work<<<BLOCKS, BLOCK, 0, w.s[0]>>>(w.acc, NULL, 0x5eedu, w.rounds / 8));
    CK(cudaEventRecord(w.fork, w.s[0]));
    for (int b = 1; b < w.b; b++)
        CK(cudaStreamWaitEvent(w.s[b], w.fork, 0));
    for (int b = 0; b < w.b; b++) {
        for (int k = 0; k < w.k; k++)
            KL(k_work<<<BLOCKS, BLOCK, 0, w.s[b]>>>(w.bufs.p[b], k ? NULL : w.acc,
                                                    (unsigned)(b * 31 + k), w.rounds));
        if (b > 0)
            CK(cudaEventRecord(w.join[b], w.s[b]));
    }
    for (int b = 1; b < w.b; b++)
        CK(cudaStreamWaitEvent(w.s[0], w.join[b], 0));
    KL(k_fold<<<BLOCKS, BLOCK, 0, w.s[0]>>>(w.acc, w.bufs, w.b));
    CK(cudaStreamSynchronize(w.s[0]));
}

static int usage(void)
{
    fprintf(stderr, "usage: branches_prog ITERS [B (2..%d)] [K] [ROUNDS]\n", MAX_BRANCHES);
    return 1;
}

int main(int argc, char **argv)
{
    work w;
    int iters = 0;
    char name[32];
    memset(&w, 0, sizeof w);
    w.b = MAX_BRANCHES, w.k = 3, w.rounds = 1500;
    g_mode = "branches";
    if (argc < 2 || argc > 5 || !posint(argv[1], &iters) || (argc > 2 && !posint(argv[2], &w.b)) ||
        (argc > 3 && !posint(argv[3], &w.k)) || (argc > 4 && !posint(argv[4], &w.rounds)) ||
        w.b < 2 || w.b > MAX_BRANCHES)
        return usage();
    for (int b = 0; b < w.b; b++) {
        w.s[b] = new_stream();
        w.join[b] = new_event();
        w.bufs.p[b] = dev_u(ELEMS, 100u + (unsigned)b, w.s[0]);
    }
    w.fork = new_event();
    w.acc = dev_u(ELEMS, 7u, w.s[0]);
    CK(cudaDeviceSynchronize());
    iteration(w);                                  // untimed: lazy initialisation
    double t0 = now_us();
    for (int it = 0; it < iters; it++)
        iteration(w);
    fprintf(stderr, "loop_us_per_iter %.3f\n", (now_us() - t0) / iters);
    for (int b = 0; b < w.b; b++) {
        snprintf(name, sizeof name, "branch%d", b);
        print_dev(name, w.bufs.p[b], ELEMS * sizeof(unsigned));
    }
    print_dev("acc", w.acc, ELEMS * sizeof(unsigned));
    return finish(0);
}
