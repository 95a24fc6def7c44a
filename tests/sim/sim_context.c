/* sim_context.c -- contexts: the primary context of each device, created
 * contexts (any number per device), the per-thread context stack, and
 * context-wide synchronisation.
 *
 * Destroying a context (or releasing / resetting the primary one to nothing)
 * frees what it owns: allocations, streams, events, modules, executable graphs.
 */
#include "sim_activity.h"
#include "sim_internal.h"

#include <stdlib.h>

static sim_ctx *primaries[SIM_MAX_DEVICES];
static unsigned primary_refs[SIM_MAX_DEVICES], primary_flags[SIM_MAX_DEVICES];

sim_ctx *sim_ctx_check(CUcontext h)
{
    sim_ctx *c = sim_obj_get(h, SIM_K_CTX);
    return c && c->active ? c : NULL;
}

CUresult sim_need_ctx(sim_ctx **out)
{
    sim_tls *t = sim_tls_get();
    sim_ctx *c;
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    c = t->depth ? sim_ctx_check((CUcontext)t->stack[t->depth - 1]) : NULL;
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (out)
        *out = c;
    return CUDA_SUCCESS;
}

static void ctx_activate(sim_ctx *c)
{
    c->active = 1;
    if (!c->legacy)
        c->legacy = sim_stream_new(c, 0, 0, SIM_STREAM_LEGACY);
}

static void drop_kind(sim_ctx *c, int kind)
{
    void **v;
    size_t n = sim_obj_list(kind, c, &v);
    for (size_t i = 0; i < n; i++) {
        if (kind == SIM_K_EXEC) {
            sim_graph_free(((sim_exec *)v[i])->g);
            sim_obj_free(v[i]);
        } else if (kind == SIM_K_EVENT) {
            sim_event_free(v[i]);
        } else if (kind == SIM_K_MODULE) {
            sim_module_free(v[i]);
        } else if (((sim_stream *)v[i])->special != SIM_STREAM_LEGACY) {
            sim_stream_free(v[i]);
        }
    }
    free(v);
}

static void ctx_drop(sim_ctx *c)
{
    static const int kinds[] = { SIM_K_EXEC, SIM_K_EVENT, SIM_K_STREAM, SIM_K_MODULE };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        drop_kind(c, kinds[i]);
    sim_mem_drop_ctx(c);
    sim_peer_forget(c);
}

/* ---- primary context */

CUresult sim_api_primary_ctx_retain(CUcontext *pctx, CUdevice dev)
{
    sim_ctx *p;
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(p = primaries[dev])) {
        p = primaries[dev] = sim_obj_new(SIM_K_CTX, sizeof *p, NULL);
        p->primary = 1;
        p->dev = dev;
    }
    p->flags = primary_flags[dev];
    ctx_activate(p);
    primary_refs[dev]++;
    *pctx = (CUcontext)p;
    return CUDA_SUCCESS;
}

CUresult sim_api_primary_ctx_release(CUdevice dev)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!primary_refs[dev])
        return CUDA_ERROR_INVALID_CONTEXT;
    if (--primary_refs[dev] == 0) {
        ctx_drop(primaries[dev]);
        primaries[dev]->active = 0;
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_primary_ctx_reset(CUdevice dev)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (primaries[dev] && primaries[dev]->active) {
        ctx_drop(primaries[dev]);
        primaries[dev]->active = 0;
    }
    primary_refs[dev] = 0;
    return CUDA_SUCCESS;
}

CUresult sim_api_primary_ctx_get_state(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = primary_flags[dev];
    *active = primaries[dev] && primaries[dev]->active;
    return CUDA_SUCCESS;
}

CUresult sim_api_primary_ctx_set_flags(CUdevice dev, unsigned int flags)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    primary_flags[dev] = flags;
    return CUDA_SUCCESS;
}

/* ---- created contexts and the stack */

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    sim_tls *t = sim_tls_get();
    sim_ctx *c;
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (t->depth == (int)(sizeof t->stack / sizeof *t->stack))
        return CUDA_ERROR_OUT_OF_MEMORY;
    c = sim_obj_new(SIM_K_CTX, sizeof *c, NULL);
    c->flags = flags;
    c->dev = dev;
    ctx_activate(c);
    t->stack[t->depth++] = c;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult sim_api_ctx_create_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                               int numParams, unsigned int flags, CUdevice dev)
{
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}

