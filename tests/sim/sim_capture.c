/* sim_capture.c -- stream capture: begin / end (into a new or the caller's
 * graph), recording submitted work as graph nodes, fork / join across streams
 * through events, capture queries, dependency updates, the per-thread
 * capture interaction mode and the rules that make a call illegal during a
 * capture (potentially unsafe calls, implicit legacy-stream synchronisation,
 * synchronising a capturing stream).  An illegal call invalidates the capture
 * it would have broken; the capture then ends with
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

static sim_capture *captures;      /* active capture sequences */
static unsigned long long next_capture_id;

int sim_capture_live(const sim_capture *c, unsigned long long id)
{
    for (const sim_capture *p = captures; p; p = p->next) {
        if (p == c && p->id == id)
            return 1;
    }
    return 0;
}

void sim_capture_invalidate(sim_capture *c)
{
    c->invalidated = 1;
}

/* Streams taking part in capture c, in creation order (caller frees). */
static size_t capture_streams(const sim_capture *c, sim_stream ***out)
{
    void **v;
    size_t n = sim_obj_list(SIM_K_STREAM, NULL, &v), k = 0;
    for (size_t i = 0; i < n; i++) {
        if (((sim_stream *)v[i])->cap == c)
            v[k++] = v[i];
    }
    *out = (sim_stream **)v;
    return k;
}

static void capture_detach(sim_stream *s)
{
    s->cap = NULL;
    s->deps.n = 0;
}

