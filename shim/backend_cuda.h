/* backend_cuda.h -- what the files of the CUDA backend share: the DRIVER macro, the
 * context helpers (backend_cuda.c), an op's call made again (backend_cuda_issue.c)
 * and the stream joins around a chunk launch (backend_cuda_join.c), which the
 * intercept layer also calls (ag_join_settle).
 * Include after <cuda.h> (internal mode).
 */
#ifndef AG_BACKEND_CUDA_H
#define AG_BACKEND_CUDA_H

#include <cuda.h>

#include "driver.h"
#include "fault_inject.h"
#include "record_ops.h"   /* ag_driver_proc */

/* var = the real driver function `name`, looked up once (DRIVER_PROC: the launcher
 * threads of two engines may race to); returns from the caller when it is missing,
 * or when AUTOGRAPH_INJECT_FAULTS fails this use of it (fault_inject.c). */
#define DRIVER(var, name) \
    int injected_##var = ag_fault_check(#name); \
    if (injected_##var) \
        return (CUresult)injected_##var; \
    DRIVER_PROC(var, __typeof__(&name), #name); \
    if (var == NULL) \
        return CUDA_ERROR_NOT_FOUND

/* Makes ctx current for a while (pushed: whether leave_context must pop it). */
CUresult ag_cuda_enter_context(CUcontext ctx, int *pushed);
void ag_cuda_leave_context(int pushed);

/* backend_cuda_issue.c.  Makes op's call again, on `stream` (a stream handle, not a
 * key); the driver's result. */
CUresult ag_cuda_issue(const struct ag_op *op, CUstream stream);

/* backend_cuda_join.c.  The events the joins of context ctx use, made there once; 0
 * or the error. */
CUresult ag_join_prepare(CUcontext ctx);

/* Joins streams[1..n) into streams[0] where needed, launches exec (of context ctx)
 * there and owes the fork back of streams[1..n).  0 or the error (then nothing was
 * launched). */
CUresult ag_join_launch(CUgraphExec exec, CUcontext ctx, const CUstream *streams, int n);

/* What a call that reaches the driver, other than a held op, does first: issues the
 * fork backs every context owes; adds_work: the call may put work on a stream. */
void ag_join_settle(int adds_work);

#endif
