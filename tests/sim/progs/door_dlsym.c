/* door_dlsym.c -- door 2: a program not linked to libcuda that dlopens
 * "libcuda.so.1" and looks every entry point up with dlsym by its exported
 * name.  Launch counts (tests/bats/sim.bats relies on them):
 *   cuLaunchKernel 4 (legacy stream and a created stream), cuLaunchKernel_ptsz 2
 */
#include "prog.h"

#include <dlfcn.h>

static void *lib;

static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

#define LOOKUP(var, name) __typeof__(&name) var = (__typeof__(&name))sym(#name)

/* Exported names without a cuda.h prototype in this (non-internal) build. */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int smem, CUstream s, void **params, void **extra);

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction scale, add_one;
    CUstream s1;
    CUdeviceptr p;
    int h[PROG_N], n = PROG_N, factor = 3;

    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    LOOKUP(init, cuInit);
    LOOKUP(device_get, cuDeviceGet);
    LOOKUP(retain, cuDevicePrimaryCtxRetain);
    LOOKUP(set_current, cuCtxSetCurrent);
    LOOKUP(load, cuModuleLoadData);
    LOOKUP(get_function, cuModuleGetFunction);
    LOOKUP(stream_create, cuStreamCreate);
    LOOKUP(stream_sync, cuStreamSynchronize);
    LOOKUP(mem_alloc, cuMemAlloc_v2);
    LOOKUP(memset32, cuMemsetD32_v2);
    LOOKUP(dtoh, cuMemcpyDtoH_v2);
    LOOKUP(launch, cuLaunchKernel);
    LOOKUP(launch_ptsz, cuLaunchKernel_ptsz);
    sim_register_kernel_t reg = (sim_register_kernel_t)sym(SIM_REGISTER_KERNEL_SYMBOL);

    CK(init(0));
    CK(device_get(&dev, 0));
    CK(retain(&ctx, dev));
    CK(set_current(ctx));
    prog_register(reg);
    CK(load(&mod, "sim-module"));
    CK(get_function(&scale, mod, "scale"));
    CK(get_function(&add_one, mod, "add_one"));
    CK(stream_create(&s1, 0));
    CK(mem_alloc(&p, sizeof h));
    CK(memset32(p, 1, PROG_N));

    void *add_args[] = { &p, &n };
    void *scale_args[] = { &p, &factor, &n };
    CK(launch(add_one, 1, 1, 1, PROG_N, 1, 1, 0, NULL, add_args, NULL));
    CK(launch(scale, 1, 1, 1, PROG_N, 1, 1, 0, NULL, scale_args, NULL));
    CK(launch(add_one, 2, 1, 1, 128, 1, 1, 0, s1, add_args, NULL));
    CK(launch(scale, 2, 1, 1, 128, 1, 1, 0, s1, scale_args, NULL));
    CK(launch_ptsz(add_one, 1, 1, 1, PROG_N, 1, 1, 0, NULL, add_args, NULL));
    CK(launch_ptsz(scale, 1, 1, 1, PROG_N, 1, 1, 0, CU_STREAM_PER_THREAD, scale_args, NULL));
    CK(stream_sync(s1));
    CK(dtoh(h, p, sizeof h));
    printf("door_dlsym: p[0]=%d sum=%ld\n", h[0], prog_sum_int(h, PROG_N));
    return 0;
}
