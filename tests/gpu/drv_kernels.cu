// drv_kernels.cu -- kernels for drv_prog (program (c)).  Built with nvcc -fatbin into
// build/gpu/drv_kernels.fatbin, which drv_blob.S embeds in the program; drv_prog loads
// it with cuModuleLoadData and cuLibraryLoadData.  extern "C": unmangled names.

#include "fill_hash.cuh"

extern "C" __global__ void ag_fill(float *x, int n, unsigned seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = ag_fill_value(i, seed);
}

extern "C" __global__ void ag_axpy(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

extern "C" __global__ void ag_mix(float *x, const float *y, int n, int step)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i] * 0.75f + y[(i + step * 7) % n] * 0.25f;
        x[i] = v - floorf(v) - 0.5f;
    }
}

// Mixed parameter sizes and alignments, for launches with an `extra` packed buffer.
extern "C" __global__ void ag_packed(float *x, char c, double d, int n, short s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = (float)((double)x[i] * d + (double)c * 1e-3 + (double)s * 1e-4);
}
