/* host_funcs.c -- host functions in a loop, as the CUDA samples' callbacks and XLA
 * use them (engine_sim.bats: host functions are graphed, never held past their call):
 *
 *   host_funcs [ITER] [wait|each]
 *
 * Each iteration on a created stream s: three add_one on a, cuLaunchHostFunc(stamp)
 * with one of two records (alternate iterations), a cuMemcpyDtoHAsync of a into
 * pinned memory, add_two on a, cuLaunchHostFunc(check) with the same record, then
 * cuStreamSynchronize(s).  stamp notes the iteration the host set in the record
 * before it enqueued the iteration and how many host functions ran before it; check
 * sums the pinned copy (done before it runs, in stream order).  With `wait` the host
 * waits after enqueueing stamp until stamp has run, spinning on a flag it sets,
 * without a CUDA call (as a program that waits on a callback does); after 5 s it
 * gives up: "host function never ran", exit 1.  With `each` an iteration is instead
 * eight add_one, each followed by a host function (check), as JAX dispatching op by
 * op does, then the sync.  stdout: "sum N calls N hash N".
 */
#include "prog.h"

#include <string.h>

struct record {
    volatile int iter;          /* set by the host before it enqueues the iteration */
    volatile int ran;           /* set by stamp */
    const int *pinned;          /* the copy check sums */
};

static unsigned long long g_hash = 1469598103934665603ull;
static int g_calls;

static void fold(long v)
{
    g_hash = (g_hash ^ (unsigned long long)v) * 1099511628211ull;
}

static void CUDA_CB stamp(void *p)
{
    struct record *r = p;
    fold(r->iter);
    fold(g_calls++);
    __atomic_store_n(&r->ran, 1, __ATOMIC_RELEASE);
}

static void CUDA_CB check(void *p)
{
    struct record *r = p;
    fold(prog_sum_int(r->pinned, PROG_N));
    g_calls++;
}

static void wait_for(struct record *r)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!__atomic_load_n(&r->ran, __ATOMIC_ACQUIRE)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 5) {
            fprintf(stderr, "host function never ran (iteration %d)\n", r->iter);
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one, add_two; CUstream s;
    CUdeviceptr a; int *pinned, n = PROG_N, h[PROG_N];
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    int wait = argc > 2 && strcmp(argv[2], "wait") == 0;
    int each = argc > 2 && strcmp(argv[2], "each") == 0;
    struct record rec[2];
    void *aa[] = { &a, &n };
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&add_two, mod, "add_two"));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemsetD32(a, 0, PROG_N));
    CK(cuMemHostAlloc((void **)&pinned, PROG_N * 4, 0));
    for (int k = 0; k < 2; k++)
        rec[k] = (struct record){ .iter = -1, .ran = 0, .pinned = pinned };
    for (int it = 0; it < iters; it++) {
        struct record *r = &rec[it % 2];
        r->iter = it;
        r->ran = 0;
        for (int k = 0; each && k < 8; k++) {
            CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
            CK(cuLaunchHostFunc(s, check, r));
        }
        for (int k = 0; !each && k < 3; k++)
            CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
        if (!each) {
            CK(cuLaunchHostFunc(s, stamp, r));
            if (wait)
                wait_for(r);
            CK(cuMemcpyDtoHAsync(pinned, a, PROG_N * 4, s));
            CK(cuLaunchKernel(add_two, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
            CK(cuLaunchHostFunc(s, check, r));
        }
        CK(cuStreamSynchronize(s));
    }
    CK(cuMemcpyDtoH(h, a, sizeof h));
    printf("sum %ld calls %d hash %llu\n", prog_sum_int(h, PROG_N), g_calls, g_hash);
    return 0;
}
