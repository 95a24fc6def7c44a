/* sim_event.c -- events: create, record (eager, or a fork point / external
 * record node inside a capture), query, synchronise, elapsed time, destroy,
 * and cuStreamWaitEvent (eager no-op wait, or a capture join / fork).
 * An event is recorded only on a stream of its own context
 * (CUDA_ERROR_INVALID_HANDLE otherwise); a stream of any context, on any
 * device, may wait for it.
 *
 * Event times come from the logical clock of sim_op.c (one microsecond per
 * executed operation), so elapsed times are deterministic.  A successful synchronise
 * is reported to the CUPTI stand-in (sim_activity.c; eager records and waits are,
 * as they execute).
 */
#include "sim_activity.h"
#include "sim_internal.h"

#include <stdlib.h>

void sim_event_free(sim_event *e)
{
    sim_nodes_free(&e->deps);
    sim_obj_free(e);
}

void sim_event_op(sim_op *op, sim_event *e)
{
    op->u.evt.ev = e;
    op->u.evt.ordinal = e ? e->o.ordinal : 0;
}

void sim_event_mark(sim_event *e)
{
    e->recorded = 1;
    e->time = sim_clock_now();
    e->cap = NULL;
    e->cap_id = 0;
    sim_nodes_free(&e->deps);
}

static CUresult event_get(CUevent h, sim_event **out)
{
    CUresult rc;
    *out = sim_obj_need(h, SIM_K_EVENT, CUDA_ERROR_INVALID_HANDLE, &rc);
    return rc;
}

CUresult sim_api_event_create(CUevent *phEvent, unsigned int Flags)
{
    sim_ctx *c;
    sim_event *e;
    CUresult rc = sim_need_ctx(&c);
    if (rc)
        return rc;
    if (!phEvent || (Flags & ~0x7u) ||
        ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        return CUDA_ERROR_INVALID_VALUE;
    e = sim_obj_new(SIM_K_EVENT, sizeof *e, c);
    e->flags = Flags;
    *phEvent = (CUevent)e;
    return CUDA_SUCCESS;
}

CUresult sim_api_event_destroy(CUevent hEvent)
{
    sim_event *e;
    CUresult rc = event_get(hEvent, &e);
    if (rc == CUDA_SUCCESS)
        sim_event_free(e);
    return rc;
}

CUresult sim_api_event_record_with_flags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    sim_event *e;
    sim_stream *s;
    sim_op op = { .kind = SIM_OP_EVENT_RECORD };
    CUresult rc = event_get(hEvent, &e);
    if (rc || (rc = sim_stream_resolve(hStream, &s)) != CUDA_SUCCESS)
        return rc;
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    if (e->o.ctx != s->o.ctx)
        return CUDA_ERROR_INVALID_HANDLE;
    if (s->cap && !(flags & CU_EVENT_RECORD_EXTERNAL))
        return sim_capture_event_record(s, e);
    sim_event_op(&op, e);
    return sim_submit(s, &op, 0);
}

CUresult sim_api_event_record(CUevent hEvent, CUstream hStream)
{
    return sim_api_event_record_with_flags(hEvent, hStream, 0);
}

/* Query and synchronise: complete unless last recorded inside a capture. */
static CUresult event_settled(CUevent hEvent, sim_event **out)
{
    CUresult rc = event_get(hEvent, out);
    if (rc)
        return rc;
    return (*out)->cap ? CUDA_ERROR_CAPTURED_EVENT : CUDA_SUCCESS;
}

CUresult sim_api_event_query(CUevent hEvent)
{
    sim_event *e;
    return event_settled(hEvent, &e);
}

CUresult sim_api_event_synchronize(CUevent hEvent)
{
    sim_event *e;
    CUresult rc = event_settled(hEvent, &e);
    if (rc == CUDA_SUCCESS)
        sim_activity_sync(SIM_SYNC_EVENT, e->o.ctx, NULL, e);       /* CUPTI's record */
    return rc;
}

CUresult sim_api_event_elapsed_time(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    sim_event *a, *b;
    CUresult rc = event_get(hStart, &a);
    if (rc || (rc = event_get(hEnd, &b)) != CUDA_SUCCESS)
        return rc;
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->cap || b->cap)
        return CUDA_ERROR_CAPTURED_EVENT;
    if (!a->recorded || !b->recorded ||
        ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    *pMilliseconds = (float)((double)((int64_t)(b->time - a->time)) / 1000.0);
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_wait_event(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    sim_event *e;
    sim_stream *s;
    sim_op op = { .kind = SIM_OP_EVENT_WAIT };
    CUresult rc = event_get(hEvent, &e);
    if (rc || (rc = sim_stream_resolve(hStream, &s)) != CUDA_SUCCESS)
        return rc;
    if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    if (e->cap && sim_capture_live(e->cap, e->cap_id))
        return sim_capture_event_wait(s, e);
    if (s->cap && !(Flags & CU_EVENT_WAIT_EXTERNAL)) {
        if (!e->recorded)
            return CUDA_SUCCESS;
        sim_capture_invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    }
    sim_event_op(&op, e);
    return sim_submit(s, &op, 0);
}
