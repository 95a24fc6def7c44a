/* sim_exec.c -- executable graphs: instantiate (every ABI), upload, launch,
 * per-node parameter updates, whole-graph update and destroy.
 *
 * An executable graph owns a snapshot (clone) of its graph, so later edits of
 * the source graph do not reach it; a node of the source graph names its twin
 * in the snapshot through the creation sequence number both share.  Launching
 * runs the snapshot at once in topological order (or, on a capturing stream,
 * records a child-graph node).  An executable graph belongs to the context it
 * was instantiated in: uploading or launching it into a stream of another is
 * CUDA_ERROR_INVALID_VALUE.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

#define SIM_INSTANTIATE_FLAGS (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |   \
                               CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |                \
                               CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |         \
                               CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static CUresult instantiate(CUgraphExec *ph, CUgraph hg, unsigned long long flags,
                            CUgraphNode *err_node)
{
    sim_ctx *c;
    sim_graph *g;
    sim_node **order;
    sim_exec *x;
    size_t n;
    CUresult rc = sim_need_ctx(&c);
    if (rc || (rc = sim_graph_get(hg, &g)) != CUDA_SUCCESS)
        return rc;
    if (!ph || (flags & ~(unsigned long long)SIM_INSTANTIATE_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    n = sim_graph_order(g, &order);
    free(order);
    if (n < g->nodes.n) {                       /* a cycle */
        if (err_node)
            *err_node = (CUgraphNode)g->nodes.v[0];
        return CUDA_ERROR_INVALID_VALUE;
    }
    x = sim_obj_new(SIM_K_EXEC, sizeof *x, c);
    x->g = sim_graph_clone(g);
    x->flags = flags;
    *ph = (CUgraphExec)x;
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_instantiate_with_flags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              unsigned long long flags)
{
    return instantiate(phGraphExec, hGraph, flags, NULL);
}

CUresult sim_api_graph_instantiate_legacy(CUgraphExec *phGraphExec, CUgraph hGraph,
                                          CUgraphNode *phErrorNode, char *logBuffer,
                                          size_t bufferSize)
{
    if (logBuffer && bufferSize)
        logBuffer[0] = '\0';
    if (phErrorNode)
        *phErrorNode = NULL;
    return instantiate(phGraphExec, hGraph, 0, phErrorNode);
}

static sim_exec *exec_check(CUgraphExec h)
{
    return sim_obj_get(h, SIM_K_EXEC);
}

