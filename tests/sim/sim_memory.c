/* sim_memory.c -- allocations: the table of every range the simulator knows
 * (device, managed, pinned host, registered host, VMM mappings, stream-ordered)
 * and the allocation / free / query exports.
 *
 * Device memory is zeroed host memory, 256-byte aligned; a CUdeviceptr is the
 * pointer value.  Legacy 32-bit ABIs (cuMemAlloc, ...) get memory mapped below
 * 4 GiB so the pointer fits their CUdeviceptr_v1.  Each allocation takes an
 * ordinal (a1, a2, ...) when it comes alive; the log names pointers by it.  Registered
 * host memory is the program's own: the log calls it "host", and it takes its block
 * ordinal from a count of its own (a tool registering memory, as the shim's staging
 * does, leaves the program's ordinals as they were).
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SIM_ALIGN 256
#define SIM_PITCH 512

static sim_alloc *allocs;
static unsigned long next_ordinal, next_registered_ordinal;
static size_t bytes_in_use[SIM_MAX_DEVICES];     /* by device */

/* ---- the table */

sim_alloc *sim_mem_track(uintptr_t base, size_t size, int kind, sim_ctx *ctx, int active)
{
    sim_alloc *a = sim_xcalloc(1, sizeof *a);
    a->base = base;
    a->size = size;
    a->kind = kind;
    a->ctx = ctx;
    if (kind == SIM_MEM_REGISTERED)
        a->ordinal = ++next_registered_ordinal;
    else
        a->ordinal = active ? ++next_ordinal : 0;
    HASH_ADD(hh, allocs, base, sizeof a->base, a);
    if (kind != SIM_MEM_HOST && kind != SIM_MEM_REGISTERED)
        bytes_in_use[sim_ctx_dev(ctx)] += size;
    return a;
}

void sim_mem_untrack(sim_alloc *a)
{
    HASH_DEL(allocs, a);
    if (a->kind != SIM_MEM_HOST && a->kind != SIM_MEM_REGISTERED)
        bytes_in_use[sim_ctx_dev(a->ctx)] -= a->size;
    free(a);
}

void sim_mem_activate(sim_alloc *a)
{
    a->ordinal = ++next_ordinal;
}

sim_alloc *sim_mem_find(uintptr_t p)
{
    sim_alloc *a, *tmp;
    HASH_ITER(hh, allocs, a, tmp) {
        if (p >= a->base && p - a->base < a->size)
            return a;
    }
    return NULL;
}

sim_alloc *sim_mem_find_base(uintptr_t p)
{
    sim_alloc *a = NULL;
    HASH_FIND(hh, allocs, &p, sizeof p, a);
    return a;
}