static void capture_remove(sim_capture *c)
{
    sim_stream **v;
    size_t n = capture_streams(c, &v);
    for (size_t i = 0; i < n; i++)
        capture_detach(v[i]);
    free(v);
    for (sim_capture **p = &captures; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    free(c);
}

/* ---- the rules */

CUresult sim_capture_check_unsafe(void)
{
    CUstreamCaptureMode mode = sim_tls_get()->mode;
    int hit = 0;
    if (mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    for (sim_capture *c = captures; c; c = c->next) {
        if (c->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
            continue;
        if (pthread_equal(c->thread, pthread_self()) ||
            (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL && mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            sim_capture_invalidate(c);
            hit = 1;
        }
    }
    return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* Captures in ctx that include a blocking stream (the legacy stream would wait
 * for them); invalidated when asked. */
static int capture_blocking_in(sim_ctx *ctx, int invalidate, int blocking_only)
{
    void **v;
    size_t n;
    int hit = 0;
    if (!captures)
        return 0;
    n = sim_obj_list(SIM_K_STREAM, ctx, &v);
    for (size_t i = 0; i < n; i++) {
        sim_stream *s = v[i];
        if (!s->cap || (blocking_only && (s->flags & CU_STREAM_NON_BLOCKING)))
            continue;
        hit++;
        if (invalidate)
            sim_capture_invalidate(s->cap);
    }
    free(v);
    return hit;
}

CUresult sim_capture_check_legacy(sim_ctx *ctx)
{
    return capture_blocking_in(ctx, 1, 1) ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

int sim_capture_invalidate_ctx(sim_ctx *ctx)
{
    return capture_blocking_in(ctx, 1, 0);
}

void sim_capture_stream_gone(sim_stream *s)
{
    sim_capture *c = s->cap;
    sim_capture_invalidate(c);
    if (c->origin != s) {
        capture_detach(s);
        return;
    }
    if (!c->user_graph)
        sim_graph_free(c->graph);
    capture_remove(c);
}

/* ---- recording */

CUresult sim_capture_record(sim_stream *s, sim_op *op)
{
    sim_node *n;
    if (s->cap->invalidated) {
        sim_op_release(op);
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    if (op->kind == SIM_OP_GRAPH && !op->u.graph.owned) {    /* a launch: keep a copy */
        op->u.graph.g = sim_graph_clone(op->u.graph.g);
        op->u.graph.owned = 1;
    }
    n = sim_graph_add(s->cap->graph, op, s->deps.v, s->deps.n);
    sim_nodes_set(&s->deps, &n, 1);
    return CUDA_SUCCESS;
}

CUresult sim_capture_event_record(sim_stream *s, sim_event *e)
{
    if (s->cap->invalidated)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    e->cap = s->cap;
    e->cap_id = s->cap->id;
    sim_nodes_set(&e->deps, s->deps.v, s->deps.n);
    return CUDA_SUCCESS;
}

/* s waits for an event recorded in a live capture: fork (s joins) or join. */
CUresult sim_capture_event_wait(sim_stream *s, sim_event *e)
{
    sim_capture *c = e->cap;
    if (s->special == SIM_STREAM_LEGACY) {
        sim_capture_invalidate(c);
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    if (s->cap && s->cap != c) {
        sim_capture_invalidate(c);
        sim_capture_invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_MERGE;
    }
    if (!s->cap) {
        s->cap = c;
        sim_nodes_set(&s->deps, e->deps.v, e->deps.n);
    } else {
        sim_nodes_union(&s->deps, &e->deps);
    }
    return c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
}

/* ---- begin / end */

static CUresult capture_begin(CUstream h, CUstreamCaptureMode mode, sim_graph *user,
                              const CUgraphNode *deps, size_t ndeps)
{
    sim_stream *s;
    sim_capture *c;
    CUresult rc = sim_stream_resolve(h, &s);
    if (rc)
        return rc;
    if (s->special == SIM_STREAM_LEGACY)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (s->cap)
        return CUDA_ERROR_ILLEGAL_STATE;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (user && (rc = sim_graph_check_deps(user, deps, ndeps)) != CUDA_SUCCESS)
        return rc;
    c = sim_xcalloc(1, sizeof *c);
    c->graph = user ? user : sim_graph_new();
    c->user_graph = user != NULL;
    c->mode = mode;
    c->id = ++next_capture_id;
    c->origin = s;
    c->thread = pthread_self();
    c->next = captures;
    captures = c;
    s->cap = c;
    sim_nodes_set(&s->deps, (sim_node *const *)deps, user ? ndeps : 0);
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_begin_capture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return capture_begin(hStream, mode, NULL, NULL, 0);
}

CUresult sim_api_stream_begin_capture(CUstream hStream)
{
    return capture_begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0);
}

CUresult sim_api_stream_begin_capture_to_graph(CUstream hStream, CUgraph hGraph,
                                               const CUgraphNode *dependencies,
                                               const CUgraphEdgeData *dependencyData,
                                               size_t numDependencies, CUstreamCaptureMode mode)
{
    sim_graph *g = sim_obj_get(hGraph, SIM_K_GRAPH);
    (void)dependencyData;
    if (!g)
        return sim_need_init() ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
    return capture_begin(hStream, mode, g, dependencies, numDependencies);
}

/* Every other stream of the capture must end at nodes the origin depends on. */
static int capture_joined(const sim_capture *c)
{
    sim_nodes seen = { 0 }, todo = { 0 };
    sim_stream **v;
    size_t n = capture_streams(c, &v);
    int joined = 1;

    sim_nodes_union(&todo, &c->origin->deps);
    while (todo.n) {
        sim_node *x = todo.v[--todo.n];
        if (sim_nodes_has(&seen, x))
            continue;
        sim_nodes_push(&seen, x);
        sim_nodes_union(&todo, &x->deps);
    }
    for (size_t i = 0; i < n && joined; i++) {
        for (size_t j = 0; j < v[i]->deps.n && joined; j++)
            joined = v[i] == c->origin || sim_nodes_has(&seen, v[i]->deps.v[j]);
    }
    free(v);
    sim_nodes_free(&seen);
    sim_nodes_free(&todo);
    return joined;
}

CUresult sim_api_stream_end_capture(CUstream hStream, CUgraph *phGraph)
{
    sim_stream *s;
    sim_capture *c;
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(c = s->cap))
        return CUDA_ERROR_ILLEGAL_STATE;
    if (c->origin != s) {
        sim_capture_invalidate(c);
        return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    rc = c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
         : !capture_joined(c) ? CUDA_ERROR_STREAM_CAPTURE_UNJOINED : CUDA_SUCCESS;
    *phGraph = rc ? NULL : (CUgraph)c->graph;
    if (rc && !c->user_graph)
        sim_graph_free(c->graph);
    capture_remove(c);
    return rc;
}

/* ---- queries */

static CUresult capture_status(CUstream h, sim_stream **out, CUstreamCaptureStatus *status)
{
    CUresult rc = sim_stream_resolve(h, out);
    if (rc)
        return rc;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    if ((*out)->special == SIM_STREAM_LEGACY && capture_blocking_in((sim_ctx *)(*out)->o.ctx, 0, 1))
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    *status = !(*out)->cap ? CU_STREAM_CAPTURE_STATUS_NONE
              : (*out)->cap->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                         : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_is_capturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    sim_stream *s;
    return capture_status(hStream, &s, captureStatus);
}

CUresult sim_api_stream_get_capture_info_v3(CUstream hStream,
                                            CUstreamCaptureStatus *captureStatus_out,
                                            cuuint64_t *id_out, CUgraph *graph_out,
                                            const CUgraphNode **dependencies_out,
                                            const CUgraphEdgeData **edgeData_out,
                                            size_t *numDependencies_out)
{
    sim_stream *s;
    CUresult rc = capture_status(hStream, &s, captureStatus_out);
    if (rc || !s->cap)
        return rc;
    if (id_out)
        *id_out = s->cap->id;
    if (graph_out)
        *graph_out = (CUgraph)s->cap->graph;
    if (dependencies_out)
        *dependencies_out = (const CUgraphNode *)s->deps.v;
    if (edgeData_out) {
        s->edge_scratch = sim_xrealloc(s->edge_scratch, (s->deps.n + 1) * sizeof *s->edge_scratch);
        memset(s->edge_scratch, 0, (s->deps.n + 1) * sizeof *s->edge_scratch);
        *edgeData_out = s->deps.n ? s->edge_scratch : NULL;
    }
    if (numDependencies_out)
        *numDependencies_out = s->deps.n;
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_get_capture_info_v2(CUstream hStream,
                                            CUstreamCaptureStatus *captureStatus_out,
                                            cuuint64_t *id_out, CUgraph *graph_out,
                                            const CUgraphNode **dependencies_out,
                                            size_t *numDependencies_out)
{
    return sim_api_stream_get_capture_info_v3(hStream, captureStatus_out, id_out, graph_out,
                                              dependencies_out, NULL, numDependencies_out);
}

CUresult sim_api_stream_get_capture_info(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                         cuuint64_t *id_out)
{
    return sim_api_stream_get_capture_info_v3(hStream, captureStatus_out, id_out, NULL, NULL,
                                              NULL, NULL);
}

CUresult sim_api_stream_update_capture_deps_v2(CUstream hStream, CUgraphNode *dependencies,
                                               const CUgraphEdgeData *dependencyData,
                                               size_t numDependencies, unsigned int flags)
{
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hStream, &s);
    (void)dependencyData;
    if (rc)
        return rc;
    if (!s->cap)
        return CUDA_ERROR_ILLEGAL_STATE;
    if (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = sim_graph_check_deps(s->cap->graph, dependencies, numDependencies)) != CUDA_SUCCESS)
        return rc;
    if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES)
        s->deps.n = 0;
    for (size_t i = 0; i < numDependencies; i++) {
        if (!sim_nodes_has(&s->deps, (sim_node *)dependencies[i]))
            sim_nodes_push(&s->deps, (sim_node *)dependencies[i]);
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_update_capture_deps(CUstream hStream, CUgraphNode *dependencies,
                                            size_t numDependencies, unsigned int flags)
{
    return sim_api_stream_update_capture_deps_v2(hStream, dependencies, NULL, numDependencies,
                                                 flags);
}

CUresult sim_api_thread_exchange_capture_mode(CUstreamCaptureMode *mode)
{
    sim_tls *t = sim_tls_get();
    CUstreamCaptureMode old = t->mode;
    if (!mode || (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
                  *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
                  *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
        return CUDA_ERROR_INVALID_VALUE;
    t->mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}
