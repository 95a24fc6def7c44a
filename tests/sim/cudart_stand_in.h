/* cudart_stand_in.h -- what the stand-in libcudart.so.13 (cudart_stand_in.c) exports:
 * the runtime's four kernel launch calls, with dim3 as three unsigned (the same
 * registers as the real one's), and its two helpers for the test programs.
 */
#ifndef CUDART_STAND_IN_H
#define CUDART_STAND_IN_H

#include <cuda.h>
#include <stddef.h>

struct dim3_like {
    unsigned x, y, z;
};

typedef int runtime_launch_fn(const void *handle, struct dim3_like grid,
                              struct dim3_like block, void **args, size_t smem,
                              void *stream);
runtime_launch_fn cudaLaunchKernel, cudaLaunchKernel_ptsz, __cudaLaunchKernel,
    __cudaLaunchKernel_ptsz;

/* cudaLaunchKernel(stub, ...) launches f once stub is registered: 0, or 1 when full. */
int cudart_stand_in_register(const void *stub, CUfunction f);

/* The launch calls that reached the stand-in so far. */
unsigned long cudart_stand_in_calls(void);

#endif
