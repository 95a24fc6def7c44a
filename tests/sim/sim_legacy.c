/* sim_legacy.c -- the pre-3.2 ABIs that still live in libcuda (cuMemAlloc,
 * cuMemGetInfo, cuDeviceTotalMem, ... with 32-bit CUdeviceptr_v1 and sizes):
 * thin adapters over the shared implementations.  Memory they allocate is
 * mapped below 4 GiB so that its address fits a CUdeviceptr_v1.  (The legacy
 * copies and memsets live with the others in sim_copy.c.)
 */
#include "sim_internal.h"

#include <limits.h>

static unsigned int clamp32(size_t v)
{
    return v > UINT_MAX ? UINT_MAX : (unsigned int)v;
}

CUresult sim_api_v1_mem_alloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    CUdeviceptr d;
    CUresult rc = sim_mem_alloc_device(dptr ? &d : NULL, bytesize, SIM_MEM_DEVICE, 1);
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)d;
    return rc;
}

CUresult sim_api_v1_mem_free(CUdeviceptr_v1 dptr)
{
    return sim_mem_free_device(dptr);
}

CUresult sim_api_v1_mem_alloc_pitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch,
                                    unsigned int WidthInBytes, unsigned int Height,
                                    unsigned int ElementSizeBytes)
{
    CUdeviceptr d;
    size_t pitch;
    CUresult rc;
    if (!dptr || !pPitch)
        return sim_mem_alloc_pitch(NULL, NULL, WidthInBytes, Height, ElementSizeBytes, 1);
    rc = sim_mem_alloc_pitch(&d, &pitch, WidthInBytes, Height, ElementSizeBytes, 1);
    if (rc == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr_v1)d;
        *pPitch = (unsigned int)pitch;
    }
    return rc;
}

CUresult sim_api_v1_mem_alloc_host(void **pp, unsigned int bytesize)
{
    return sim_mem_host_alloc(pp, bytesize, 0);
}

CUresult sim_api_v1_mem_get_info(unsigned int *free_b, unsigned int *total_b)
{
    size_t f, t;
    CUresult rc = sim_mem_get_info(&f, &t);
    if (rc == CUDA_SUCCESS) {
        if (free_b)
            *free_b = clamp32(f);
        if (total_b)
            *total_b = clamp32(t);
    }
    return rc;
}

CUresult sim_api_v1_mem_get_address_range(CUdeviceptr_v1 *pbase, unsigned int *psize,
                                          CUdeviceptr_v1 dptr)
{
    CUdeviceptr b;
    size_t s;
    CUresult rc = sim_mem_address_range(&b, &s, dptr);
    if (rc == CUDA_SUCCESS) {
        if (pbase)
            *pbase = (CUdeviceptr_v1)b;
        if (psize)
            *psize = clamp32(s);
    }
    return rc;
}

CUresult sim_api_v1_mem_host_get_device_pointer(CUdeviceptr_v1 *pdptr, void *p,
                                                unsigned int Flags)
{
    CUdeviceptr d;
    CUresult rc = sim_mem_host_device_pointer(pdptr ? &d : NULL, p, Flags);
    if (rc)
        return rc;
    if (d > UINT_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr_v1)d;
    return CUDA_SUCCESS;
}

CUresult sim_api_v1_device_total_mem(unsigned int *bytes, CUdevice dev)
{
    size_t b;
    CUresult rc = sim_api_device_total_mem(bytes ? &b : NULL, dev);
    if (rc == CUDA_SUCCESS)
        *bytes = clamp32(b);
    return rc;
}
