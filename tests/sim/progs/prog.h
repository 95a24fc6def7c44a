/* prog.h -- shared helpers of the simulator test programs: error checking,
 * the CPU kernels they register (saxpy, add_one, add_two, scale) and small utilities.
 * Every program prints deterministic results and exits non-zero on an
 * unexpected CUDA error.
 */
#ifndef PROG_H
#define PROG_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim.h"

#define CK(call)                                                                  \
    do {                                                                          \
        CUresult ck_rc_ = (call);                                                 \
        if (ck_rc_ != CUDA_SUCCESS) {                                             \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call,  \
                    (int)ck_rc_);                                                 \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#define PROG_N 256

#define PARAM(type, params, i) (*(type *)(params)[i])
#define DEVPTR(type, params, i) ((type *)(uintptr_t)PARAM(CUdeviceptr, params, i))

/* saxpy(float a, float *x, float *y, int n): y = a * x + y */
static void prog_saxpy(sim_dim3 grid, sim_dim3 block, void **params)
{
    float a = PARAM(float, params, 0);
    const float *x = DEVPTR(const float, params, 1);
    float *y = DEVPTR(float, params, 2);
    int n = PARAM(int, params, 3);
    for (size_t i = 0; i < SIM_THREADS_X(grid, block) && i < (size_t)n; i++)
        y[i] = a * x[i] + y[i];
}

/* add_one(int *p, int n): p += 1 */
static void prog_add_one(sim_dim3 grid, sim_dim3 block, void **params)
{
    int *p = DEVPTR(int, params, 0);
    int n = PARAM(int, params, 1);
    for (size_t i = 0; i < SIM_THREADS_X(grid, block) && i < (size_t)n; i++)
        p[i] += 1;
}

/* add_two(int *p, int n): p += 2 (add_one's parameter layout, another function) */
static void prog_add_two(sim_dim3 grid, sim_dim3 block, void **params)
{
    int *p = DEVPTR(int, params, 0);
    int n = PARAM(int, params, 1);
    for (size_t i = 0; i < SIM_THREADS_X(grid, block) && i < (size_t)n; i++)
        p[i] += 2;
}

/* scale(int *p, int factor, int n): p *= factor */
static void prog_scale(sim_dim3 grid, sim_dim3 block, void **params)
{
    int *p = DEVPTR(int, params, 0);
    int factor = PARAM(int, params, 1);
    int n = PARAM(int, params, 2);
    for (size_t i = 0; i < SIM_THREADS_X(grid, block) && i < (size_t)n; i++)
        p[i] *= factor;
}

static const size_t prog_saxpy_sizes[] = { sizeof(float), sizeof(CUdeviceptr),
                                           sizeof(CUdeviceptr), sizeof(int) };
static const size_t prog_add_one_sizes[] = { sizeof(CUdeviceptr), sizeof(int) };
static const size_t prog_scale_sizes[] = { sizeof(CUdeviceptr), sizeof(int), sizeof(int) };

/* Registers the kernels through reg (sim_register_kernel or a dlsym'd pointer). */
static inline void prog_register(sim_register_kernel_t reg)
{
    if (reg("saxpy", prog_saxpy, 4, prog_saxpy_sizes) ||
        reg("add_one", prog_add_one, 2, prog_add_one_sizes) ||
        reg("add_two", prog_add_two, 2, prog_add_one_sizes) ||
        reg("scale", prog_scale, 3, prog_scale_sizes)) {
        fprintf(stderr, "kernel registration failed\n");
        exit(1);
    }
}

/* Programs linked with -lcuda: initialise, make the primary context current,
 * register the kernels and load a module exposing them. */
static inline void prog_setup(CUcontext *ctx, CUmodule *mod)
{
    CUdevice dev;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(ctx, dev));
    CK(cuCtxSetCurrent(*ctx));
    prog_register(sim_register_kernel);
    CK(cuModuleLoadData(mod, "sim-module"));
}

/* Busy for us microseconds: a program's own time between calls (paced windows). */
static inline void prog_busy_us(int us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < us * 1000L);
}

static inline long prog_sum_int(const int *v, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

static inline double prog_sum_float(const float *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

#endif /* PROG_H */