CUresult sim_mem_check_range(uintptr_t p, size_t n)
{
    const sim_alloc *a = sim_mem_find(p);
    return a && n <= a->size - (p - a->base) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

int sim_mem_is_device(uintptr_t p)
{
    const sim_alloc *a = sim_mem_find(p);
    return a && a->kind != SIM_MEM_HOST && a->kind != SIM_MEM_REGISTERED;
}

int sim_mem_dev(uintptr_t p)
{
    const sim_alloc *a = sim_mem_find(p);
    if (!a || a->kind == SIM_MEM_HOST || a->kind == SIM_MEM_REGISTERED)
        return -1;
    return sim_ctx_dev(a->ctx);
}

static int by_ordinal(const void *x, const void *y)
{
    const sim_alloc *a = *(sim_alloc *const *)x, *b = *(sim_alloc *const *)y;
    return (a->ordinal > b->ordinal) - (a->ordinal < b->ordinal);
}

void sim_mem_foreach_live(sim_alloc_visit fn, void *user)
{
    size_t n = 0;
    sim_alloc *a, *tmp, **v = sim_xcalloc(HASH_COUNT(allocs) + 1, sizeof *v);
    HASH_ITER(hh, allocs, a, tmp) {
        if (a->ordinal)
            v[n++] = a;
    }
    qsort(v, n, sizeof *v, by_ordinal);
    for (size_t i = 0; i < n; i++)
        fn(v[i], user);
    free(v);
}

/* ---- raw memory */

void *sim_mem_raw_alloc(size_t size, int low32)
{
    size_t rounded = (size + SIM_ALIGN - 1) / SIM_ALIGN * SIM_ALIGN;
    void *p;
    if (!low32) {
        p = aligned_alloc(SIM_ALIGN, rounded);
        if (p)
            memset(p, 0, rounded);
        return p;
    }
#ifdef MAP_32BIT
    p = mmap(NULL, rounded, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
#else
    p = mmap((void *)0x40000000UL, rounded, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#endif
    if (p == MAP_FAILED)
        return NULL;
    if ((uintptr_t)p + rounded > 0xffffffffUL) {
        munmap(p, rounded);
        return NULL;
    }
    return p;
}

void sim_mem_raw_free(void *p, size_t size, int low32)
{
    if (low32)
        munmap(p, (size + SIM_ALIGN - 1) / SIM_ALIGN * SIM_ALIGN);
    else
        free(p);
}

/* Frees what the simulator owns; graph reservations only go dormant. */
void sim_mem_release(sim_alloc *a)
{
    if (a->graph_owned) {
        a->ordinal = 0;
        return;
    }
    if (a->kind != SIM_MEM_REGISTERED && a->kind != SIM_MEM_VMM)
        sim_mem_raw_free((void *)a->base, a->size, a->low32);
    sim_mem_untrack(a);
}

void sim_mem_drop_ctx(sim_ctx *ctx)
{
    sim_alloc *a, *tmp;
    HASH_ITER(hh, allocs, a, tmp) {
        if (a->ctx == ctx) {
            a->graph_owned = 0;
            sim_mem_release(a);
        }
    }
}

/* ---- device allocations */

/* Allocating and freeing need a context and are "potentially unsafe" during a
 * capture (sim_capture.c). */
static CUresult alloc_prologue(sim_ctx **ctx)
{
    CUresult rc = sim_need_ctx(ctx);
    return rc ? rc : sim_capture_check_unsafe();
}

/* Frees the allocation starting at p if its kind is in the bit set kinds. */
static CUresult release_base(uintptr_t p, unsigned kinds, CUresult wrong)
{
    sim_alloc *a = sim_mem_find_base(p);
    CUresult rc = alloc_prologue(NULL);
    if (rc)
        return rc;
    if (!a || !(kinds & (1u << a->kind)))
        return wrong;
    sim_mem_release(a);
    return CUDA_SUCCESS;
}

CUresult sim_mem_alloc_device(CUdeviceptr *dptr, size_t size, int kind, int low32)
{
    sim_ctx *ctx;
    CUresult rc = alloc_prologue(&ctx);
    void *p;
    if (rc)
        return rc;
    if (!dptr || !size)
        return CUDA_ERROR_INVALID_VALUE;
    if (size > SIM_TOTAL_MEM - bytes_in_use[ctx->dev] ||
        !(p = sim_mem_raw_alloc(size, low32)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim_mem_track((uintptr_t)p, size, kind, ctx, 1)->low32 = low32;
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult sim_mem_free_device(CUdeviceptr dptr)
{
    return release_base((uintptr_t)dptr, 1u << SIM_MEM_DEVICE | 1u << SIM_MEM_MANAGED |
                        1u << SIM_MEM_ASYNC, CUDA_ERROR_INVALID_VALUE);
}

CUresult sim_api_mem_alloc(CUdeviceptr *dptr, size_t bytesize)
{
    return sim_mem_alloc_device(dptr, bytesize, SIM_MEM_DEVICE, 0);
}

CUresult sim_api_mem_free(CUdeviceptr dptr)
{
    return sim_mem_free_device(dptr);
}

CUresult sim_mem_alloc_pitch(CUdeviceptr *d, size_t *pitch, size_t w, size_t h,
                             unsigned elem, int low32)
{
    size_t p = (w + SIM_PITCH - 1) / SIM_PITCH * SIM_PITCH;
    CUresult rc;
    if (!pitch || !w || !h || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = sim_mem_alloc_device(d, p * h, SIM_MEM_DEVICE, low32)) == CUDA_SUCCESS)
        *pitch = p;
    return rc;
}

CUresult sim_api_mem_alloc_pitch(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                 size_t Height, unsigned int ElementSizeBytes)
{
    return sim_mem_alloc_pitch(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes, 0);
}

CUresult sim_api_mem_alloc_managed(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    CUresult rc;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    rc = sim_mem_alloc_device(dptr, bytesize, SIM_MEM_MANAGED, 0);
    if (rc == CUDA_SUCCESS)
        sim_mem_find((uintptr_t)*dptr)->flags = flags;
    return rc;
}

CUresult sim_mem_get_info(size_t *free_b, size_t *total_b)
{
    sim_ctx *c;
    CUresult rc = sim_need_ctx(&c);
    if (rc)
        return rc;
    if (free_b)
        *free_b = SIM_TOTAL_MEM - bytes_in_use[c->dev];
    if (total_b)
        *total_b = SIM_TOTAL_MEM;
    return CUDA_SUCCESS;
}

CUresult sim_mem_address_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    const sim_alloc *a = sim_mem_find((uintptr_t)p);
    CUresult rc = sim_need_ctx(NULL);
    if (rc)
        return rc;
    if (!a || a->kind == SIM_MEM_HOST || a->kind == SIM_MEM_REGISTERED)
        return CUDA_ERROR_NOT_FOUND;
    if (base)
        *base = (CUdeviceptr)a->base;
    if (size)
        *size = a->size;
    return CUDA_SUCCESS;
}

/* ---- host memory */

CUresult sim_mem_host_alloc(void **pp, size_t size, unsigned flags)
{
    sim_ctx *ctx;
    CUresult rc = alloc_prologue(&ctx);
    void *p;
    if (rc)
        return rc;
    if (!pp || !size || (flags & ~0x7u))
        return CUDA_ERROR_INVALID_VALUE;
    if (!(p = sim_mem_raw_alloc(size, 0)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim_mem_track((uintptr_t)p, size, SIM_MEM_HOST, ctx, 1)->flags = flags;
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_free_host(void *p)
{
    return release_base((uintptr_t)p, 1u << SIM_MEM_HOST, CUDA_ERROR_INVALID_VALUE);
}

CUresult sim_api_mem_host_register(void *p, size_t bytesize, unsigned int Flags)
{
    sim_ctx *ctx;
    CUresult rc = alloc_prologue(&ctx);
    sim_alloc *a, *tmp;
    uintptr_t lo = (uintptr_t)p;
    if (rc)
        return rc;
    if (!p || !bytesize || (Flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    HASH_ITER(hh, allocs, a, tmp) {
        if (lo < a->base + a->size && a->base < lo + bytesize)
            return a->kind == SIM_MEM_REGISTERED ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
                                                 : CUDA_ERROR_INVALID_VALUE;
    }
    sim_mem_track(lo, bytesize, SIM_MEM_REGISTERED, ctx, 1)->flags = Flags;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_host_unregister(void *p)
{
    return release_base((uintptr_t)p, 1u << SIM_MEM_REGISTERED,
                        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

/* The pinned or registered host allocation containing p. */
static CUresult host_range(void *p, const sim_alloc **out)
{
    CUresult rc = sim_need_ctx(NULL);
    if (rc)
        return rc;
    *out = sim_mem_find((uintptr_t)p);
    if (!*out || ((*out)->kind != SIM_MEM_HOST && (*out)->kind != SIM_MEM_REGISTERED))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult sim_mem_host_device_pointer(CUdeviceptr *d, void *p, unsigned flags)
{
    const sim_alloc *a;
    CUresult rc = host_range(p, &a);
    if (rc)
        return rc;
    if (!d || flags)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_host_get_flags(unsigned int *pFlags, void *p)
{
    const sim_alloc *a;
    CUresult rc = host_range(p, &a);
    if (rc)
        return rc;
    if (!pFlags)
        return CUDA_ERROR_INVALID_VALUE;
    *pFlags = a->flags;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_alloc_host(void **pp, size_t bytesize)
{
    return sim_mem_host_alloc(pp, bytesize, 0);
}
