/* drv_common.h -- shared by drv_prog.c and drv_ptsz.c (program (c)). */
#ifndef AG_DRV_COMMON_H
#define AG_DRV_COMMON_H
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define NELEM (1 << 18)

#define CK(x)                                                                          \
    do {                                                                               \
        CUresult r_ = (x);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                      \
            const char *s_ = NULL;                                                     \
            cuGetErrorName(r_, &s_);                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

/* drv_ptsz.c (built with CUDA_API_PER_THREAD_DEFAULT_STREAM): launches on the calling
 * thread's default stream through the _ptsz ABI; returns the number of launches. */
long ptsz_work(CUfunction f_fill, CUfunction f_axpy, CUdeviceptr buf, int iters,
               unsigned seed);
#endif
