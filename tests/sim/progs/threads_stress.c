/* threads_stress.c -- 8 threads, each with its own stream and a repeating window
 * (4 launches, an event record, a sync) so that the engine builds and replays graphs
 * while the others run; every third iteration a thread's stream also waits on its
 * neighbour's event, and every fifth it launches onto one stream shared by all
 * threads (under a mutex, each thread on its own slice of a shared buffer).
 * Results do not depend on the interleaving; the log does only in its order
 * (compare it sorted).  Counts: cuLaunchKernel 8 * ITERS * 4 + 8 * (ITERS / 5).
 */
#include "prog.h"

#include <pthread.h>

#define THREADS 8
#define ITERS 60

static CUcontext ctx;
static CUfunction add_one, scale;
static CUstream shared_stream;
static CUdeviceptr shared_buf;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct work {
    int id;
    CUstream s;
    CUevent done;
    CUdeviceptr p;
    int h[PROG_N];
} work;

static work w[THREADS];

static void window(work *me, int i)
{
    int n = PROG_N, factor = 1 + (i % 3 == 0);
    void *add_args[] = { &me->p, &n }, *scale_args[] = { &me->p, &factor, &n };
    if (i % 3 == 2)
        CK(cuStreamWaitEvent(me->s, w[(me->id + 1) % THREADS].done, 0));
    CK(cuLaunchKernel(add_one, 2, 1, 1, 128, 1, 1, 0, me->s, add_args, NULL));
    CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, me->s, scale_args, NULL));
    CK(cuLaunchKernel(add_one, 2, 1, 1, 128, 1, 1, 0, me->s, add_args, NULL));
    CK(cuLaunchKernel(add_one, 2, 1, 1, 128, 1, 1, 0, me->s, add_args, NULL));
    CK(cuEventRecord(me->done, me->s));
    CK(cuStreamSynchronize(me->s));
}

static void shared_launch(work *me)
{
    CUdeviceptr slice = shared_buf + (CUdeviceptr)me->id * 32 * sizeof(int);
    int n = 32;
    void *args[] = { &slice, &n };
    pthread_mutex_lock(&shared_lock);
    CK(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, shared_stream, args, NULL));
    pthread_mutex_unlock(&shared_lock);
}

static void *worker(void *arg)
{
    work *me = arg;
    CK(cuCtxSetCurrent(ctx));
    for (int i = 0; i < ITERS; i++) {
        window(me, i);
        if (i % 5 == 4)
            shared_launch(me);
    }
    CK(cuMemcpyDtoHAsync(me->h, me->p, sizeof me->h, me->s));
    CK(cuStreamSynchronize(me->s));
    return NULL;
}

int main(void)
{
    CUmodule mod;
    pthread_t t[THREADS];
    int shared_h[THREADS * 32];

    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&shared_stream, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc_v2(&shared_buf, sizeof shared_h));
    CK(cuMemsetD32_v2(shared_buf, 0, THREADS * 32));
    for (int i = 0; i < THREADS; i++) {
        w[i].id = i;
        CK(cuStreamCreate(&w[i].s, CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate(&w[i].done, CU_EVENT_DISABLE_TIMING));
        CK(cuMemAlloc_v2(&w[i].p, sizeof w[i].h));
        CK(cuMemsetD32_v2(w[i].p, (unsigned)i, PROG_N));
        CK(cuEventRecord(w[i].done, w[i].s));
    }
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, &w[i]) != 0)
            return 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CK(cuStreamSynchronize(shared_stream));
    CK(cuMemcpyDtoH_v2(shared_h, shared_buf, sizeof shared_h));
    for (int i = 0; i < THREADS; i++)
        printf("thread %d: p[0]=%d sum=%ld shared=%ld\n", i, w[i].h[0],
               prog_sum_int(w[i].h, PROG_N), prog_sum_int(shared_h + 32 * i, 32));
    return 0;
}
