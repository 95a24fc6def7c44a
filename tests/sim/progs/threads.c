/* threads.c -- 8 threads, each launching onto its own stream (created in
 * order by the main thread, so stream labels and allocation ordinals are
 * deterministic; the order of log lines across threads is not -- compare logs
 * sorted).  Counts: cuLaunchKernel 8 * ITERS.
 */
#include "prog.h"

#include <pthread.h>

#define THREADS 8
#define ITERS 25

static CUcontext ctx;
static CUfunction add_one, scale;

typedef struct work {
    int id;
    CUstream s;
    CUdeviceptr p;
    int h[PROG_N];
} work;

static void *worker(void *arg)
{
    work *w = arg;
    int n = PROG_N, factor = 1 + w->id % 2;
    void *add_args[] = { &w->p, &n }, *scale_args[] = { &w->p, &factor, &n };
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemsetD32Async(w->p, (unsigned)w->id, PROG_N, w->s));
    for (int i = 0; i < ITERS; i++) {
        if (i % 5 == 4)
            CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, w->s, scale_args, NULL));
        else
            CK(cuLaunchKernel(add_one, 2, 1, 1, 128, 1, 1, 0, w->s, add_args, NULL));
    }
    CK(cuMemcpyDtoHAsync(w->h, w->p, sizeof w->h, w->s));
    CK(cuStreamSynchronize(w->s));
    return NULL;
}

int main(void)
{
    CUmodule mod;
    pthread_t t[THREADS];
    static work w[THREADS];

    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    for (int i = 0; i < THREADS; i++) {
        w[i].id = i;
        CK(cuStreamCreate(&w[i].s, CU_STREAM_NON_BLOCKING));
        CK(cuMemAlloc(&w[i].p, sizeof w[i].h));
    }
    for (int i = 0; i < THREADS; i++) {
        if (pthread_create(&t[i], NULL, worker, &w[i]) != 0)
            return 1;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++)
        printf("thread %d: p[0]=%d sum=%ld\n", i, w[i].h[0], prog_sum_int(w[i].h, PROG_N));
    return 0;
}
