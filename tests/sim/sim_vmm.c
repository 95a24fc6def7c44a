/* sim_vmm.c -- the virtual memory management subset: granularity, address
 * reservations, physical allocations, map / set access / unmap, release.
 *
 * Done for real with the host's VM: a reservation is a PROT_NONE mapping, a
 * physical allocation a memfd, and cuMemMap maps the memfd over the reserved
 * range (MAP_FIXED | MAP_SHARED), so two mappings of one allocation alias like
 * on a GPU.  Each mapping is an allocation of the table (kind "vmm").
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_GRANULARITY (2UL << 20)

typedef struct sim_memhandle {
    sim_obj o;
    int fd;
    size_t size;
} sim_memhandle;

typedef struct sim_reservation {
    uintptr_t base;
    size_t size;
    struct sim_reservation *next;
} sim_reservation;

static sim_reservation *reservations;

static CUresult check_prop(const CUmemAllocationProp *prop)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_get_allocation_granularity(size_t *granularity,
                                                const CUmemAllocationProp *prop,
                                                CUmemAllocationGranularity_flags option)
{
    CUresult rc = sim_need_init();
    (void)option;
    if (rc || (rc = check_prop(prop)) != CUDA_SUCCESS)
        return rc;
    if (!granularity)
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = SIM_GRANULARITY;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_create(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags)
{
    sim_ctx *c;
    sim_memhandle *h;
    int fd;
    CUresult rc = sim_need_ctx(&c);
    if (rc || (rc = check_prop(prop)) != CUDA_SUCCESS)
        return rc;
    if (!handle || !size || size % SIM_GRANULARITY || flags)
        return CUDA_ERROR_INVALID_VALUE;
    fd = memfd_create("sim-vmm", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    h = sim_obj_new(SIM_K_MEMHANDLE, sizeof *h, c);
    h->fd = fd;
    h->size = size;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_release(CUmemGenericAllocationHandle handle)
{
    CUresult rc;
    sim_memhandle *h = sim_obj_need((void *)(uintptr_t)handle, SIM_K_MEMHANDLE,
                                    CUDA_ERROR_INVALID_VALUE, &rc);
    if (rc)
        return rc;
    close(h->fd);                 /* live mappings keep the memory */
    sim_obj_free(h);
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_address_reserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags)
{
    sim_reservation *r;
    size_t align = alignment ? alignment : SIM_GRANULARITY;
    uintptr_t raw, base;
    void *p;
    CUresult rc = sim_need_init();
    (void)addr;
    if (rc)
        return rc;
    if (!ptr || !size || size % SIM_GRANULARITY || flags || (align & (align - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    p = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    raw = (uintptr_t)p;
    base = (raw + align - 1) / align * align;
    if (base > raw)
        munmap(p, base - raw);
    if (raw + size + align > base + size)
        munmap((void *)(base + size), raw + size + align - (base + size));
    r = sim_xcalloc(1, sizeof *r);
    r->base = base;
    r->size = size;
    r->next = reservations;
    reservations = r;
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

static sim_reservation *reservation_of(uintptr_t p, size_t size)
{
    for (sim_reservation *r = reservations; r; r = r->next) {
        if (p >= r->base && size <= r->size && p - r->base <= r->size - size)
            return r;
    }
    return NULL;
}

CUresult sim_api_mem_map(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    sim_memhandle *h = sim_obj_get((void *)(uintptr_t)handle, SIM_K_MEMHANDLE);
    uintptr_t p = (uintptr_t)ptr;
    sim_ctx *c;
    CUresult rc = sim_need_ctx(&c);
    if (rc)
        return rc;
    if (!h || flags || !size || size % SIM_GRANULARITY || offset % SIM_GRANULARITY ||
        offset > h->size || size > h->size - offset || !reservation_of(p, size))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t at = 0; at < size; at += SIM_GRANULARITY) {
        if (sim_mem_find(p + at))
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (mmap((void *)p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, h->fd,
             (off_t)offset) == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim_mem_track(p, size, SIM_MEM_VMM, c, 1);
    return CUDA_SUCCESS;
}

/* Every byte of [p, p + size) lies in VMM mappings; apply fn to each mapping. */
static CUresult mapped_walk(uintptr_t p, size_t size, void (*fn)(sim_alloc *))
{
    for (uintptr_t at = p; at < p + size;) {
        sim_alloc *a = sim_mem_find(at);
        if (!a || a->kind != SIM_MEM_VMM || (fn && (a->base < p || a->base + a->size > p + size)))
            return CUDA_ERROR_INVALID_VALUE;
        at = a->base + a->size;
    }
    for (uintptr_t at = p; fn && at < p + size;) {
        sim_alloc *a = sim_mem_find(at);
        at = a->base + a->size;
        fn(a);
    }
    return CUDA_SUCCESS;
}

static void unmap_one(sim_alloc *a)
{
    mmap((void *)a->base, a->size, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    sim_mem_untrack(a);
}

CUresult sim_api_mem_set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                size_t count)
{
    CUresult rc = sim_need_ctx(NULL);
    if (rc)
        return rc;
    if (!desc || !count || !size)
        return CUDA_ERROR_INVALID_VALUE;
    return mapped_walk((uintptr_t)ptr, size, NULL);
}

CUresult sim_api_mem_unmap(CUdeviceptr ptr, size_t size)
{
    CUresult rc = sim_need_ctx(NULL);
    if (rc)
        return rc;
    if (!size)
        return CUDA_ERROR_INVALID_VALUE;
    return mapped_walk((uintptr_t)ptr, size, unmap_one);
}

CUresult sim_api_mem_address_free(CUdeviceptr ptr, size_t size)
{
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    for (sim_reservation **r = &reservations; *r; r = &(*r)->next) {
        sim_reservation *x = *r;
        if (x->base != (uintptr_t)ptr || x->size != size)
            continue;
        for (uintptr_t at = x->base; at < x->base + x->size; at += SIM_GRANULARITY) {
            sim_alloc *a = sim_mem_find(at);
            if (a && a->kind == SIM_MEM_VMM)
                sim_mem_untrack(a);
        }
        munmap((void *)x->base, x->size);
        *r = x->next;
        free(x);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}
