/* two_dev.h -- the two simulated devices (SIM_DEVICES=2) of the multi-device test
 * programs, two_devices.c and devices_loop.c: per device its primary context, the
 * simulator's module and kernels, a non-blocking stream, an event and two buffers (p:
 * its own data; q: what came from the peer), made in the same order by both.
 */
#ifndef TWO_DEV_H
#define TWO_DEV_H

#include "prog.h"

#define BYTES (PROG_N * sizeof(int))

typedef struct device {
    int id;
    CUcontext ctx;
    CUmodule mod;
    CUfunction add_one, scale, saxpy;
    CUstream s;
    CUevent ev;
    CUdeviceptr p, q;
    CUdeviceptr x, y, r;         /* devices_loop's saxpy operands */
    int h[PROG_N];
    float f[PROG_N];
} device;

/* Makes both devices' objects, device 0's first (device 1's context is left current);
 * exits 3, naming prog, with fewer than two devices. */
static void two_dev_open(device dv[2], const char *prog)
{
    int count;
    CK(cuInit(0));
    CK(cuDeviceGetCount(&count));
    if (count < 2) {
        fprintf(stderr, "%s: needs SIM_DEVICES >= 2, have %d\n", prog, count);
        exit(3);
    }
    prog_register(sim_register_kernel);
    for (int i = 0; i < 2; i++) {
        device *d = &dv[i];
        CUdevice dev;
        d->id = i;
        CK(cuDeviceGet(&dev, i));
        CK(cuDevicePrimaryCtxRetain(&d->ctx, dev));
        CK(cuCtxSetCurrent(d->ctx));
        CK(cuModuleLoadData(&d->mod, "sim-module"));
        CK(cuModuleGetFunction(&d->add_one, d->mod, "add_one"));
        CK(cuModuleGetFunction(&d->scale, d->mod, "scale"));
        CK(cuModuleGetFunction(&d->saxpy, d->mod, "saxpy"));
        CK(cuStreamCreate(&d->s, CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate(&d->ev, CU_EVENT_DISABLE_TIMING));
        CK(cuMemAlloc(&d->p, BYTES));
        CK(cuMemAlloc(&d->q, BYTES));
    }
}

#endif
