// loop_timing.cuh -- the host helpers of the GPU programs that time a loop
// (solver_prog.cu, alloc_loop_prog.cu, trainer_prog.cu, decode_prog.cu; prog_common.cuh
// takes its clock and hash from here too): the CK check (cuda_check.cuh), FNV-1a over
// exact bytes, the CLOCK_MONOTONIC host clock, the "<what> p50 <x> p90 <y>" percentile
// line, and intarg, the range-checked integer option.  Static definitions: one
// translation unit per program includes it.
#ifndef AG_LOOP_TIMING_CUH
#define AG_LOOP_TIMING_CUH

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuda_check.cuh"

// --- FNV-1a ------------------------------------------------------------------------------

#define FNV_INIT 0xcbf29ce484222325ull

static inline uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

// --- timing ------------------------------------------------------------------------------

// CLOCK_MONOTONIC in microseconds
static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// Sorts v[0..n) and prints "<what> p50 <x> p90 <y>" (element (n-1)/2 and (n-1)*0.9 of the
// sorted samples, in us with 2 decimals); "<what> p50 nan p90 nan" when there are none.
static inline void print_percentiles(const char *what, double *v, int n)
{
    if (n <= 0) {
        printf("%s p50 nan p90 nan\n", what);
        return;
    }
    qsort(v, n, sizeof *v, cmp_d);
    printf("%s p50 %.2f p90 %.2f\n", what, v[(n - 1) / 2], v[(int)((n - 1) * 0.9)]);
}

// --- arguments ---------------------------------------------------------------------------

// An integer option in lo..hi; anything else prints "bad number: ..." and exits 1.
static inline int intarg(const char *s, int lo, int hi)
{
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || *e || v < lo || v > hi) {
        fprintf(stderr, "bad number: %s (%d..%d)\n", s, lo, hi);
        exit(1);
    }
    return (int)v;
}

#endif
