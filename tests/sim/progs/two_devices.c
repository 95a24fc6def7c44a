/* two_devices.c -- one process driving two simulated devices (SIM_DEVICES=2):
 * a context, module, stream, event and buffers per device, kernels on each,
 * peer copies both ways, cross-device event waits and synchronisation.
 *
 *   two_devices info     devices, their contexts, pointer attributes, memory
 *   two_devices seq      one host thread, switching with cuCtxSetCurrent
 *   two_devices threads  one host thread per device (a host barrier orders each
 *                        event record before the other device's wait on it)
 *   two_devices graph    one capture that forks onto device 1 and joins back,
 *                        launched three times
 *   two_devices errors   cross-context misuse and peer access errors, by name
 *
 * seq and threads do the same work on the same objects (all made by the main
 * thread, in the same order) and print the same checksums; their logs are equal
 * sorted.  Exits 3 with fewer than two devices.
 */
#include "two_dev.h"

#include <pthread.h>
#include <string.h>

#define ITERS 4
static device dv[2];
static pthread_barrier_t barrier;
static int threaded;

static const char *err_name(CUresult rc)
{
    const char *s = NULL;
    cuGetErrorName(rc, &s);
    return s ? s : "?";
}

static void launch(device *d, CUfunction f, CUdeviceptr p, int arg)
{
    int n = PROG_N;
    void *add_args[] = { &p, &n }, *scale_args[] = { &p, &arg, &n };
    CK(cuLaunchKernel(f, 2, 1, 1, 128, 1, 1, 0, d->s, f == d->scale ? scale_args : add_args,
                      NULL));
}

/* Contexts, modules, streams, events and buffers of both devices, in order. */
static void setup(void)
{
    two_dev_open(dv, "two_devices");
}

static void enable_peers(void)
{
    for (int i = 0; i < 2; i++) {
        CK(cuCtxSetCurrent(dv[i].ctx));
        CK(cuCtxEnablePeerAccess(dv[1 - i].ctx, 0));
    }
}

/* ---- seq and threads: the same steps, one thread or one per device */

/* Waits until the other device's thread got here too (threads only). */
static void meet(void)
{
    if (threaded)
        pthread_barrier_wait(&barrier);
}

/* Device 0 computes p0, device 1 takes it (peer copy after an event wait) and
 * computes p1 from it, device 0 takes p1 back into q0 (cuMemcpyAsync, unified
 * addressing).  part is 0, 1 or 2; d runs its share of it (maybe nothing). */
static void step(device *d, int it, int part)
{
    device *o = &dv[1 - d->id];
    CK(cuCtxSetCurrent(d->ctx));
    if (d->id == 0 && part == 0) {
        CK(cuMemsetD32Async(d->p, (unsigned)(it + 1), PROG_N, d->s));
        launch(d, d->add_one, d->p, 0);
        launch(d, d->scale, d->p, 3);
        CK(cuEventRecord(d->ev, d->s));
    } else if (d->id == 1 && part == 1) {
        CK(cuStreamWaitEvent(d->s, o->ev, 0));
        CK(cuMemcpyPeerAsync(d->p, d->ctx, o->p, o->ctx, BYTES, d->s));
        launch(d, d->add_one, d->p, 0);
        launch(d, d->scale, d->p, 2);
        CK(cuEventRecord(d->ev, d->s));
    } else if (d->id == 0 && part == 2) {
        CK(cuStreamWaitEvent(d->s, o->ev, 0));
        CK(cuMemcpyAsync(d->q, o->p, BYTES, d->s));
        launch(d, d->add_one, d->q, 0);
    }
}

static void finish(device *d)
{
    CK(cuCtxSetCurrent(d->ctx));
    CK(cuStreamSynchronize(d->s));
    CK(cuMemcpyDtoH(d->h, d->id ? d->p : d->q, BYTES));
    CK(cuCtxSynchronize());
}

static void *run_device(void *arg)
{
    device *d = arg;
    for (int it = 0; it < ITERS; it++) {
        for (int part = 0; part < 3; part++) {
            step(d, it, part);
            meet();
        }
    }
    finish(d);
    return NULL;
}

static int mode_run(int with_threads)
{
    pthread_t t[2];
    enable_peers();
    threaded = with_threads;
    if (threaded) {
        pthread_barrier_init(&barrier, NULL, 2);
        for (int i = 0; i < 2; i++) {
            if (pthread_create(&t[i], NULL, run_device, &dv[i]) != 0)
                return 1;
        }
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    } else {
        for (int it = 0; it < ITERS; it++) {
            for (int part = 0; part < 3; part++) {
                step(&dv[0], it, part);
                step(&dv[1], it, part);
            }
        }
        finish(&dv[0]);
        finish(&dv[1]);
    }
    printf("dev1 p[0]=%d sum=%ld\n", dv[1].h[0], prog_sum_int(dv[1].h, PROG_N));
    printf("dev0 q[0]=%d sum=%ld\n", dv[0].h[0], prog_sum_int(dv[0].h, PROG_N));
    return 0;
}

