/* devices_loop.c -- a training-like loop on two simulated devices (SIM_DEVICES=2),
 * long enough for the shim to graph each device's steps: the per-context engines'
 * test program (sim_devices.bats).
 *
 *   devices_loop switch STEPS   one host thread, switching devices with
 *                               cuCtxSetCurrent before each device's share of a
 *                               step, then synchronizing each device's stream
 *   devices_loop legacy STEPS   the same on each device's legacy default stream,
 *                               each device synchronized with cuCtxSynchronize
 *   devices_loop threads STEPS  one host thread per device, each synchronizing its
 *                               own stream every step
 *   devices_loop cross STEPS    one thread: device 0 computes, device 1 waits for its
 *                               event, takes the data (cuMemcpyPeerAsync), computes
 *                               and records, device 0 waits for that event and copies
 *                               the result back (cuMemcpyAsync, unified addressing)
 *   devices_loop cross-threads STEPS   the same with a thread per device (a host
 *                               barrier orders each record before the other's wait)
 *   devices_loop peer-legacy STEPS   one thread, legacy streams: device 1 computes,
 *                               device 0 takes its data with a synchronous
 *                               cuMemcpyDtoD (ordered by the driver after the work
 *                               of both devices), device 1 goes on; no events
 *   devices_loop peer-legacy-async STEPS   the same with cuMemcpyAsync on the legacy
 *                               stream (the same order)
 *
 * A third argument US makes the program spend that many microseconds of its own
 * before each launch (a slow program: the shim paces its chunks and hands them to
 * each engine's launcher thread).  Each prints the checksums of both devices'
 * buffers, the same with or without the shim.  Exits 3 with fewer than two devices.
 */
#include "two_dev.h"

#include <pthread.h>
#include <string.h>

static device dv[2];
static pthread_barrier_t barrier;
static int threaded, legacy, steps, think_us, async_copy;

static void launch(device *d, CUfunction f, CUdeviceptr p, int arg)
{
    int n = PROG_N;
    prog_busy_us(think_us);        /* the program's own time before a launch */
    void *add_args[] = { &p, &n }, *scale_args[] = { &p, &arg, &n };
    CK(cuLaunchKernel(f, 2, 1, 1, 128, 1, 1, 0, legacy ? NULL : d->s,
                      f == d->scale ? scale_args : add_args, NULL));
}

static void setup(void)
{
    two_dev_open(dv, "devices_loop");
    for (int i = 0; i < 2; i++) {
        device *d = &dv[i];
        CK(cuCtxSetCurrent(d->ctx));
        CK(cuMemAlloc(&d->x, BYTES));
        CK(cuMemAlloc(&d->y, BYTES));
        CK(cuMemAlloc(&d->r, BYTES));
        CK(cuMemsetD32(d->p, (unsigned)(i + 1), PROG_N));
        CK(cuMemsetD32(d->q, 0, PROG_N));
        CK(cuMemsetD32(d->y, 0, PROG_N));
        CK(cuMemsetD32(d->r, (unsigned)(i + 7), PROG_N));
    }
    for (int i = 0; i < 2; i++) {
        CK(cuCtxSetCurrent(dv[i].ctx));
        CK(cuCtxEnablePeerAccess(dv[1 - i].ctx, 0));
    }
}

static void launch_saxpy(device *d, float a)
{
    int n = PROG_N;
    void *args[] = { &a, &d->x, &d->y, &n };
    prog_busy_us(think_us);        /* the program's own time before a launch */
    CK(cuLaunchKernel(d->saxpy, 2, 1, 1, 128, 1, 1, 0, legacy ? NULL : d->s, args, NULL));
}

/* One device's share of a plain step, KERNELS ops: x set to a value of the step's
 * (a memset whose value a replay patches), y += 0.5 x and y += 0.25 x, and r
 * negated and moved by one (the checksums depend on every step). */
static void compute(device *d, int it)
{
    float v = (float)((it % 7 + 1) * (d->id + 1));
    unsigned bits;
    memcpy(&bits, &v, sizeof bits);
    CK(cuCtxSetCurrent(d->ctx));
    if (legacy)
        CK(cuMemsetD32(d->x, bits, PROG_N));
    else
        CK(cuMemsetD32Async(d->x, bits, PROG_N, d->s));
    launch_saxpy(d, 0.5f);
    launch(d, d->add_one, d->r, 0);
    launch(d, d->scale, d->r, -1);
    launch_saxpy(d, 0.25f);
    launch(d, d->add_one, d->r, 0);
}

static void wait_device(device *d)
{
    CK(cuCtxSetCurrent(d->ctx));
    if (legacy)
        CK(cuCtxSynchronize());
    else
        CK(cuStreamSynchronize(d->s));
}

static void *device_steps(void *arg)
{
    device *d = arg;
    for (int it = 0; it < steps; it++) {
        compute(d, it);
        wait_device(d);
    }
    return NULL;
}

/* ---- cross: the data goes to device 1 and back every step ---- */

static void meet(void)
{
    if (threaded)
        pthread_barrier_wait(&barrier);
}

