// mode_loop.cuh -- the harness of the GPU programs made of named loop modes
// (samples_prog.cu, numlib_prog.cu, churn_prog.cu): the iteration count and warm-up, the
// per-iteration host times, the FNV-1a hash of everything the host read back, a checked
// event time, and main() itself, which picks a mode by name from the program's table.
// Static definitions: one translation unit per program includes it (after
// prog_common.cuh).
//
// A program defines `modes[]` (name, function, default iterations) and calls
// mode_main(argc, argv, "prog_name", modes, count).  The options are
//   --mode M  --iters I  --time  --warmup W
// and stdout gets "iterations <n>", "result <16 hex>" and, with --time,
// "per_iter_us p50 <x> p90 <y>" (at least W+200 iterations are then run).
#ifndef AG_MODE_LOOP_CUH
#define AG_MODE_LOOP_CUH

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop_timing.cuh"

static int g_iters, g_warmup = 100, g_timing, g_ntimes;
static double *g_times, g_block_t0;
static uint64_t g_h = FNV_INIT;

// the end of iteration it, begun at t0 (now_us)
static inline void tick(int it, double t0)
{
    if (g_timing && it >= g_warmup)
        g_times[g_ntimes++] = now_us() - t0;
}

// For a loop that waits for the GPU every `period` iterations: tick_start() before it,
// tick_block(it, period) at the end of each iteration, which takes the time per iteration
// of each period.  (Timing each iteration alone would time only the submission of the
// iterations that do not wait.)
static inline void tick_start(void) { g_block_t0 = now_us(); }

static inline void tick_block(int it, int period)
{
    if ((it + 1) % period)
        return;
    double t = now_us();
    if (g_timing && it >= g_warmup)
        g_times[g_ntimes++] = (t - g_block_t0) / period;
    g_block_t0 = t;
}

static inline void fold(const void *p, size_t n) { g_h = fnv1a(p, n, g_h); }

// Large read backs, 8 times fewer steps: FNV-1a over 64-bit words (the high half of the
// state folded into the low after each, so that every bit reaches every bit), then FNV-1a
// over the tail bytes
static inline void fold_words(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        g_h = (g_h ^ w) * 0x100000001b3ull;
        g_h ^= g_h >> 32;
    }
    g_h = fnv1a(b + i, n - i, g_h);
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    return p;
}

// a device buffer's bytes, copied back (synchronous cudaMemcpy), into the hash
static inline void fold_dev(const void *d, size_t n)
{
    void *h = xmalloc(n);
    CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
    fold_words(h, n);
    free(h);
}

// cudaEventElapsedTime(start, stop) in ms, which must be finite and >= 0 (else exit 2,
// naming iteration it); not for hashing: event times vary from run to run
static inline float elapsed_ms(cudaEvent_t start, cudaEvent_t stop, int it)
{
    float ms = -1.0f;
    CK(cudaEventElapsedTime(&ms, start, stop));
    if (!(ms >= 0.0f) || !isfinite(ms)) {
        fprintf(stderr, "iteration %d: cudaEventElapsedTime gave %g ms\n", it, (double)ms);
        exit(2);
    }
    return ms;
}

// the final state of two device buffers of n words into the hash, then both freed
static inline void fold_free_pair(unsigned *x, unsigned *y, int n)
{
    fold_dev(x, (size_t)n * sizeof(unsigned));
    fold_dev(y, (size_t)n * sizeof(unsigned));
    CK(cudaFree(x));
    CK(cudaFree(y));
}

struct loop_mode {
    const char *name;
    void (*run)(void);
    int iters; // default: a second or two of loop on the GPUs this runs on
};

static inline void mode_usage(const char *prog, const struct loop_mode *modes, size_t n)
{
    fprintf(stderr, "usage: %s --mode ", prog);
    for (size_t k = 0; k < n; k++)
        fprintf(stderr, "%s%s", k ? "|" : "", modes[k].name);
    fprintf(stderr, " [--iters I] [--time] [--warmup W]\n");
    exit(1);
}

static inline int mode_main(int argc, char **argv, const char *prog,
                            const struct loop_mode *modes, size_t n)
{
    const struct loop_mode *m = NULL;
    int iters = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--mode") && a + 1 < argc) {
            a++;
            for (size_t k = 0; k < n; k++)
                if (!strcmp(argv[a], modes[k].name))
                    m = &modes[k];
            if (!m)
                mode_usage(prog, modes, n);
        } else if (!strcmp(argv[a], "--time"))
            g_timing = 1;
        else if (!strcmp(argv[a], "--iters") && a + 1 < argc)
            iters = intarg(argv[++a], 1, 10000000);
        else if (!strcmp(argv[a], "--warmup") && a + 1 < argc)
            g_warmup = intarg(argv[++a], 0, 1000000);
        else
            mode_usage(prog, modes, n);
    }
    if (!m)
        mode_usage(prog, modes, n);
    g_iters = iters ? iters : m->iters;
    if (g_timing && g_iters < g_warmup + 200)
        g_iters = g_warmup + 200;
    g_times = (double *)xmalloc(sizeof(double) * (size_t)g_iters);
    m->run();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("iterations %d\n", g_iters);
    printf("result %016llx\n", (unsigned long long)g_h);
    if (g_timing)
        print_percentiles("per_iter_us", g_times, g_ntimes);
    fflush(stdout);
    free(g_times);
    return 0;
}

#endif