/* ---- graph: a capture on device 0 that forks onto device 1 and joins back */

static int mode_graph(void)
{
    CUevent fork, join;
    CUgraph g;
    CUgraphExec x;
    CUcontext c0 = dv[0].ctx, c1 = dv[1].ctx;
    CK(cuCtxSetCurrent(c0));
    CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CK(cuMemsetD32(dv[0].p, 5, PROG_N));
    CK(cuCtxSetCurrent(c1));
    CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    CK(cuCtxSetCurrent(c0));
    CK(cuStreamBeginCapture(dv[0].s, CU_STREAM_CAPTURE_MODE_RELAXED));
    launch(&dv[0], dv[0].add_one, dv[0].p, 0);
    CK(cuEventRecord(fork, dv[0].s));
    CK(cuCtxSetCurrent(c1));
    CK(cuStreamWaitEvent(dv[1].s, fork, 0));
    CK(cuMemcpyPeerAsync(dv[1].p, c1, dv[0].p, c0, BYTES, dv[1].s));
    launch(&dv[1], dv[1].scale, dv[1].p, 2);
    CK(cuEventRecord(join, dv[1].s));
    CK(cuCtxSetCurrent(c0));
    CK(cuStreamWaitEvent(dv[0].s, join, 0));
    CK(cuMemcpyAsync(dv[0].q, dv[1].p, BYTES, dv[0].s));
    CK(cuStreamEndCapture(dv[0].s, &g));
    CK(cuGraphInstantiate(&x, g, 0));
    for (int i = 0; i < 3; i++)
        CK(cuGraphLaunch(x, dv[0].s));
    CK(cuStreamSynchronize(dv[0].s));
    CK(cuMemcpyDtoH(dv[0].h, dv[0].q, BYTES));
    printf("graph q[0]=%d sum=%ld\n", dv[0].h[0], prog_sum_int(dv[0].h, PROG_N));
    CK(cuGraphExecDestroy(x));
    CK(cuGraphDestroy(g));
    return 0;
}

/* ---- info */

static void info_device(int i)
{
    char name[96], bus[32];
    CUuuid uuid;
    CUdevice dev, got;
    CUcontext cur;
    size_t free_b, total_b;
    CK(cuDeviceGet(&dev, i));
    CK(cuDeviceGetName(name, sizeof name, dev));
    CK(cuDeviceGetPCIBusId(bus, sizeof bus, dev));
    CK(cuDeviceGetUuid(&uuid, dev));
    CK(cuCtxSetCurrent(dv[i].ctx));
    CK(cuCtxGetCurrent(&cur));
    CK(cuCtxGetDevice(&got));
    CK(cuMemGetInfo(&free_b, &total_b));
    printf("device %d: name='%s' bus=%s uuid[15]=%c ctx_device=%d current=%s "
           "used=%zu\n", i, name, bus, uuid.bytes[15], (int)got,
           cur == dv[i].ctx ? "own" : "other", total_b - free_b);
}

static void info_pointer(const char *what, CUdeviceptr p)
{
    unsigned ordinal = 99;
    CUcontext ctx = NULL;
    CK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    CK(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p));
    printf("pointer %s: device=%u context=%s\n", what, ordinal,
           ctx == dv[0].ctx ? "ctx0" : ctx == dv[1].ctx ? "ctx1" : "other");
}

static int mode_info(void)
{
    int count, can01, can00;
    CUdevice sdev;
    CUcontext created, sctx;
    CUdevice cdev;
    CK(cuDeviceGetCount(&count));
    printf("devices: %d\n", count);
    printf("primary contexts distinct: %s\n", dv[0].ctx != dv[1].ctx ? "yes" : "no");
    for (int i = 0; i < 2; i++)
        info_device(i);
    info_pointer("p0", dv[0].p);
    info_pointer("p1+16", dv[1].p + 16);
    CK(cuStreamGetDevice(dv[1].s, &sdev));
    CK(cuStreamGetCtx(dv[1].s, &sctx));
    printf("stream s of device 1: device=%d ctx=%s\n", (int)sdev,
           sctx == dv[1].ctx ? "ctx1" : "other");
    CK(cuDeviceCanAccessPeer(&can01, 0, 1));
    CK(cuDeviceCanAccessPeer(&can00, 0, 0));
    printf("can access peer: 0->1 %d, 0->0 %d\n", can01, can00);
    CK(cuCtxCreate(&created, NULL, 0, 1));
    CK(cuCtxGetDevice(&cdev));
    printf("created context on device 1: device=%d distinct=%s\n", (int)cdev,
           created != dv[1].ctx ? "yes" : "no");
    CK(cuCtxDestroy(created));
    return 0;
}

