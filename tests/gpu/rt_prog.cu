// rt_prog.cu -- GPU test program (a)/(b): a CUDA runtime program, launched with <<<>>>.
//
// Built twice by tests/gpu/gpu.mk: with nvcc's default static cudart (build/gpu/rt_static)
// and with -cudart=shared (build/gpu/rt_shared).  It runs a loop of a few dependent
// kernels with a sync per iteration, plus launches through the driver's cuLaunchKernel
// obtained with cudaGetDriverEntryPoint / cudaGetDriverEntryPointByVersion (legacy and
// per-thread default stream: "door 4"), and cudaLaunchKernelEx.
//
//   rt_prog [iterations]        (default 20)
//
// stdout: the raw bytes of the final buffers (compare runs with cmp).
// stderr: "expected_launches N" -- how many kernel launches the program made, and
// "expected_call cuLaunchKernel_ptsz N" (the per-thread launches through door 4).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fill_hash.cuh"

#define N (1 << 18)

#include "cuda_check.cuh"
#define CKD(x)                                                                         \
    do {                                                                               \
        CUresult r_ = (x);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #x, (int)r_); \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

__global__ void k_init(float *x, int n, unsigned seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = ag_fill_value(i, seed);
}

__global__ void k_axpy(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void k_mix(float *x, const float *y, int n, int step)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i] * 0.75f + y[(i + step * 7) % n] * 0.25f;
        x[i] = v - floorf(v) - 0.5f;
    }
}

__global__ void k_scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * s + 0.001f;
}

typedef CUresult (*cuLaunchKernel_pfn)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, unsigned, CUstream, void **,
                                       void **);

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    long launches = 0;
    const int bs = 256, gs = (N + bs - 1) / bs;
    float *x, *y;
    CK(cudaMalloc(&x, N * sizeof(float)));
    CK(cudaMalloc(&y, N * sizeof(float)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t ev;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));

    k_init<<<gs, bs>>>(x, N, 1u);
    k_init<<<gs, bs>>>(y, N, 2u);
    launches += 2;
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    // The main loop: a few dependent kernels on the legacy stream, then on a created
    // stream, with a sync per iteration.
    for (int it = 0; it < iters; it++) {
        k_axpy<<<gs, bs>>>(y, x, 0.5f, N);
        k_mix<<<gs, bs>>>(x, y, N, it);
        CK(cudaEventRecord(ev, 0));  // s is non-blocking: order it after the legacy stream
        CK(cudaStreamWaitEvent(s, ev, 0));
        k_scale<<<gs, bs, 0, s>>>(y, 0.999f, N);
        launches += 3;
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(s));
        CK(cudaDeviceSynchronize());
    }

    // Door 4: the driver's cuLaunchKernel through the runtime's entry-point query.
    cudaFunction_t fa, fm;
    CK(cudaGetFuncBySymbol(&fa, (const void *)k_axpy));
    CK(cudaGetFuncBySymbol(&fm, (const void *)k_mix));
    cudaDriverEntryPointQueryResult qr;
    void *p_legacy = NULL, *p_ptsz = NULL, *p_old = NULL;
    CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &p_legacy, 12000,
                                        cudaEnableLegacyStream, &qr));
    if (qr != cudaDriverEntryPointSuccess || !p_legacy) {
        fprintf(stderr, "cudaGetDriverEntryPointByVersion(cuLaunchKernel) failed\n");
        return 2;
    }
    CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &p_ptsz, 12000,
                                        cudaEnablePerThreadDefaultStream, &qr));
    if (qr != cudaDriverEntryPointSuccess || !p_ptsz) {
        fprintf(stderr, "cudaGetDriverEntryPointByVersion(cuLaunchKernel, ptds) failed\n");
        return 2;
    }
#pragma nv_diag_suppress 1444
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    CK(cudaGetDriverEntryPoint("cuLaunchKernel", &p_old, cudaEnableDefault, &qr));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    if (qr != cudaDriverEntryPointSuccess || !p_old) {
        fprintf(stderr, "cudaGetDriverEntryPoint(cuLaunchKernel) failed\n");
        return 2;
    }
    cuLaunchKernel_pfn launch_legacy = (cuLaunchKernel_pfn)p_legacy;
    cuLaunchKernel_pfn launch_ptsz = (cuLaunchKernel_pfn)p_ptsz;
    cuLaunchKernel_pfn launch_old = (cuLaunchKernel_pfn)p_old;
    int n = N;
    for (int it = 0; it < iters; it++) {
        float a = 0.25f;
        void *pa[] = {&y, &x, &a, &n};
        int step = it + 1000;
        void *pm[] = {&x, &y, &n, &step};
        CKD(launch_legacy((CUfunction)fa, gs, 1, 1, bs, 1, 1, 0, 0, pa, NULL));
        CK(cudaEventRecord(ev, 0));
        CK(cudaStreamWaitEvent(s, ev, 0));
        CKD(launch_old((CUfunction)fm, gs, 1, 1, bs, 1, 1, 0, (CUstream)s, pm, NULL));
        CK(cudaStreamSynchronize(s));
        // per-thread default stream (stream 0 means the per-thread one here)
        CKD(launch_ptsz((CUfunction)fa, gs, 1, 1, bs, 1, 1, 0, 0, pa, NULL));
        CK(cudaDeviceSynchronize());
        launches += 3;
    }

    // cudaLaunchKernelEx (the runtime's cuLaunchKernelEx path).
    for (int it = 0; it < iters; it++) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(gs);
        cfg.blockDim = dim3(bs);
        cfg.stream = s;
        CK(cudaLaunchKernelEx(&cfg, k_scale, y, 1.0001f, N));
        CK(cudaLaunchKernelEx(&cfg, k_mix, x, (const float *)y, N, it + 5000));
        launches += 2;
    }
    CK(cudaStreamSynchronize(s));
    CK(cudaDeviceSynchronize());

    static float hx[N], hy[N];
    CK(cudaMemcpy(hx, x, sizeof hx, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    fwrite(hx, 1, sizeof hx, stdout);
    fwrite(hy, 1, sizeof hy, stdout);
    fflush(stdout);
    CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(x));
    CK(cudaFree(y));
    fprintf(stderr, "expected_launches %ld\n", launches);
    // the only per-thread-stream launches are the door-4 ones above
    fprintf(stderr, "expected_call cuLaunchKernel_ptsz %d\n", iters);
    return 0;
}
