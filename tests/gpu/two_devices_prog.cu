// two_devices_prog.cu -- GPU test program: one process driving two GPUs, for the shim's
// engine per context (tests/gpu/multi_device.bats).  Needs 2 devices (exits 3 otherwise).
//
// Built by tests/gpu/gpu.mk as build/gpu/two_devices_static and two_devices_shared.
//
//   two_devices_prog MODE ITERS
//     switch   one host thread, cudaSetDevice before each device's share of a step:
//              K kernels on the device's own stream, then each device's stream
//              synchronized (the engine keeps a window per device: both are graphed)
//     peer     one host thread: device 0 computes and records an event, device 1
//              waits for it (a cross-device event wait), takes the data with
//              cudaMemcpyPeerAsync when peer access is available (else through
//              host memory: staged, synchronous copies), computes, records; device 0
//              waits for that and copies the result back the same way; then both
//              streams synchronized
//     legacy   one host thread, the legacy default streams, no events: device 1
//              computes, device 0 takes its data with a synchronous cudaMemcpy
//              (unified addressing: the driver orders it after both devices' work),
//              computes, device 1 goes on; then both devices synchronized
//     threads  one host thread per device, each running its switch-mode share with
//              its own stream synchronize every step
//     all      switch, peer, legacy and threads, in that order, each on fresh buffers
//
// The kernels do not commute (x = 3x + k), so lost, repeated or reordered work changes
// the bytes.  stdout: one hash line per buffer ("<mode> <buffer> bytes <n> fnv1a64
// <hex>"), the same with and without the shim; stderr: "peer_access 0|1" and
// expected_launches N.  Every CUDA call is checked; an error exits 2.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.cuh"

enum { K = 8, T = 256, N = 4096 };

struct dev {
    int id;
    cudaStream_t s;
    cudaEvent_t e;
    unsigned *x;                 // its own data
    unsigned *in;                // what came from the other device (peer mode)
};

static struct dev g_dev[2];
static int g_iters, g_peer;

// K kernels of step `it` on device d's x (and, peer mode, on `in` after the copy), on
// stream s.
static void kernels_on(struct dev *d, unsigned *buf, int it, cudaStream_t s)
{
    for (int j = 0; j < K; j++)
        KL(k_tiny<<<1, T, 0, s>>>(buf, (unsigned)(d->id * 1000 + j * 10 + (it & 3))));
    KL(k_affine<<<N / T, T, 0, s>>>(buf, N, 5u, (unsigned)d->id + 1u));
}

static void step_kernels(struct dev *d, unsigned *buf, int it)
{
    kernels_on(d, buf, it, d->s);
}

static void setup(void)
{
    for (int i = 0; i < 2; i++) {
        struct dev *d = &g_dev[i];
        d->id = i;
        CK(cudaSetDevice(i));
        d->s = new_stream();
        d->e = new_event();
        d->x = dev_u(N, 0x1234u + (unsigned)i, d->s);
        d->in = dev_u(N, 0x777u + (unsigned)i, d->s);
        CK(cudaStreamSynchronize(d->s));
    }
}

static void teardown(const char *mode)
{
    char name[32];
    g_mode = mode;
    for (int i = 0; i < 2; i++) {
        struct dev *d = &g_dev[i];
        CK(cudaSetDevice(i));
        CK(cudaDeviceSynchronize());
        snprintf(name, sizeof name, "dev%d_x", i);
        print_dev(name, d->x, N * sizeof(unsigned));
        snprintf(name, sizeof name, "dev%d_in", i);
        print_dev(name, d->in, N * sizeof(unsigned));
        CK(cudaFree(d->x));
        CK(cudaFree(d->in));
        CK(cudaEventDestroy(d->e));
        CK(cudaStreamDestroy(d->s));
    }
}

static void run_switch(void)
{
    for (int it = 0; it < g_iters; it++) {
        for (int i = 0; i < 2; i++) {
            CK(cudaSetDevice(i));
            step_kernels(&g_dev[i], g_dev[i].x, it);
        }
        for (int i = 0; i < 2; i++) {
            CK(cudaSetDevice(i));
            CK(cudaStreamSynchronize(g_dev[i].s));
        }
    }
}

