// capture_prog.cu -- GPU test program: the program's own stream captures and graph
// launches next to the engine (issue 4 item 3; tests/gpu/safety.bats).
//
// Built by tests/gpu/gpu.mk as build/gpu/capture_static and capture_shared.
//
//   capture_prog MODE ROUNDS
//     MODE  global | thread_local | relaxed: cudaStreamBeginCapture with that
//           cudaStreamCaptureMode; tograph: cudaStreamBeginCaptureToGraph into a graph
//           the program created (relaxed)
//
// Every round:
//   1. WARM windows of WIN kernels on stream s, a sync after each: the engine graphs the
//      window and replays it.
//   2. The first HELD kernels of that window and no sync: the engine holds them (they
//      match its graph so far).  Then the program begins capturing s.  The held kernels
//      must run before, outside the capture: inside it they would become nodes of the
//      program's graph (the node count is printed) and run at every launch of it.
//   3. Except in global mode, a helper thread runs its own repeating loop (kernels and
//      cudaStreamSynchronize on its own stream) while s is being captured: legal in the
//      thread_local and relaxed modes, so it must keep working with the shim loaded.
//   4. Captured: a fork/join over s and s2 with events, kernels (one reads the eager
//      window's buffer), a memset and a device-to-device copy; relaxed and tograph also
//      call cudaMalloc inside the capture.  The capture status is printed, the capture
//      ended, the graph's node count printed, the graph instantiated and uploaded.
//   5. The program's graph launched, interleaved with eager repeating windows (which read
//      what the graph wrote): graph + window + sync; part of a window + graph + the rest
//      + sync (held work must be issued before the program's graph launch); the graph on
//      a third stream + sync, then a window + sync.
//
// stdout: "capture ..." lines (status, node counts) and one hash line per buffer, so
// stdout with and without the shim compares byte for byte.  stderr: expected_launches N.
// Every CUDA call is checked; an error prints a message and exits 2.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.cuh"

enum { WIN = 10, HELD = 5, WARM = 12, LOOP_A = 12, LOOP_B = 6, LOOP_C = 4 };
enum { T = 128, N = 1 << 14, HELPER_WINDOWS = 30, HELPER_KERNELS = 8, GRAPH_KERNELS = 5 };

// KC(kernel<<<...>>>(...)): a launch into the capture: checked, not counted (the kernel
// runs, and is counted, at every launch of the graph).
#define KC(...)                                                                        \
    do {                                                                               \
        __VA_ARGS__;                                                                   \
        CK(cudaPeekAtLastError());                                                     \
    } while (0)

struct bufs {
    cudaStream_t s, s2, s3;
    cudaEvent_t fork, join;
    unsigned *x, *y, *z, *w, *scratch;
};

// Kernels [from, to) of the eager window on s: k_tiny on x, then x mixed with the first
// T elements of w (written by the program's graph).
static void window(const struct bufs *b, int from, int to)
{
    for (int j = from; j < to; j++) {
        if (j < WIN - 1)
            KL(k_tiny<<<1, T, 0, b->s>>>(b->x, (unsigned)j * 7u + 1u));
        else
            KL(k_heavy<<<1, T, 0, b->s>>>(b->x, b->w, T, 77u, 2));
    }
}

static void window_sync(const struct bufs *b)
{
    window(b, 0, WIN);
    CK(cudaStreamSynchronize(b->s));
}

// --- the helper thread (every mode but global) ------------------------------------------

struct helper {
    pthread_t th;
    pthread_barrier_t go, done;
    cudaStream_t s;
    unsigned *h;
    int rounds;
};

static void *helper_main(void *p)
{
    struct helper *hp = (struct helper *)p;
    for (int r = 0; r < hp->rounds; r++) {
        pthread_barrier_wait(&hp->go);       // the main thread is capturing now
        for (int it = 0; it < HELPER_WINDOWS; it++) {
            for (int j = 0; j < HELPER_KERNELS; j++)
                KL(k_tiny<<<1, T, 0, hp->s>>>(hp->h, (unsigned)(j + r)));
            CK(cudaStreamSynchronize(hp->s));
        }
        pthread_barrier_wait(&hp->done);
    }
    return NULL;
}