CUresult sim_api_graph_upload(CUgraphExec hGraphExec, CUstream hStream)
{
    sim_stream *s;
    sim_exec *x;
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    x = exec_check(hGraphExec);
    return x && x->o.ctx == s->o.ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult sim_api_graph_instantiate_with_params(CUgraphExec *phGraphExec, CUgraph hGraph,
                                               CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    CUgraphNode err = NULL;
    CUresult rc;
    if (!instantiateParams)
        return sim_need_init() ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
    rc = instantiate(phGraphExec, hGraph, instantiateParams->flags, &err);
    if (rc == CUDA_SUCCESS && (instantiateParams->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
        rc = sim_api_graph_upload(*phGraphExec, instantiateParams->hUploadStream);
    instantiateParams->hErrNode_out = err;
    instantiateParams->result_out = rc == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS
                                                       : CUDA_GRAPH_INSTANTIATE_ERROR;
    return rc;
}

CUresult sim_api_graph_launch(CUgraphExec hGraphExec, CUstream hStream)
{
    sim_exec *x = exec_check(hGraphExec);
    sim_stream *s;
    sim_op op = { .kind = SIM_OP_GRAPH };
    CUresult rc = sim_stream_resolve(hStream, &s);
    if (rc)
        return rc;
    if (!x || x->o.ctx != s->o.ctx)
        return CUDA_ERROR_INVALID_VALUE;
    op.u.graph.g = x->g;
    sim_pace_graph_launch();
    return sim_submit(s, &op, 0);
}

CUresult sim_api_graph_exec_destroy(CUgraphExec hGraphExec)
{
    CUresult rc;
    sim_exec *x = sim_obj_need(hGraphExec, SIM_K_EXEC, CUDA_ERROR_INVALID_VALUE, &rc);
    if (rc)
        return rc;
    sim_graph_free(x->g);
    sim_obj_free(x);
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_exec_get_flags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
    CUresult rc;
    sim_exec *x = sim_obj_need(hGraphExec, SIM_K_EXEC, CUDA_ERROR_INVALID_VALUE, &rc);
    if (rc)
        return rc;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = x->flags;
    return CUDA_SUCCESS;
}

/* ---- per-node updates: the snapshot's twin of a source node */

static CUresult exec_node(CUgraphExec h, CUgraphNode node, int type, sim_node **out)
{
    sim_exec *x = exec_check(h);
    sim_node *src;
    CUresult rc = sim_node_get(node, type, &src);
    if (rc)
        return rc;
    if (!x || !(*out = sim_node_by_seq(x->g, src->seq)) ||
        sim_op_node_type(&(*out)->op) != (CUgraphNodeType)type)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* Replaces the parameters of the snapshot's twin of a source node. */
static CUresult exec_set_params(CUgraphExec h, CUgraphNode node, CUgraphNodeType type,
                                const void *params)
{
    sim_node *n;
    sim_op op;
    CUresult rc = exec_node(h, node, type, &n);
    if (rc || (rc = sim_op_from_params(type, params, &op)) != CUDA_SUCCESS)
        return rc;
    sim_node_replace(n, &op, 1);
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_exec_kernel_node_set_params_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                      const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    return exec_set_params(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_KERNEL, nodeParams);
}

CUresult sim_api_graph_exec_kernel_node_set_params(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS q;
    if (!nodeParams)
        return sim_need_init() ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
    memset(&q, 0, sizeof q);
    memcpy(&q, nodeParams, sizeof *nodeParams);   /* v1 is the prefix of v2 */
    return sim_api_graph_exec_kernel_node_set_params_v2(hGraphExec, hNode, &q);
}

CUresult sim_api_graph_exec_memcpy_node_set_params(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    (void)ctx;
    return exec_set_params(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMCPY, copyParams);
}

CUresult sim_api_graph_exec_memset_node_set_params(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_MEMSET_NODE_PARAMS *memsetParams,
                                                   CUcontext ctx)
{
    (void)ctx;
    return exec_set_params(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMSET, memsetParams);
}

CUresult sim_api_graph_exec_host_node_set_params(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return exec_set_params(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_HOST, nodeParams);
}

static CUresult exec_set_event(CUgraphExec h, CUgraphNode node, int type, CUevent event)
{
    sim_node *n;
    CUresult rc = exec_node(h, node, type, &n);
    return rc ? rc : sim_node_set_event(n, event);
}

CUresult sim_api_graph_exec_event_record_node_set_event(CUgraphExec hGraphExec,
                                                        CUgraphNode hNode, CUevent event)
{
    return exec_set_event(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

CUresult sim_api_graph_exec_event_wait_node_set_event(CUgraphExec hGraphExec,
                                                      CUgraphNode hNode, CUevent event)
{
    return exec_set_event(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

/* ---- whole-graph update: same topology (node i <-> node i) or nothing */

static size_t position(const sim_graph *g, const sim_node *x)
{
    for (size_t i = 0; i < g->nodes.n; i++) {
        if (g->nodes.v[i] == x)
            return i;
    }
    return (size_t)-1;
}

static CUgraphExecUpdateResult compare(const sim_graph *have, const sim_graph *want,
                                       CUgraphExecUpdateResultInfo *info)
{
    if (have->nodes.n != want->nodes.n)
        return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (size_t i = 0; i < want->nodes.n; i++) {
        const sim_node *a = have->nodes.v[i], *b = want->nodes.v[i];
        info->errorNode = (CUgraphNode)b;
        if (sim_op_node_type(&a->op) != sim_op_node_type(&b->op))
            return CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        if (a->deps.n != b->deps.n)
            return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        for (size_t j = 0; j < b->deps.n; j++) {
            size_t p = position(want, b->deps.v[j]);
            if (!sim_nodes_has(&a->deps, have->nodes.v[p])) {
                info->errorFromNode = (CUgraphNode)b->deps.v[j];
                return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
            }
        }
    }
    info->errorNode = NULL;
    return CU_GRAPH_EXEC_UPDATE_SUCCESS;
}

CUresult sim_api_graph_exec_update_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                      CUgraphExecUpdateResultInfo *resultInfo)
{
    sim_exec *x = exec_check(hGraphExec);
    sim_graph *g;
    CUgraphExecUpdateResultInfo info = { 0 };
    CUresult rc = sim_graph_get(hGraph, &g);
    if (rc)
        return rc;
    if (!x || !resultInfo)
        return CUDA_ERROR_INVALID_VALUE;
    info.result = compare(x->g, g, &info);
    *resultInfo = info;
    if (info.result != CU_GRAPH_EXEC_UPDATE_SUCCESS)
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    for (size_t i = 0; i < g->nodes.n; i++) {
        sim_op op;
        sim_op_copy(&op, &g->nodes.v[i]->op);
        sim_node_replace(x->g->nodes.v[i], &op, 0);
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_exec_update(CUgraphExec hGraphExec, CUgraph hGraph,
                                   CUgraphNode *hErrorNode_out,
                                   CUgraphExecUpdateResult *updateResult_out)
{
    CUgraphExecUpdateResultInfo info = { 0 };
    CUresult rc;
    if (!hErrorNode_out || !updateResult_out)
        return sim_need_init() ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
    rc = sim_api_graph_exec_update_v2(hGraphExec, hGraph, &info);
    if (rc && info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS)
        info.result = CU_GRAPH_EXEC_UPDATE_ERROR;
    *hErrorNode_out = info.errorNode;
    *updateResult_out = info.result;
    return rc;
}
