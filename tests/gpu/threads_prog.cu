// threads_prog.cu -- GPU test program: kernels launched from several threads at once
// (issue 4 item 4; tests/gpu/safety.bats).
//
// Built by tests/gpu/gpu.mk as build/gpu/threads_static, threads_shared and threads_ptds
// (--default-stream per-thread).
//
//   threads_prog MODE THREADS ITERS
//     streams  each thread its own non-blocking stream.  Phase 1: ITERS windows per thread,
//              free-running (no coordination between threads): K kernels on the thread's
//              buffer a, cudaStreamSynchronize.  Phase 2: ITERS steps in lockstep: K kernels
//              on a, cudaEventRecord(E[t]); barrier; cudaStreamWaitEvent(own stream,
//              E[t+1]) (an event another thread recorded), kernels that read the next
//              thread's a into the thread's b; cudaStreamSynchronize; barrier.
//     shared   one non-blocking stream for every thread: each window (K kernels on the
//              thread's slice of x) is submitted under a mutex; cudaStreamSynchronize of
//              the shared stream every 3rd window, outside the mutex.
//     default  stream 0: the legacy default stream in threads_static/threads_shared, each
//              thread's own per-thread default stream in threads_ptds.  K kernels on the
//              thread's slice of x, cudaStreamSynchronize(0); cudaDeviceSynchronize every
//              16th window.
//
// The kernels do not commute (x = 3x + k), so lost, repeated or reordered work changes
// the bytes; threads touch disjoint memory (or read it only after an event wait), so the
// result does not depend on how the threads interleave.  stdout: one hash line per buffer;
// stderr: expected_launches N.  Every CUDA call is checked; an error exits 2.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.cuh"

enum { MAX_THREADS = 64, K = 6, T = 128, N = 4096 };

struct shared_state {
    const char *mode;
    int nthreads, iters;
    pthread_barrier_t barrier;
    pthread_mutex_t mutex;
    cudaStream_t common;                 // shared
    unsigned *x;                         // shared, default: slice t is x + t*T
    cudaStream_t s[MAX_THREADS];         // streams
    cudaEvent_t e[MAX_THREADS];
    unsigned *a[MAX_THREADS], *b[MAX_THREADS];
};

struct thread_arg {
    struct shared_state *st;
    int t;
};

// The K kernels of one window of thread t on `s`, over T elements at `x`.
static void tiny_window(unsigned *x, int t, int it, cudaStream_t s)
{
    for (int j = 0; j < K; j++)
        KL(k_tiny<<<1, T, 0, s>>>(x, (unsigned)(t * 1000 + j * 10 + (it & 1))));
}

static void run_streams(struct shared_state *st, int t)
{
    cudaStream_t s = st->s[t];
    int next = (t + 1) % st->nthreads;
    for (int it = 0; it < st->iters; it++) {         // phase 1: free-running
        tiny_window(st->a[t], t, it, s);
        CK(cudaStreamSynchronize(s));
    }
    for (int it = 0; it < st->iters; it++) {         // phase 2: lockstep, cross-thread waits
        for (int j = 0; j < K; j++)
            KL(k_affine<<<N / 256, 256, 0, s>>>(st->a[t], N, 3u, (unsigned)(t + j)));
        CK(cudaEventRecord(st->e[t], s));
        pthread_barrier_wait(&st->barrier);
        CK(cudaStreamWaitEvent(s, st->e[next], 0));
        KL(k_heavy<<<N / 256, 256, 0, s>>>(st->b[t], st->a[next], N, (unsigned)t, 4));
        KL(k_affine<<<N / 256, 256, 0, s>>>(st->b[t], N, 5u, 1u));
        CK(cudaStreamSynchronize(s));
        pthread_barrier_wait(&st->barrier);
    }
}

static void run_shared(struct shared_state *st, int t)
{
    for (int it = 0; it < st->iters; it++) {
        pthread_mutex_lock(&st->mutex);
        tiny_window(st->x + t * T, t, it, st->common);
        pthread_mutex_unlock(&st->mutex);
        if (it % 3 == 2)
            CK(cudaStreamSynchronize(st->common));
    }
}

static void run_default(struct shared_state *st, int t)
{
    for (int it = 0; it < st->iters; it++) {
        tiny_window(st->x + t * T, t, it, 0);
        CK(cudaStreamSynchronize(0));
        if (it % 16 == 15)
            CK(cudaDeviceSynchronize());
    }
}

static void *thread_main(void *p)
{
    struct thread_arg *ta = (struct thread_arg *)p;
    struct shared_state *st = ta->st;
    pthread_barrier_wait(&st->barrier);              // all start together
    if (!strcmp(st->mode, "streams"))
        run_streams(st, ta->t);
    else if (!strcmp(st->mode, "shared"))
        run_shared(st, ta->t);
    else
        run_default(st, ta->t);
    return NULL;
}

static int run(struct shared_state *st)
{
    int n = st->nthreads;
    cudaStream_t s0 = new_stream();
    if (!strcmp(st->mode, "streams")) {
        for (int t = 0; t < n; t++) {
            st->s[t] = new_stream();
            st->e[t] = new_event();
            st->a[t] = dev_u(N, 100u + (unsigned)t, s0);
            st->b[t] = dev_u(N, 200u + (unsigned)t, s0);
        }
    } else {
        st->common = new_stream();
        st->x = dev_u(n * T, 7u, s0);
    }
    CK(cudaStreamSynchronize(s0));

    pthread_t th[MAX_THREADS];
    struct thread_arg ta[MAX_THREADS];
    if (pthread_barrier_init(&st->barrier, NULL, (unsigned)n) ||
        pthread_mutex_init(&st->mutex, NULL))
        return 2;
    for (int t = 0; t < n; t++) {
        ta[t].st = st;
        ta[t].t = t;
        if (pthread_create(&th[t], NULL, thread_main, &ta[t])) {
            fprintf(stderr, "cannot start thread %d\n", t);
            return 2;
        }
    }
    for (int t = 0; t < n; t++)
        if (pthread_join(th[t], NULL))
            return 2;
    CK(cudaDeviceSynchronize());

    char name[16];
    if (!strcmp(st->mode, "streams")) {
        for (int t = 0; t < n; t++) {
            snprintf(name, sizeof name, "a%d", t);
            print_dev(name, st->a[t], N * sizeof(unsigned));
            snprintf(name, sizeof name, "b%d", t);
            print_dev(name, st->b[t], N * sizeof(unsigned));
            CK(cudaFree(st->a[t]));
            CK(cudaFree(st->b[t]));
            CK(cudaEventDestroy(st->e[t]));
            CK(cudaStreamDestroy(st->s[t]));
        }
    } else {
        for (int t = 0; t < n; t++) {
            snprintf(name, sizeof name, "x%d", t);
            print_dev(name, st->x + t * T, T * sizeof(unsigned));
        }
        CK(cudaFree(st->x));
        CK(cudaStreamDestroy(st->common));
    }
    CK(cudaStreamDestroy(s0));
    return 0;
}

int main(int argc, char **argv)
{
    static struct shared_state st;
    if (argc != 4 || !posint(argv[2], &st.nthreads) || st.nthreads > MAX_THREADS ||
        !posint(argv[3], &st.iters) ||
        (strcmp(argv[1], "streams") && strcmp(argv[1], "shared") && strcmp(argv[1], "default"))) {
        fprintf(stderr, "usage: %s streams|shared|default THREADS(1..%d) ITERS\n", argv[0],
                MAX_THREADS);
        return 2;
    }
    st.mode = g_mode = argv[1];
    return finish(run(&st));
}