/* ---- errors */

#define SHOW(what, call) printf("%s: %s\n", what, err_name(call))

static void errors_launch(void)
{
    int n = PROG_N;
    void *args[] = { &dv[0].p, &n };
    CK(cuCtxSetCurrent(dv[0].ctx));
    SHOW("launch ctx1 function on ctx0 stream",
         cuLaunchKernel(dv[1].add_one, 1, 1, 1, 32, 1, 1, 0, dv[0].s, args, NULL));
    SHOW("launch ctx0 function on ctx1 stream",
         cuLaunchKernel(dv[0].add_one, 1, 1, 1, 32, 1, 1, 0, dv[1].s, args, NULL));
    CK(cuCtxSetCurrent(dv[1].ctx));
    SHOW("launch ctx0 function on the default stream of ctx1",
         cuLaunchKernel(dv[0].add_one, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    SHOW("record ctx0 event on ctx1 stream", cuEventRecord(dv[0].ev, dv[1].s));
    SHOW("record ctx0 event on the default stream of ctx1", cuEventRecord(dv[0].ev, NULL));
    SHOW("record ctx1 event on ctx1 stream", cuEventRecord(dv[1].ev, dv[1].s));
    SHOW("ctx0 stream waits for ctx1 event", cuStreamWaitEvent(dv[0].s, dv[1].ev, 0));
}

static void errors_graph(void)
{
    CUgraph g;
    CUgraphNode node;
    CUgraphExec x;
    CK(cuCtxSetCurrent(dv[0].ctx));
    CK(cuGraphCreate(&g, 0));
    CK(cuGraphAddEmptyNode(&node, g, NULL, 0));
    CK(cuGraphInstantiate(&x, g, 0));
    SHOW("launch ctx0 graph on ctx1 stream", cuGraphLaunch(x, dv[1].s));
    SHOW("launch ctx0 graph on ctx0 stream", cuGraphLaunch(x, dv[0].s));
    CK(cuGraphExecDestroy(x));
    CK(cuGraphDestroy(g));
}

static void errors_peer(void)
{
    CUcontext other;
    CUdevice bad;
    CK(cuCtxSetCurrent(dv[0].ctx));
    SHOW("enable peer ctx1 flags=1", cuCtxEnablePeerAccess(dv[1].ctx, 1));
    SHOW("enable peer ctx1", cuCtxEnablePeerAccess(dv[1].ctx, 0));
    SHOW("enable peer ctx1 again", cuCtxEnablePeerAccess(dv[1].ctx, 0));
    SHOW("enable peer own context", cuCtxEnablePeerAccess(dv[0].ctx, 0));
    SHOW("disable peer ctx1", cuCtxDisablePeerAccess(dv[1].ctx));
    SHOW("disable peer ctx1 again", cuCtxDisablePeerAccess(dv[1].ctx));
    CK(cuCtxCreate(&other, NULL, 0, 0));
    CK(cuCtxSetCurrent(dv[0].ctx));
    SHOW("enable peer to a context of the same device", cuCtxEnablePeerAccess(other, 0));
    CK(cuCtxDestroy(other));
    SHOW("enable peer to a destroyed context", cuCtxEnablePeerAccess(other, 0));
    SHOW("device ordinal 2", cuDeviceGet(&bad, 2));
    SHOW("memcpy peer with the contexts swapped",
         cuMemcpyPeer(dv[1].p, dv[0].ctx, dv[0].p, dv[1].ctx, BYTES));
    SHOW("memcpy peer", cuMemcpyPeer(dv[1].p, dv[1].ctx, dv[0].p, dv[0].ctx, BYTES));
}

static int mode_errors(void)
{
    errors_launch();
    errors_graph();
    errors_peer();
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "seq";
    setup();
    if (strcmp(mode, "info") == 0)
        return mode_info();
    if (strcmp(mode, "seq") == 0 || strcmp(mode, "threads") == 0)
        return mode_run(strcmp(mode, "threads") == 0);
    if (strcmp(mode, "graph") == 0)
        return mode_graph();
    if (strcmp(mode, "errors") == 0)
        return mode_errors();
    fprintf(stderr, "usage: two_devices [info|seq|threads|graph|errors]\n");
    return 2;
}
