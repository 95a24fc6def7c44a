/* backend_cuda_issue.c -- the CUDA backend: an op's call made again, from its
 * recorded shape and args, on its own stream or on another one (the backend's
 * capture streams), through the real driver entry point it was recorded at.
 */
#include <cuda.h>

#include "backend_cuda.h"
#include "driver.h"
#include "entry_points.h"
#include "record_ops.h"

#include <string.h>

static CUresult issue_kernel(const struct ag_op *op, CUstream stream)
{
    const struct ag_kernel_shape *ks = (const void *)op->shape;
    const struct ag_kernel_dims d = ag_kernel_dims_of(op->args);
    struct ag_kernel_args ka;
    CUresult rc = ag_kernel_args_open(op, &ka);

    if (rc != CUDA_SUCCESS)
        return rc;
    if (ks->nattrs == 0 && (op->entry == AG_EP_cuLaunchKernel || op->entry == AG_EP_cuLaunchKernel_ptsz)) {
        __typeof__(&cuLaunchKernel) launch = ag_real_fn(op->entry);
        rc = launch((CUfunction)(uintptr_t)ks->func, d.grid[0], d.grid[1], d.grid[2],
                    d.block[0], d.block[1], d.block[2], d.smem, stream,
                    ka.params, ka.extra);
    } else {
        __typeof__(&cuLaunchKernelEx) launch = ag_real_fn(op->entry);
        CUlaunchAttribute attrs[16];
        const struct ag_attr_record *r = (const void *)(op->shape + sizeof *ks);
        CUlaunchConfig cfg = {
            .gridDimX = d.grid[0], .gridDimY = d.grid[1], .gridDimZ = d.grid[2],
            .blockDimX = d.block[0], .blockDimY = d.block[1], .blockDimZ = d.block[2],
            .sharedMemBytes = d.smem, .hStream = stream, .attrs = attrs,
            .numAttrs = ks->nattrs < 16 ? ks->nattrs : 16,
        };
        for (unsigned a = 0; a < cfg.numAttrs; a++) {
            memset(&attrs[a], 0, sizeof attrs[a]);
            attrs[a].id = (CUlaunchAttributeID)r[a].id;
            memcpy(&attrs[a].value, r[a].value, sizeof attrs[a].value);
        }
        rc = launch(&cfg, (CUfunction)(uintptr_t)ks->func, ka.params, ka.extra);
    }
    ag_kernel_args_close(&ka);
    return rc;
}

static CUresult issue_memset(const struct ag_op *op, CUstream stream)
{
    const struct ag_memset_shape *ms = (const void *)op->shape;
    struct ag_memset_args ma;             /* copied: a chunk packs args unaligned */
    void *fn = ag_real_fn(op->entry);
    memcpy(&ma, op->args, sizeof ma);
    switch (ms->elem) {
    case 1: return ((__typeof__(&cuMemsetD8Async))fn)(ma.dst, (unsigned char)ma.value, ma.count, stream);
    case 2: return ((__typeof__(&cuMemsetD16Async))fn)(ma.dst, (unsigned short)ma.value, ma.count, stream);
    default: return ((__typeof__(&cuMemsetD32Async))fn)(ma.dst, ma.value, ma.count, stream);
    }
}

static CUresult issue_copy(const struct ag_op *op, CUstream stream)
{
    struct ag_copy_args ca;               /* copied: a chunk packs args unaligned */
    void *fn = ag_real_fn(op->entry);
    memcpy(&ca, op->args, sizeof ca);
    switch (op->entry) {
    case AG_EP_cuMemcpyHtoDAsync_v2:
    case AG_EP_cuMemcpyHtoDAsync_v2_ptsz:
        return ((__typeof__(&cuMemcpyHtoDAsync))fn)(ca.dst, (const void *)(uintptr_t)ca.src,
                                                   ca.bytes, stream);
    case AG_EP_cuMemcpyDtoHAsync_v2:
    case AG_EP_cuMemcpyDtoHAsync_v2_ptsz:
        return ((__typeof__(&cuMemcpyDtoHAsync))fn)((void *)(uintptr_t)ca.dst, ca.src,
                                                   ca.bytes, stream);
    default:   /* cuMemcpyAsync and cuMemcpyDtoDAsync share this prototype */
        return ((__typeof__(&cuMemcpyAsync))fn)(ca.dst, ca.src, ca.bytes, stream);
    }
}

CUresult ag_cuda_issue(const struct ag_op *op, CUstream stream)
{
    void *fn = ag_real_fn(op->entry);
    if (fn == NULL)
        return CUDA_ERROR_NOT_FOUND;
    switch (op->kind) {
    case AG_OP_KERNEL:
        return issue_kernel(op, stream);
    case AG_OP_MEMSET:
        return issue_memset(op, stream);
    case AG_OP_MEMCPY:
        return issue_copy(op, stream);
    case AG_OP_EVENT_RECORD:
        if (op->entry == AG_EP_cuEventRecord || op->entry == AG_EP_cuEventRecord_ptsz)
            return ((__typeof__(&cuEventRecord))fn)((CUevent)op->event, stream);
        return ((__typeof__(&cuEventRecordWithFlags))fn)((CUevent)op->event, stream, 0);
    case AG_OP_EVENT_WAIT:
        return ((__typeof__(&cuStreamWaitEvent))fn)(stream, (CUevent)op->event, 0);
    case AG_OP_HOST_FUNC: {
        struct ag_host_args ha;           /* copied: a chunk packs args unaligned */
        memcpy(&ha, op->args, sizeof ha);
        return ((__typeof__(&cuLaunchHostFunc))fn)(stream, (CUhostFn)(uintptr_t)ha.fn,
                                                   (void *)(uintptr_t)ha.user);
    }
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}