// --- capture --------------------------------------------------------------------------

static const char *status_name(cudaStreamCaptureStatus st)
{
    switch (st) {
    case cudaStreamCaptureStatusNone: return "none";
    case cudaStreamCaptureStatusActive: return "active";
    case cudaStreamCaptureStatusInvalidated: return "invalidated";
    default: return "?";
    }
}

static void print_status(int round, const char *when, cudaStream_t s)
{
    cudaStreamCaptureStatus st, st2;
    CK(cudaStreamIsCapturing(s, &st));
    CK(cudaStreamGetCaptureInfo(s, &st2));
    printf("capture round %d %s is_capturing %s capture_info %s\n", round, when,
           status_name(st), status_name(st2));
}

// The program's own graph of round r, captured on b->s (and b->s2 by fork/join).
static cudaGraph_t capture(const struct bufs *b, const char *mode, int r, struct helper *hp)
{
    cudaStreamCaptureMode cm = !strcmp(mode, "global")         ? cudaStreamCaptureModeGlobal
                               : !strcmp(mode, "thread_local") ? cudaStreamCaptureModeThreadLocal
                                                               : cudaStreamCaptureModeRelaxed;
    int relaxed = cm == cudaStreamCaptureModeRelaxed;
    cudaGraph_t g = NULL, ended = NULL;
    if (!strcmp(mode, "tograph")) {
        CK(cudaGraphCreate(&g, 0));
        CK(cudaStreamBeginCaptureToGraph(b->s, g, NULL, NULL, 0, cm));
    } else {
        CK(cudaStreamBeginCapture(b->s, cm));
    }
    if (hp)
        pthread_barrier_wait(&hp->go);
    print_status(r, "begun", b->s);
    void *extra = NULL;
    if (relaxed)
        CK(cudaMalloc(&extra, 1 << 20));     // legal while capturing in relaxed mode only
    KC(k_heavy<<<1, T, 0, b->s>>>(b->y, b->x, T, 5u + (unsigned)r, 3));
    KC(k_affine<<<N / 256, 256, 0, b->s>>>(b->y, N, 5u, (unsigned)r + 1u));
    CK(cudaEventRecord(b->fork, b->s));
    CK(cudaStreamWaitEvent(b->s2, b->fork, 0));
    KC(k_heavy<<<N / 256, 256, 0, b->s2>>>(b->z, b->y, N, 7u, 8));
    CK(cudaMemsetAsync(b->scratch, r & 0xff, N * sizeof(unsigned), b->s));
    CK(cudaEventRecord(b->join, b->s2));
    CK(cudaStreamWaitEvent(b->s, b->join, 0));
    KC(k_combine<<<N / 256, 256, 0, b->s>>>(b->y, b->z, b->scratch, N));
    CK(cudaMemcpyAsync(b->w, b->y, N * sizeof(unsigned), cudaMemcpyDeviceToDevice, b->s));
    KC(k_affine<<<N / 256, 256, 0, b->s>>>(b->w, N, 3u, 11u));
    print_status(r, "before_end", b->s);
    if (hp)
        pthread_barrier_wait(&hp->done);
    CK(cudaStreamEndCapture(b->s, &ended));
    if (g && ended != g) {
        fprintf(stderr, "cudaStreamEndCapture returned another graph than the one captured to\n");
        exit(2);
    }
    print_status(r, "ended", b->s);
    if (extra)
        CK(cudaFree(extra));
    size_t nodes = 0;
    CK(cudaGraphGetNodes(ended, NULL, &nodes));
    printf("capture round %d graph_nodes %zu\n", r, nodes);
    return ended;
}

