/* sim_pointer.c -- pointer queries: cuPointerGetAttribute(s).
 *
 * Answers from the allocation table (sim_memory.c).  A pointer the simulator
 * does not know is CUDA_ERROR_INVALID_VALUE for cuPointerGetAttribute, and
 * zeroed answers for cuPointerGetAttributes, like the driver.
 */
#include "sim_internal.h"

#include <string.h>

static unsigned memory_type(const sim_alloc *a)
{
    return a->kind == SIM_MEM_HOST || a->kind == SIM_MEM_REGISTERED ? CU_MEMORYTYPE_HOST
                                                                    : CU_MEMORYTYPE_DEVICE;
}

static size_t attribute_size(CUpointer_attribute attr)
{
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        return sizeof(void *);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        return sizeof(size_t);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
        return sizeof(unsigned int);
    default:
        return 0;
    }
}

/* The value of attr for p inside a, as a 64-bit number or pointer. */
static CUresult attribute_value(const sim_alloc *a, CUpointer_attribute attr, uintptr_t p,
                                unsigned long long *out)
{
    int host = memory_type(a) == CU_MEMORYTYPE_HOST;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:          *out = (uintptr_t)a->ctx; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:      *out = memory_type(a); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:   *out = p; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!host && a->kind != SIM_MEM_MANAGED)
            return CUDA_ERROR_INVALID_VALUE;
        *out = p;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:  *out = a->ordinal; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:       *out = a->kind == SIM_MEM_MANAGED; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:   *out = (unsigned)sim_ctx_dev(a->ctx); break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: *out = a->base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:     *out = a->size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED:           *out = 1; break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *out = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
        break;
    default:                                    *out = 0; break;
    }
    return CUDA_SUCCESS;
}

static void store(void *data, size_t size, unsigned long long v)
{
    if (size == sizeof(unsigned int)) {
        unsigned int u = (unsigned int)v;
        memcpy(data, &u, size);
    } else {
        memcpy(data, &v, size);
    }
}

CUresult sim_api_pointer_get_attribute(void *data, CUpointer_attribute attribute,
                                       CUdeviceptr ptr)
{
    const sim_alloc *a = sim_mem_find((uintptr_t)ptr);
    size_t size = attribute_size(attribute);
    unsigned long long v;
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!data || !size || !a)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = attribute_value(a, attribute, (uintptr_t)ptr, &v)) == CUDA_SUCCESS)
        store(data, size, v);
    return rc;
}

CUresult sim_api_pointer_get_attributes(unsigned int numAttributes,
                                        CUpointer_attribute *attributes, void **data,
                                        CUdeviceptr ptr)
{
    const sim_alloc *a = sim_mem_find((uintptr_t)ptr);
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; i++) {
        size_t size = attribute_size(attributes[i]);
        unsigned long long v = 0;
        if (!size || !data[i])
            return CUDA_ERROR_INVALID_VALUE;
        if (a && attribute_value(a, attributes[i], (uintptr_t)ptr, &v) != CUDA_SUCCESS)
            v = 0;
        store(data[i], size, v);
    }
    return CUDA_SUCCESS;
}