// `dst` on device `to` gets `src` of device `from`, on to's stream (after to waited for
// from's event): a peer copy, or through the host without peer access.
static void take(int to, unsigned *dst, int from, const unsigned *src)
{
    static unsigned host[N];
    size_t bytes = N * sizeof(unsigned);
    if (g_peer) {
        CK(cudaMemcpyPeerAsync(dst, to, src, from, bytes, g_dev[to].s));
        return;
    }
    CK(cudaSetDevice(from));
    CK(cudaStreamSynchronize(g_dev[from].s));     // the legacy stream does not wait for it
    CK(cudaMemcpy(host, src, bytes, cudaMemcpyDeviceToHost));
    CK(cudaSetDevice(to));
    CK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, g_dev[to].s));
    CK(cudaStreamSynchronize(g_dev[to].s));
}

static void run_peer(void)
{
    struct dev *a = &g_dev[0], *b = &g_dev[1];
    for (int it = 0; it < g_iters; it++) {
        CK(cudaSetDevice(0));
        step_kernels(a, a->x, it);
        CK(cudaEventRecord(a->e, a->s));
        CK(cudaSetDevice(1));
        CK(cudaStreamWaitEvent(b->s, a->e, 0));      // a cross-device event wait
        take(1, b->in, 0, a->x);
        step_kernels(b, b->in, it);
        CK(cudaEventRecord(b->e, b->s));
        CK(cudaSetDevice(0));
        CK(cudaStreamWaitEvent(a->s, b->e, 0));
        take(0, a->in, 1, b->in);
        step_kernels(a, a->in, it);
        for (int i = 0; i < 2; i++) {
            CK(cudaSetDevice(i));
            CK(cudaStreamSynchronize(g_dev[i].s));
        }
    }
}

// legacy: no events; device 0 takes device 1's x with a synchronous cudaMemcpy
// (unified addressing), which the driver starts only after the work issued before it
// to either device, on the legacy streams; device 1 goes on with x meanwhile.
static void run_legacy(void)
{
    struct dev *a = &g_dev[0], *b = &g_dev[1];
    for (int it = 0; it < g_iters; it++) {
        CK(cudaSetDevice(1));
        kernels_on(b, b->x, it, cudaStreamLegacy);
        CK(cudaSetDevice(0));
        CK(cudaMemcpy(a->in, b->x, N * sizeof(unsigned), cudaMemcpyDefault));
        kernels_on(a, a->in, it, cudaStreamLegacy);
        CK(cudaSetDevice(1));
        kernels_on(b, b->x, it + 1, cudaStreamLegacy);
        for (int i = 0; i < 2; i++) {
            CK(cudaSetDevice(i));
            CK(cudaDeviceSynchronize());
        }
    }
}

static void *device_thread(void *arg)
{
    struct dev *d = (struct dev *)arg;
    CK(cudaSetDevice(d->id));
    for (int it = 0; it < g_iters; it++) {
        step_kernels(d, d->x, it);
        CK(cudaStreamSynchronize(d->s));
    }
    return NULL;
}

static void run_threads(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, device_thread, &g_dev[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

static void enable_peers(void)
{
    int can01 = 0, can10 = 0;
    CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    g_peer = can01 && can10;
    for (int i = 0; g_peer && i < 2; i++) {
        cudaError_t rc;
        CK(cudaSetDevice(i));
        rc = cudaDeviceEnablePeerAccess(1 - i, 0);
        if (rc == cudaErrorPeerAccessAlreadyEnabled)
            (void)cudaGetLastError();
        else
            CK(rc);
    }
    fprintf(stderr, "peer_access %d\n", g_peer);
}

static void run(const char *mode)
{
    setup();
    if (strcmp(mode, "switch") == 0)
        run_switch();
    else if (strcmp(mode, "peer") == 0)
        run_peer();
    else if (strcmp(mode, "legacy") == 0)
        run_legacy();
    else
        run_threads();
    teardown(mode);
}

int main(int argc, char **argv)
{
    int count = 0;
    const char *mode = argc > 1 ? argv[1] : "";
    int known = !strcmp(mode, "switch") || !strcmp(mode, "peer") ||
                !strcmp(mode, "legacy") || !strcmp(mode, "threads") || !strcmp(mode, "all");
    if (argc != 3 || !known || !posint(argv[2], &g_iters)) {
        fprintf(stderr, "usage: two_devices_prog switch|peer|legacy|threads|all ITERS\n");
        return 1;
    }
    if (cudaGetDeviceCount(&count) != cudaSuccess)
        count = 0;                   // no usable driver or device
    if (count < 2) {
        fprintf(stderr, "two_devices_prog: needs 2 GPUs, found %d\n", count);
        return 3;
    }
    enable_peers();
    if (strcmp(mode, "all") == 0) {
        run("switch");
        run("peer");
        run("legacy");
        run("threads");
    } else {
        run(mode);
    }
    CK(cudaSetDevice(0));
    return finish(0);
}
