/* sim_stream.c -- streams: created streams, the legacy default stream of each
 * context, the per-thread default stream of each (thread, context), handle
 * resolution (0 / CU_STREAM_LEGACY / CU_STREAM_PER_THREAD, and 0 seen by a
 * _ptds/_ptsz export), stream queries, synchronisation and host functions.
 *
 * Labels are deterministic: created streams are s1, s2, ... in creation order;
 * the special ones are "legacy" and "ptds".  All work is complete at
 * submission, so synchronising and querying only check capture rules.  Stream
 * creations and successful synchronises are reported to the CUPTI stand-in
 * (sim_activity.c).
 */
#include "sim_activity.h"
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>

static unsigned long created_streams;
static unsigned long long next_stream_id;

sim_stream *sim_stream_new(sim_ctx *ctx, unsigned flags, int priority, int special)
{
    sim_stream *s = sim_obj_new(SIM_K_STREAM, sizeof *s, ctx);
    s->flags = flags;
    s->priority = priority;
    s->special = special;
    s->id = ++next_stream_id;
    if (special == SIM_STREAM_LEGACY)
        snprintf(s->label, sizeof s->label, "legacy");
    else if (special == SIM_STREAM_PTDS)
        snprintf(s->label, sizeof s->label, "ptds");
    else
        snprintf(s->label, sizeof s->label, "s%lu", ++created_streams);
    sim_activity_stream(s);             /* CUPTI's stream (and context) record */
    return s;
}

void sim_stream_free(sim_stream *s)
{
    if (!s)
        return;
    if (s->cap)
        sim_capture_stream_gone(s);
    sim_nodes_free(&s->deps);
    free(s->edge_scratch);
    sim_obj_free(s);
}

static sim_stream *ptds_stream(sim_ctx *c)
{
    sim_tls *t = sim_tls_get();
    sim_tls_pt *slot = NULL;
    size_t n = sizeof t->pt / sizeof *t->pt;
    for (size_t i = 0; i < n; i++) {
        sim_stream *s = sim_obj_get(t->pt[i].stream, SIM_K_STREAM);
        if (s && t->pt[i].ctx == c && s->o.ctx == c && s->special == SIM_STREAM_PTDS)
            return s;
        if (!s && !slot)
            slot = &t->pt[i];
    }
    if (!slot)
        slot = &t->pt[0];
    slot->ctx = c;
    slot->stream = sim_stream_new(c, 0, 0, SIM_STREAM_PTDS);
    return slot->stream;
}

CUresult sim_stream_resolve(CUstream h, sim_stream **out)
{
    sim_ctx *c;
    sim_stream *s;
    CUresult rc;
    if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        if ((rc = sim_need_ctx(&c)) != CUDA_SUCCESS)
            return rc;
        int pt = h == CU_STREAM_PER_THREAD || (!h && sim_tls_get()->ptds);
        *out = pt ? ptds_stream(c) : c->legacy;
        return CUDA_SUCCESS;
    }
    if ((rc = sim_need_init()) != CUDA_SUCCESS)
        return rc;
    s = sim_obj_get(h, SIM_K_STREAM);
    if (!s || !sim_ctx_check((CUcontext)s->o.ctx))
        return CUDA_ERROR_INVALID_HANDLE;
    *out = s;
    return CUDA_SUCCESS;
}

/* ---- create / destroy */

CUresult sim_api_stream_create_with_priority(CUstream *phStream, unsigned int flags,
                                             int priority)
{
    sim_ctx *c;
    CUresult rc = sim_need_ctx(&c);
    if (rc)
        return rc;
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
    *phStream = (CUstream)sim_stream_new(c, flags, priority, SIM_STREAM_CREATED);
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_create(CUstream *phStream, unsigned int Flags)
{
    return sim_api_stream_create_with_priority(phStream, Flags, 0);
}

CUresult sim_api_stream_destroy(CUstream hStream)
{
    sim_stream *s = sim_obj_get(hStream, SIM_K_STREAM);
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!s || s->special != SIM_STREAM_CREATED)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_stream_free(s);
    return CUDA_SUCCESS;
}

/* ---- synchronisation: the work is done; only capture rules can object */

static CUresult stream_wait_idle(CUstream h, sim_stream **out)
{
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, &s);
    if (rc)
        return rc;
    *out = s;
    if (s->cap) {
        sim_capture_invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (s->special == SIM_STREAM_LEGACY)
        return sim_capture_check_legacy((sim_ctx *)s->o.ctx);
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_synchronize(CUstream hStream)
{
    sim_stream *s;
    CUresult rc = stream_wait_idle(hStream, &s);
    if (rc == CUDA_SUCCESS)
        sim_activity_sync(SIM_SYNC_STREAM, s->o.ctx, s, NULL);     /* CUPTI's record */
    return rc;
}

CUresult sim_api_stream_query(CUstream hStream)
{
    sim_stream *s;
    return stream_wait_idle(hStream, &s);
}

/* ---- host work */

CUresult sim_api_launch_host_func(CUstream hStream, CUhostFn fn, void *userData)
{
    sim_stream *s;
    sim_op op = { .kind = SIM_OP_HOST };
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    op.u.host.fn = fn;
    op.u.host.user = userData;
    return sim_submit(s, &op, 0);
}

CUresult sim_api_stream_add_callback(CUstream hStream, CUstreamCallback callback,
                                     void *userData, unsigned int flags)
{
    sim_stream *s;
    sim_op op = { .kind = SIM_OP_CALLBACK };
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!callback || flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->cap) {
        sim_capture_invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    op.u.cb.fn = callback;
    op.u.cb.user = userData;
    op.u.cb.stream = hStream;
    return sim_submit(s, &op, 0);
}

/* ---- queries */

CUresult sim_api_stream_get_flags(CUstream hStream, unsigned int *flags)
{
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = s->flags;
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_get_priority(CUstream hStream, int *priority)
{
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!priority)
        return CUDA_ERROR_INVALID_VALUE;
    *priority = s->priority;
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_get_id(CUstream hStream, unsigned long long *streamId)
{
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!streamId)
        return CUDA_ERROR_INVALID_VALUE;
    *streamId = s->id;
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_get_ctx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!pCtx)
        return CUDA_ERROR_INVALID_VALUE;
    *pCtx = (CUcontext)s->o.ctx;
    if (pGreenCtx)
        *pGreenCtx = NULL;
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_get_ctx(CUstream hStream, CUcontext *pctx)
{
    return sim_api_stream_get_ctx_v2(hStream, pctx, NULL);
}

CUresult sim_api_stream_get_device(CUstream hStream, CUdevice *device)
{
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = sim_ctx_dev(s->o.ctx);
    return CUDA_SUCCESS;
}
