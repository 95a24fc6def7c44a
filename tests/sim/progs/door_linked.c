/* door_linked.c -- door 1: a program linked with -lcuda that calls the driver
 * by name, including the per-thread-default-stream exports (_ptsz / _ptds)
 * directly.  Launch counts (tests/bats/sim.bats relies on them):
 *   cuLaunchKernel 6 (3 kernelParams on the legacy stream, 3 `extra` on s1)
 *   cuLaunchKernel_ptsz 3, cuLaunchKernelEx 1, cuLaunchCooperativeKernel 1
 */
#include "prog.h"

#include <string.h>

#define K 3

/* cuda.h declares these only under CUDA_API_PER_THREAD_DEFAULT_STREAM. */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int smem, CUstream s, void **params, void **extra);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int v, size_t n, CUstream s);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuStreamSynchronize_ptsz(CUstream s);

/* The `extra` form: parameters packed at the offsets the driver reports. */
static void pack_add_one(CUfunction f, unsigned char *buf, CUdeviceptr p, int n)
{
    size_t off, size;
    memset(buf, 0, 32);
    CK(cuFuncGetParamInfo(f, 0, &off, &size));
    memcpy(buf + off, &p, size);
    CK(cuFuncGetParamInfo(f, 1, &off, &size));
    memcpy(buf + off, &n, size);
}

/* K launches per door-1 form: kernelParams on the legacy stream, `extra` on s1,
 * per-thread default stream through the _ptsz export; then one cuLaunchKernelEx
 * and one cooperative launch. */
static void launches(CUfunction saxpy, CUfunction add_one, CUstream s1, CUdeviceptr x,
                     CUdeviceptr y, CUdeviceptr a, CUdeviceptr b)
{
    float alpha = 2.0f;
    int n = PROG_N;
    unsigned char buf[32];
    size_t bufsize = sizeof buf;

    void *saxpy_args[] = { &alpha, &x, &y, &n };
    for (int k = 0; k < K; k++)            /* legacy stream, kernelParams */
        CK(cuLaunchKernel(saxpy, 1, 1, 1, PROG_N, 1, 1, 0, NULL, saxpy_args, NULL));
    pack_add_one(add_one, buf, a, n);
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
                      &bufsize, CU_LAUNCH_PARAM_END };
    for (int k = 0; k < K; k++)            /* created stream, extra */
        CK(cuLaunchKernel(add_one, 2, 1, 1, 128, 1, 1, 0, s1, NULL, extra));
    void *b_args[] = { &b, &n };
    for (int k = 0; k < K; k++)            /* per-thread default stream */
        CK(cuLaunchKernel_ptsz(add_one, 4, 1, 1, 64, 1, 1, 0, NULL, b_args, NULL));

    CUlaunchAttribute attr = { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .value.priority = 0 };
    CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = PROG_N,
                           .blockDimY = 1, .blockDimZ = 1, .hStream = s1, .attrs = &attr,
                           .numAttrs = 1 };
    CK(cuLaunchKernelEx(&cfg, add_one, b_args, NULL));
    CK(cuLaunchCooperativeKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, CU_STREAM_PER_THREAD,
                                 b_args));
}

int main(void)
{
    CUcontext ctx;
    CUmodule mod;
    CUfunction saxpy, add_one;
    CUstream s1;
    CUdeviceptr x, y, a, b;
    float hx[PROG_N], hy[PROG_N];
    int ha[PROG_N], hb[PROG_N];

    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&saxpy, mod, "saxpy"));
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));

    for (int i = 0; i < PROG_N; i++)
        hx[i] = (float)i, hy[i] = 1.0f;
    CK(cuMemAlloc(&x, sizeof hx));
    CK(cuMemAlloc(&y, sizeof hy));
    CK(cuMemAlloc(&a, sizeof ha));
    CK(cuMemAlloc(&b, sizeof hb));
    CK(cuMemcpyHtoD(x, hx, sizeof hx));
    CK(cuMemcpyHtoD_v2_ptds(y, hy, sizeof hy));
    CK(cuMemsetD32(a, 10, PROG_N));
    CK(cuMemsetD32Async_ptsz(b, 100, PROG_N, NULL));

    launches(saxpy, add_one, s1, x, y, a, b);
    CK(cuStreamSynchronize(s1));
    CK(cuStreamSynchronize_ptsz(NULL));
    CK(cuMemcpyDtoH(hy, y, sizeof hy));
    CK(cuMemcpyDtoH(ha, a, sizeof ha));
    CK(cuMemcpyDtoHAsync_v2_ptsz(hb, b, sizeof hb, NULL));
    CK(cuStreamSynchronize_ptsz(NULL));

    printf("door_linked: y[0]=%.1f y[255]=%.1f sum(y)=%.1f\n", hy[0], hy[255],
           prog_sum_float(hy, PROG_N));
    printf("door_linked: sum(a)=%ld sum(b)=%ld\n", prog_sum_int(ha, PROG_N),
           prog_sum_int(hb, PROG_N));
    return 0;
}
