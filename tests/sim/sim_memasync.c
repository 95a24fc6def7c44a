/* sim_memasync.c -- stream-ordered allocation: cuMemAllocAsync and
 * cuMemFreeAsync (and their _ptsz twins).
 *
 * Eagerly they allocate / free at once.  Inside a capture they become
 * MEM_ALLOC / MEM_FREE nodes: the memory is reserved when captured and keeps
 * its address for the graph's life, but it only takes an allocation ordinal
 * (comes alive for the log and the exit checksums) when the MEM_ALLOC node
 * runs, and goes dormant when the MEM_FREE node runs -- so a replayed graph
 * logs like the eager code it was captured from.
 */
#include "sim_internal.h"

CUresult sim_api_mem_alloc_async(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    sim_stream *s;
    sim_alloc *a;
    void *p;
    sim_op op = { .kind = SIM_OP_MEM_ALLOC };
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!dptr || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(p = sim_mem_raw_alloc(bytesize, 0)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    a = sim_mem_track((uintptr_t)p, bytesize, SIM_MEM_ASYNC, (sim_ctx *)s->o.ctx, 0);
    a->graph_owned = s->cap != NULL;
    op.u.mem.a = a;
    if ((rc = sim_submit(s, &op, 0)) != CUDA_SUCCESS) {
        sim_mem_untrack(a);
        sim_mem_raw_free(p, bytesize, 0);
        return rc;
    }
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult sim_api_mem_free_async(CUdeviceptr dptr, CUstream hStream)
{
    sim_stream *s;
    sim_alloc *a = sim_mem_find_base((uintptr_t)dptr);
    sim_op op = { .kind = SIM_OP_MEM_FREE };
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!a || (a->kind != SIM_MEM_ASYNC && a->kind != SIM_MEM_DEVICE))
        return CUDA_ERROR_INVALID_VALUE;
    if (s->cap)
        a->graph_owned = 1;
    op.u.mem.a = a;
    if ((rc = sim_submit(s, &op, 0)) == CUDA_SUCCESS && !s->cap)
        sim_mem_release(a);
    return rc;
}