// The program's graph launched on `s`: its kernels count as launches.
static void graph_launch(cudaGraphExec_t ge, cudaStream_t s)
{
    CK(cudaGraphLaunch(ge, s));
    __atomic_fetch_add(&g_launches, GRAPH_KERNELS, __ATOMIC_RELAXED);
}

static int run(const char *mode, int rounds)
{
    struct bufs b;
    b.s = new_stream();
    b.s2 = new_stream();
    b.s3 = new_stream();
    b.fork = new_event();
    b.join = new_event();
    b.x = dev_u(T, 1u, b.s);
    b.y = dev_u(N, 2u, b.s);
    b.z = dev_u(N, 3u, b.s);
    b.w = dev_u(N, 4u, b.s);
    CK(cudaMalloc(&b.scratch, N * sizeof(unsigned)));
    CK(cudaStreamSynchronize(b.s));

    struct helper help, *hp = NULL;
    if (strcmp(mode, "global")) {
        hp = &help;
        hp->rounds = rounds;
        hp->s = new_stream();
        hp->h = dev_u(T, 9u, hp->s);
        CK(cudaStreamSynchronize(hp->s));
        if (pthread_barrier_init(&hp->go, NULL, 2) || pthread_barrier_init(&hp->done, NULL, 2) ||
            pthread_create(&hp->th, NULL, helper_main, hp)) {
            fprintf(stderr, "cannot start the helper thread\n");
            return 2;
        }
    }

    for (int r = 0; r < rounds; r++) {
        for (int it = 0; it < WARM; it++)
            window_sync(&b);
        window(&b, 0, HELD);                 // held by the engine's replay, if any
        cudaGraph_t g = capture(&b, mode, r, hp);
        cudaGraphExec_t ge;
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphUpload(ge, b.s));
        window(&b, HELD, WIN);               // the rest of the window, after the capture
        CK(cudaStreamSynchronize(b.s));
        for (int it = 0; it < LOOP_A; it++) {
            graph_launch(ge, b.s);
            window_sync(&b);
        }
        for (int it = 0; it < LOOP_B; it++) {
            window(&b, 0, 4);
            graph_launch(ge, b.s);
            window(&b, 4, WIN);
            CK(cudaStreamSynchronize(b.s));
        }
        for (int it = 0; it < LOOP_C; it++) {
            graph_launch(ge, b.s3);
            CK(cudaStreamSynchronize(b.s3));
            window_sync(&b);
        }
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
    }

    print_dev("x", b.x, T * sizeof(unsigned));
    print_dev("y", b.y, N * sizeof(unsigned));
    print_dev("z", b.z, N * sizeof(unsigned));
    print_dev("w", b.w, N * sizeof(unsigned));
    print_dev("scratch", b.scratch, N * sizeof(unsigned));
    if (hp) {
        if (pthread_join(hp->th, NULL)) {
            fprintf(stderr, "cannot join the helper thread\n");
            return 2;
        }
        print_dev("helper", hp->h, T * sizeof(unsigned));
        CK(cudaFree(hp->h));
        CK(cudaStreamDestroy(hp->s));
    }
    unsigned *bufs_[] = {b.x, b.y, b.z, b.w, b.scratch};
    for (unsigned *p : bufs_)
        CK(cudaFree(p));
    CK(cudaEventDestroy(b.fork));
    CK(cudaEventDestroy(b.join));
    CK(cudaStreamDestroy(b.s));
    CK(cudaStreamDestroy(b.s2));
    CK(cudaStreamDestroy(b.s3));
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = 0;
    if (argc != 3 || !posint(argv[2], &rounds) ||
        (strcmp(argv[1], "global") && strcmp(argv[1], "thread_local") &&
         strcmp(argv[1], "relaxed") && strcmp(argv[1], "tograph"))) {
        fprintf(stderr, "usage: %s global|thread_local|relaxed|tograph ROUNDS\n", argv[0]);
        return 2;
    }
    g_mode = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    return finish(run(argv[1], rounds));
}
