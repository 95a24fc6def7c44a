// nr_kernels.cuh -- the two kernels of the benchmarks' non-repeating loops
// (engine_bench.cu, launch_bench.cu): each launch's grid and argument change, so no
// window ever repeats.
#ifndef AG_NR_KERNELS_CUH
#define AG_NR_KERNELS_CUH

__global__ void k_nr_a(unsigned *x, unsigned k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = x[i] * 5u + k;
}

__global__ void k_nr_b(unsigned *x, unsigned k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = (x[i] ^ k) + i;
}

#endif