CUresult sim_api_ctx_create_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                               unsigned int flags, CUdevice dev)
{
    (void)ctxCreateParams;
    return ctx_create(pctx, flags, dev);
}

CUresult sim_api_ctx_destroy(CUcontext ctx)
{
    sim_tls *t = sim_tls_get();
    sim_ctx *c = sim_obj_get(ctx, SIM_K_CTX);
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!c || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    for (int i = 0; i < t->depth; i++) {
        if (t->stack[i] == c) {
            for (int j = i; j + 1 < t->depth; j++)
                t->stack[j] = t->stack[j + 1];
            t->depth--;
            i--;
        }
    }
    ctx_drop(c);
    sim_stream_free(c->legacy);
    sim_obj_free(c);
    return CUDA_SUCCESS;
}

/* Puts ctx on top of the calling thread's stack: pushed, or replacing the top. */
static CUresult stack_put(CUcontext ctx, int push)
{
    sim_tls *t = sim_tls_get();
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!sim_obj_get(ctx, SIM_K_CTX))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (push || !t->depth) {
        if (t->depth == (int)(sizeof t->stack / sizeof *t->stack))
            return CUDA_ERROR_OUT_OF_MEMORY;
        t->depth++;
    }
    t->stack[t->depth - 1] = (sim_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_set_current(CUcontext ctx)
{
    sim_tls *t = sim_tls_get();
    if (ctx || sim_need_init())
        return stack_put(ctx, 0);
    if (t->depth)
        t->depth--;                 /* NULL pops */
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_get_current(CUcontext *pctx)
{
    sim_tls *t = sim_tls_get();
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = t->depth ? (CUcontext)t->stack[t->depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_push_current(CUcontext ctx)
{
    return stack_put(ctx, 1);
}

CUresult sim_api_ctx_pop_current(CUcontext *pctx)
{
    sim_tls *t = sim_tls_get();
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!t->depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    t->depth--;
    if (pctx)
        *pctx = (CUcontext)t->stack[t->depth];
    return CUDA_SUCCESS;
}

/* ---- queries and synchronisation */

CUresult sim_api_ctx_get_device(CUdevice *device)
{
    sim_ctx *c;
    CUresult rc = sim_need_ctx(&c);
    if (rc)
        return rc;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

static CUresult ctx_sync(sim_ctx *c)
{
    CUresult rc = sim_capture_check_unsafe();
    if (rc)
        return rc;
    if (sim_capture_invalidate_ctx(c))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    sim_activity_sync(SIM_SYNC_CONTEXT, c, NULL, NULL);         /* CUPTI's record */
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_synchronize(void)
{
    sim_ctx *c;
    CUresult rc = sim_need_ctx(&c);
    return rc ? rc : ctx_sync(c);
}

CUresult sim_api_ctx_synchronize_v2(CUcontext ctx)
{
    sim_ctx *c = ctx ? sim_ctx_check(ctx) : NULL;
    CUresult rc = ctx ? sim_need_init() : sim_need_ctx(&c);
    if (rc)
        return rc;
    return c ? ctx_sync(c) : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult sim_api_ctx_get_api_version(CUcontext ctx, unsigned int *version)
{
    CUresult rc = ctx ? sim_need_init() : sim_need_ctx(NULL);
    if (rc)
        return rc;
    if (!version || (ctx && !sim_ctx_check(ctx)))
        return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_get_flags(unsigned int *flags)
{
    sim_ctx *c;
    CUresult rc = sim_need_ctx(&c);
    if (rc)
        return rc;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_get_id(CUcontext ctx, unsigned long long *ctxId)
{
    sim_ctx *c = ctx ? sim_ctx_check(ctx) : NULL;
    CUresult rc = ctx ? sim_need_init() : sim_need_ctx(&c);
    if (rc)
        return rc;
    if (!c || !ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    *ctxId = c->o.ordinal;
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_get_stream_priority_range(int *leastPriority, int *greatestPriority)
{
    CUresult rc = sim_need_ctx(NULL);
    if (rc)
        return rc;
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    return CUDA_SUCCESS;
}
