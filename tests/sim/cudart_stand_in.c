/* cudart_stand_in.c -- a stand-in libcudart.so.13 for the simulator: just the runtime's
 * four kernel launch calls (cudaLaunchKernel, __cudaLaunchKernel and their _ptsz
 * twins), each turned into the driver launch a real libcudart makes, plus a count of
 * the calls that reached it.  Its symbols carry the version libcudart.so.13 (as the
 * real library's do), so a program linked with it makes versioned references: the
 * shim's unversioned wrappers (shim/intercept_cudart.c) must still take them.
 *
 * cudaLaunchKernel takes a host stub registered with cudart_stand_in_register;
 * __cudaLaunchKernel takes the function handle itself (as the real one takes a
 * kernel handle).  The _ptsz calls launch through cuLaunchKernel_ptsz.
 */
#include "cudart_stand_in.h"

/* cuda.h declares it only for per-thread builds. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                     unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                     CUstream stream, void **params, void **extra);

#define MAX_STUBS 16
static const void *stub_handle[MAX_STUBS];
static CUfunction stub_function[MAX_STUBS];
static int stubs;
static unsigned long calls;

int cudart_stand_in_register(const void *stub, CUfunction f)
{
    if (stubs == MAX_STUBS)
        return 1;
    stub_handle[stubs] = stub;
    stub_function[stubs++] = f;
    return 0;
}

unsigned long cudart_stand_in_calls(void)
{
    return calls;
}

static CUfunction function_of(const void *stub)
{
    for (int i = 0; i < stubs; i++)
        if (stub_handle[i] == stub)
            return stub_function[i];
    return NULL;
}

static int launch(CUfunction f, int ptsz, struct dim3_like g, struct dim3_like b,
                  void **args, size_t smem, void *stream)
{
    CUresult rc;
    __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    if (f == NULL)
        return 98;                        /* cudaErrorInvalidDeviceFunction */
    rc = (ptsz ? cuLaunchKernel_ptsz : cuLaunchKernel)(f, g.x, g.y, g.z, b.x, b.y, b.z,
                                                      (unsigned)smem, stream, args, NULL);
    return rc == CUDA_SUCCESS ? 0 : 1;    /* cudaErrorInvalidValue stands for any */
}

int cudaLaunchKernel(const void *stub, struct dim3_like g, struct dim3_like b, void **args,
                     size_t smem, void *stream)
{
    return launch(function_of(stub), 0, g, b, args, smem, stream);
}

int cudaLaunchKernel_ptsz(const void *stub, struct dim3_like g, struct dim3_like b,
                          void **args, size_t smem, void *stream)
{
    return launch(function_of(stub), 1, g, b, args, smem, stream);
}

int __cudaLaunchKernel(const void *kernel, struct dim3_like g, struct dim3_like b,
                       void **args, size_t smem, void *stream)
{
    return launch((CUfunction)kernel, 0, g, b, args, smem, stream);
}

int __cudaLaunchKernel_ptsz(const void *kernel, struct dim3_like g, struct dim3_like b,
                            void **args, size_t smem, void *stream)
{
    return launch((CUfunction)kernel, 1, g, b, args, smem, stream);
}
