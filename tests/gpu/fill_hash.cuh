// fill_hash.cuh -- the deterministic pseudo-random fill shared by the GPU test kernels
// (rt_prog.cu, drv_kernels.cu): element i of a buffer seeded with `seed`, in [-0.5, 0.5).
#pragma once

__device__ inline float ag_fill_value(int i, unsigned seed)
{
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (float)(h & 0xffffff) / 16777216.0f - 0.5f;
}