/* Part `part` (0, 1, 2) of a cross step, d's share of it (maybe nothing). */
static void cross_part(device *d, int it, int part)
{
    device *o = &dv[1 - d->id];
    CK(cuCtxSetCurrent(d->ctx));
    if (d->id == 0 && part == 0) {
        CK(cuMemsetD32Async(d->p, (unsigned)(it % 5), PROG_N, d->s));
        launch(d, d->add_one, d->p, 0);
        launch(d, d->scale, d->p, 3);
        launch(d, d->add_one, d->p, 0);
        CK(cuEventRecord(d->ev, d->s));
    } else if (d->id == 1 && part == 1) {
        CK(cuStreamWaitEvent(d->s, o->ev, 0));
        CK(cuMemcpyPeerAsync(d->q, d->ctx, o->p, o->ctx, BYTES, d->s));
        launch(d, d->add_one, d->q, 0);
        launch(d, d->scale, d->q, 2);
        launch(d, d->add_one, d->q, 0);
        launch(d, d->add_one, d->q, 0);     /* four kernels: long enough to graph */
        CK(cuEventRecord(d->ev, d->s));
    } else if (d->id == 0 && part == 2) {
        CK(cuStreamWaitEvent(d->s, o->ev, 0));
        CK(cuMemcpyAsync(d->q, o->q, BYTES, d->s));
        launch(d, d->add_one, d->q, 0);
        launch(d, d->scale, d->q, 5);
        CK(cuStreamSynchronize(d->s));
    } else if (d->id == 1 && part == 2) {
        CK(cuStreamSynchronize(d->s));
    }
}

static void *cross_steps(void *arg)
{
    device *d = arg;
    for (int it = 0; it < steps; it++)
        for (int part = 0; part < 3; part++) {
            cross_part(d, it, part);
            meet();
        }
    return NULL;
}

/* ---- peer-legacy: a synchronous copy between the devices on the legacy streams ----
 * Device 1 computes p on its legacy stream; device 0 then takes it with a synchronous
 * cuMemcpyDtoD (unified addressing), which the driver starts only once the work issued
 * before it to either device is done, and which ends before later work of either
 * starts; device 1 goes on with p, then each device is synchronized. */
static void peer_legacy_step(int it)
{
    device *d0 = &dv[0], *d1 = &dv[1];
    CK(cuCtxSetCurrent(d1->ctx));
    CK(cuMemsetD32(d1->p, (unsigned)(it % 5 + 1), PROG_N));
    launch(d1, d1->add_one, d1->p, 0);
    launch(d1, d1->scale, d1->p, 3);
    launch(d1, d1->add_one, d1->p, 0);
    CK(cuCtxSetCurrent(d0->ctx));
    if (async_copy)
        CK(cuMemcpyAsync(d0->q, d1->p, BYTES, NULL));
    else
        CK(cuMemcpyDtoD(d0->q, d1->p, BYTES));
    launch(d0, d0->add_one, d0->q, 0);
    launch(d0, d0->scale, d0->q, 2);
    launch(d0, d0->add_one, d0->q, 0);
    CK(cuCtxSetCurrent(d1->ctx));
    launch(d1, d1->scale, d1->p, -1);
    launch(d1, d1->add_one, d1->p, 0);
    CK(cuCtxSetCurrent(d0->ctx));
    CK(cuCtxSynchronize());
    CK(cuCtxSetCurrent(d1->ctx));
    CK(cuCtxSynchronize());
}

/* ---- main ---- */

static void run_threads(void *(*fn)(void *))
{
    pthread_t t[2];
    threaded = 1;
    pthread_barrier_init(&barrier, NULL, 2);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, fn, &dv[i]) != 0)
            exit(1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

static void report(void)
{
    for (int i = 0; i < 2; i++) {
        device *d = &dv[i];
        CK(cuCtxSetCurrent(d->ctx));
        CK(cuCtxSynchronize());
        CK(cuMemcpyDtoH(d->h, d->p, BYTES));
        printf("dev%d p[0]=%d sum=%ld", i, d->h[0], prog_sum_int(d->h, PROG_N));
        CK(cuMemcpyDtoH(d->h, d->q, BYTES));
        printf(" q[0]=%d sum=%ld", d->h[0], prog_sum_int(d->h, PROG_N));
        CK(cuMemcpyDtoH(d->h, d->r, BYTES));
        printf(" r[0]=%d sum=%ld", d->h[0], prog_sum_int(d->h, PROG_N));
        CK(cuMemcpyDtoH(d->f, d->y, BYTES));
        printf(" y[0]=%.2f sum=%.2f\n", (double)d->f[0], prog_sum_float(d->f, PROG_N));
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "switch";
    steps = argc > 2 ? atoi(argv[2]) : 40;
    think_us = argc > 3 ? atoi(argv[3]) : 0;
    setup();
    legacy = strcmp(mode, "legacy") == 0;
    if (strcmp(mode, "switch") == 0 || legacy) {
        for (int it = 0; it < steps; it++) {
            compute(&dv[0], it);
            compute(&dv[1], it);
            wait_device(&dv[0]);
            wait_device(&dv[1]);
        }
    } else if (strcmp(mode, "threads") == 0) {
        run_threads(device_steps);
    } else if (strcmp(mode, "cross") == 0) {
        for (int it = 0; it < steps; it++)   /* one thread: both devices' parts in turn */
            for (int part = 0; part < 3; part++) {
                cross_part(&dv[0], it, part);
                cross_part(&dv[1], it, part);
            }
    } else if (strcmp(mode, "cross-threads") == 0) {
        run_threads(cross_steps);
    } else if (strcmp(mode, "peer-legacy") == 0 || strcmp(mode, "peer-legacy-async") == 0) {
        legacy = 1;                  /* its launches on the legacy streams */
        async_copy = strcmp(mode, "peer-legacy-async") == 0;
        for (int it = 0; it < steps; it++)
            peer_legacy_step(it);
    } else {
        fprintf(stderr, "usage: devices_loop switch|legacy|threads|cross|cross-threads|peer-legacy|"
                "peer-legacy-async "
                "[STEPS]\n");
        return 2;
    }
    report();
    return 0;
}
