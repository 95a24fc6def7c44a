// cuda_check.cuh -- CK(call): the GPU test and bench programs' check of a CUDA runtime
// call: on an error, print file, line, call and error string, and exit with status 2.
#ifndef AG_CUDA_CHECK_CUH
#define AG_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                 \
                    cudaGetErrorString(e_));                                           \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

#endif
