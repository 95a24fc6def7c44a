/* query_poll.c -- a loop whose host polls work the loop does not hold (engine_sim.bats:
 * queries that can see nothing held end no window):
 *
 *   query_poll [ITER] [spin|pool|watch]
 *
 * Each iteration: 24 launches on a created stream s, with, after a number of them that
 * changes every iteration, a cuStreamQuery of another created stream s2 and a
 * cuEventQuery of an event recorded on s2 (as a watchdog polls a communication
 * stream); every 50th iteration also a cuEventQuery of an event just recorded on s
 * (it sees held work: the window must end there); then cuStreamSynchronize(s).  stdout:
 * "sum N" over the buffer and the number of queries that returned CUDA_SUCCESS.
 * With `spin` the loop never synchronizes: the host spins on cuEventQuery of the
 * event recorded on s until it returns CUDA_SUCCESS, as a program that polls does.
 * With `pool` each iteration first does what PyTorch's pinned-memory pool does as a
 * step frees last step's batch and takes a new one: a cuEventRecord of e_pool on s,
 * then a cuEventQuery of it (counted in "ready") and a cuMemcpyHtoDAsync of the batch
 * from pinned memory, which a saxpy adds into `acc`, all inside the window the step's
 * launches make; stdout then ends with "acc N", acc's sum.
 * With `watch` a second thread, which submits no work, polls e_s with cuEventQuery
 * once an iteration, 0-150 us after it started, as PyTorch's NCCL watchdog polls the
 * end events of collectives, and the host spends 5 us of its own after each launch:
 * the watchdog's queries come at places of the window that vary with timing (stderr:
 * "watchdog: N queries, R ready").
 */
#include "prog.h"

#include <pthread.h>
#include <string.h>
#include <sched.h>
#include <time.h>

struct watchdog {
    CUcontext ctx;
    CUevent event;
    int stop, iteration;        /* set by the main thread, atomically */
    long queries, ready;
};

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* Once an iteration (it waits for the next one to start, so however slow the run,
 * sanitizers included), after a delay of 0-150 us that varies, one query of e_s. */
static void *watchdog_run(void *arg)
{
    struct watchdog *w = arg;
    int seen = 0;
    CK(cuCtxSetCurrent(w->ctx));
    while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
        int now = __atomic_load_n(&w->iteration, __ATOMIC_ACQUIRE);
        if (now == seen) {
            sched_yield();
            continue;
        }
        seen = now;
        for (long t0 = now_us(), wait = (w->queries * 37) % 151; now_us() - t0 < wait;)
            sched_yield();
        CUresult r = cuEventQuery(w->event);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
            CK(r);
        w->queries++;
        w->ready += r == CUDA_SUCCESS;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one, saxpy; CUstream s, s2;
    CUevent e_s, e_s2, e_pool; CUdeviceptr a, batch, acc; float *pinned;
    int n = PROG_N, iters = argc > 1 ? atoi(argv[1]) : 200, ready = 0;
    int spin = argc > 2 && strcmp(argv[2], "spin") == 0;
    int pool = argc > 2 && strcmp(argv[2], "pool") == 0;
    int watch = argc > 2 && strcmp(argv[2], "watch") == 0;
    struct watchdog dog = { 0 };
    pthread_t dog_thread;
    void *aa[] = { &a, &n };
    int h[PROG_N];
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&saxpy, mod, "saxpy"));
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamCreate(&s2, 0));
    CK(cuEventCreate(&e_s, 0));
    CK(cuEventCreate(&e_s2, 0));
    CK(cuEventCreate(&e_pool, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemAlloc(&batch, PROG_N * 4));
    CK(cuMemAlloc(&acc, PROG_N * 4));
    CK(cuMemsetD32(acc, 0, PROG_N));
    CK(cuMemHostAlloc((void **)&pinned, PROG_N * 4, 0));
    float one = 1.0f;
    void *sa[] = { &one, &batch, &acc, &n };
    CK(cuMemsetD32(a, 0, PROG_N));
    CK(cuEventRecord(e_s2, s2));
    if (watch) {
        CK(cuEventRecord(e_s, s));
        dog.ctx = ctx;
        dog.event = e_s;
        if (pthread_create(&dog_thread, NULL, watchdog_run, &dog) != 0)
            return 1;
    }
    for (int it = 0; it < iters; it++) {
        int poll_at = (it * 7) % 24;
        __atomic_store_n(&dog.iteration, it + 1, __ATOMIC_RELEASE);
        if (pool) {
            CK(cuEventRecord(e_pool, s));
            ready += cuEventQuery(e_pool) == CUDA_SUCCESS;
            for (int i = 0; i < PROG_N; i++)
                pinned[i] = (float)(it % 64 + i);
            CK(cuMemcpyHtoDAsync(batch, pinned, PROG_N * 4, s));
            CK(cuLaunchKernel(saxpy, 1, 1, 1, PROG_N, 1, 1, 0, s, sa, NULL));
        }
        for (int k = 0; k < 24; k++) {
            if (k == poll_at) {
                ready += cuStreamQuery(s2) == CUDA_SUCCESS;
                ready += cuEventQuery(e_s2) == CUDA_SUCCESS;
            }
            CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
            if (watch)
                prog_busy_us(5);            /* the host's own work per op */
            if (k == 20)
                CK(cuEventRecord(e_s, s));
            if (k == 21 && it % 50 == 49)
                ready += cuEventQuery(e_s) == CUDA_SUCCESS;   /* sees held work */
        }
        if (spin)
            while (cuEventQuery(e_s) == CUDA_ERROR_NOT_READY)
                ;
        else
            CK(cuStreamSynchronize(s));
    }
    if (watch) {
        __atomic_store_n(&dog.stop, 1, __ATOMIC_RELEASE);
        pthread_join(dog_thread, NULL);
        fprintf(stderr, "watchdog: %ld queries, %ld ready\n", dog.queries, dog.ready);
    }
    CK(cuMemcpyDtoH(h, a, sizeof h));
    printf("sum %ld ready %d", prog_sum_int(h, PROG_N), ready);
    if (pool) {
        float f[PROG_N];
        double total = 0;
        CK(cuMemcpyDtoH(f, acc, sizeof f));
        for (int i = 0; i < PROG_N; i++)
            total += f[i];
        printf(" acc %.1f", total);
    }
    printf("\n");
    return 0;
}
