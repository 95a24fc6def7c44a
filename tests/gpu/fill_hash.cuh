// fill_hash.cuh -- the deterministic pseudo-random fill shared by the GPU test kernels
// (rt_prog.cu, drv_kernels.cu): element i of a buffer seeded with `seed`, in [-0.5, 0.5);
// and mix32, the integer hash the programs' kernels mix with (prog_common.cuh,
// alloc_loop_prog.cu, trainer_prog.cu, decode_prog.cu).
#pragma once

__device__ __host__ inline unsigned mix32(unsigned h)
{
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

__device__ inline float ag_fill_value(int i, unsigned seed)
{
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (float)(h & 0xffffff) / 16777216.0f - 0.5f;
}
