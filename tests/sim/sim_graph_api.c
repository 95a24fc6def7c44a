/* sim_graph_api.c -- building and inspecting graphs explicitly: cuGraphCreate,
 * cuGraphAdd*Node, dependencies, node / edge / root queries, node parameters,
 * destroy, clone and DOT output.  Node parameters are copied when a node is
 * added (kernel arguments are packed at that moment, like the driver does).
 */
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CUresult sim_api_graph_create(CUgraph *phGraph, unsigned int flags)
{
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    *phGraph = (CUgraph)sim_graph_new();
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_destroy(CUgraph hGraph)
{
    sim_graph *g;
    CUresult rc = sim_graph_get(hGraph, &g);
    if (rc == CUDA_SUCCESS)
        sim_graph_free(g);
    return rc;
}

/* Adds op (ownership taken, also on failure) after deps. */
static CUresult add_node(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t n,
                         sim_op *op)
{
    sim_graph *g;
    CUresult rc = sim_graph_get(hg, &g);
    if (rc == CUDA_SUCCESS && !ph)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        rc = sim_graph_check_deps(g, deps, n);
    if (rc) {
        sim_op_release(op);
        return rc;
    }
    *ph = (CUgraphNode)sim_graph_add(g, op, (sim_node *const *)deps, n);
    return CUDA_SUCCESS;
}

CUresult sim_op_from_kernel_params(sim_op *op, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned g[3] = { p->gridDimX, p->gridDimY, p->gridDimZ };
    const unsigned b[3] = { p->blockDimX, p->blockDimY, p->blockDimZ };
    return sim_launch_op(sim_func_check(p->func ? p->func : (CUfunction)p->kern), g, b,
                         p->sharedMemBytes, p->kernelParams, p->extra, op);
}

static void kernel_params_v2(CUDA_KERNEL_NODE_PARAMS *q, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    memset(q, 0, sizeof *q);
    q->func = p->func;
    q->gridDimX = p->gridDimX, q->gridDimY = p->gridDimY, q->gridDimZ = p->gridDimZ;
    q->blockDimX = p->blockDimX, q->blockDimY = p->blockDimY, q->blockDimZ = p->blockDimZ;
    q->sharedMemBytes = p->sharedMemBytes;
    q->kernelParams = p->kernelParams;
    q->extra = p->extra;
}

/* A node built from its parameter structure. */
static CUresult add_params_node(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t n,
                                CUgraphNodeType type, const void *params)
{
    sim_op op;
    CUresult rc = sim_need_init();
    if (rc || (rc = sim_op_from_params(type, params, &op)) != CUDA_SUCCESS)
        return rc;
    return add_node(ph, hg, deps, n, &op);
}

CUresult sim_api_graph_add_kernel_node_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                          const CUgraphNode *dependencies, size_t numDependencies,
                                          const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    return add_params_node(phGraphNode, hGraph, dependencies, numDependencies,
                           CU_GRAPH_NODE_TYPE_KERNEL, nodeParams);
}

CUresult sim_api_graph_add_kernel_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies,
                                       const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS q;
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    kernel_params_v2(&q, nodeParams);
    return sim_api_graph_add_kernel_node_v2(phGraphNode, hGraph, dependencies,
                                            numDependencies, &q);
}

CUresult sim_api_graph_add_memcpy_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies,
                                       const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    (void)ctx;
    return add_params_node(phGraphNode, hGraph, dependencies, numDependencies,
                           CU_GRAPH_NODE_TYPE_MEMCPY, copyParams);
}

CUresult sim_api_graph_add_memset_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies,
                                       const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    (void)ctx;
    return add_params_node(phGraphNode, hGraph, dependencies, numDependencies,
                           CU_GRAPH_NODE_TYPE_MEMSET, memsetParams);
}

CUresult sim_api_graph_add_host_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies,
                                       const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return add_params_node(phGraphNode, hGraph, dependencies, numDependencies,
                           CU_GRAPH_NODE_TYPE_HOST, nodeParams);
}

CUresult sim_api_graph_add_empty_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies)
{
    sim_op op = { .kind = SIM_OP_EMPTY };
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &op);
}

CUresult sim_api_graph_add_child_graph_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                            const CUgraphNode *dependencies,
                                            size_t numDependencies, CUgraph childGraph)
{
    sim_graph *child;
    sim_op op = { .kind = SIM_OP_GRAPH };
    CUresult rc = sim_graph_get(childGraph, &child);
    if (rc)
        return rc;
    op.u.graph.g = sim_graph_clone(child);
    op.u.graph.owned = 1;
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &op);
}

static CUresult add_event_node(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t n,
                               CUevent event, int kind)
{
    sim_op op = { .kind = kind };
    sim_event *e;
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!(e = sim_obj_get(event, SIM_K_EVENT)))
        return CUDA_ERROR_INVALID_VALUE;
    sim_event_op(&op, e);
    return add_node(ph, hg, deps, n, &op);
}

CUresult sim_api_graph_add_event_record_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                             const CUgraphNode *dependencies,
                                             size_t numDependencies, CUevent event)
{
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event,
                          SIM_OP_EVENT_RECORD);
}

CUresult sim_api_graph_add_event_wait_node(CUgraphNode *phGraphNode, CUgraph hGraph,
                                           const CUgraphNode *dependencies,
                                           size_t numDependencies, CUevent event)
{
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event,
                          SIM_OP_EVENT_WAIT);
}

CUresult sim_node_set_event(sim_node *n, CUevent event)
{
    sim_event *e = sim_obj_get(event, SIM_K_EVENT);
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    sim_event_op(&n->op, e);
    return CUDA_SUCCESS;
}

/* Points event node h (of `type`) at event. */
static CUresult node_set_event(CUgraphNode h, int type, CUevent event)
{
    sim_node *n;
    CUresult rc = sim_node_get(h, type, &n);
    return rc ? rc : sim_node_set_event(n, event);
}

CUresult sim_api_graph_event_record_node_set_event(CUgraphNode hNode, CUevent event)
{
    CUresult rc = sim_need_init();
    return rc ? rc : node_set_event(hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

CUresult sim_api_graph_event_wait_node_set_event(CUgraphNode hNode, CUevent event)
{
    CUresult rc = sim_need_init();
    return rc ? rc : node_set_event(hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

/* ---- dependencies */

static CUresult edges_check(sim_graph *g, const CUgraphNode *from, const CUgraphNode *to,
                            size_t n, int must_exist)
{
    if (n && (!from || !to))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        sim_node *a = sim_obj_get(from[i], SIM_K_NODE), *b = sim_obj_get(to[i], SIM_K_NODE);
        if (!a || !b || a == b || a->graph != g || b->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
        if (sim_nodes_has(&b->deps, a) != must_exist)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++) {
            if (from[j] == from[i] && to[j] == to[i])
                return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_add_dependencies_v2(CUgraph hGraph, const CUgraphNode *from,
                                           const CUgraphNode *to, const CUgraphEdgeData *edgeData,
                                           size_t numDependencies)
{
    sim_graph *g;
    CUresult rc = sim_graph_get(hGraph, &g);
    (void)edgeData;
    if (rc || (rc = edges_check(g, from, to, numDependencies, 0)) != CUDA_SUCCESS)
        return rc;
    for (size_t i = 0; i < numDependencies; i++) {
        sim_nodes_push(&((sim_node *)to[i])->deps, (sim_node *)from[i]);
        sim_nodes_push(&((sim_node *)from[i])->outs, (sim_node *)to[i]);
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_add_dependencies(CUgraph hGraph, const CUgraphNode *from,
                                        const CUgraphNode *to, size_t numDependencies)
{
    return sim_api_graph_add_dependencies_v2(hGraph, from, to, NULL, numDependencies);
}

CUresult sim_api_graph_remove_dependencies_v2(CUgraph hGraph, const CUgraphNode *from,
                                              const CUgraphNode *to,
                                              const CUgraphEdgeData *edgeData,
                                              size_t numDependencies)
{
    sim_graph *g;
    CUresult rc = sim_graph_get(hGraph, &g);
    (void)edgeData;
    if (rc || (rc = edges_check(g, from, to, numDependencies, 1)) != CUDA_SUCCESS)
        return rc;
    for (size_t i = 0; i < numDependencies; i++) {
        sim_nodes_remove(&((sim_node *)to[i])->deps, (sim_node *)from[i]);
        sim_nodes_remove(&((sim_node *)from[i])->outs, (sim_node *)to[i]);
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_remove_dependencies(CUgraph hGraph, const CUgraphNode *from,
                                           const CUgraphNode *to, size_t numDependencies)
{
    return sim_api_graph_remove_dependencies_v2(hGraph, from, to, NULL, numDependencies);
}

/* ---- node removal, clone */

CUresult sim_api_graph_destroy_node(CUgraphNode hNode)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, -1, &x);
    if (rc)
        return rc;
    for (size_t i = 0; i < x->deps.n; i++)
        sim_nodes_remove(&x->deps.v[i]->outs, x);
    for (size_t i = 0; i < x->outs.n; i++)
        sim_nodes_remove(&x->outs.v[i]->deps, x);
    sim_nodes_remove(&x->graph->nodes, x);
    sim_op_release(&x->op);
    sim_nodes_free(&x->deps);
    sim_nodes_free(&x->outs);
    sim_obj_free(x);
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_clone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    sim_graph *g;
    CUresult rc = sim_graph_get(originalGraph, &g);
    if (rc)
        return rc;
    if (!phGraphClone)
        return CUDA_ERROR_INVALID_VALUE;
    *phGraphClone = (CUgraph)sim_graph_clone(g);
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_node_find_in_clone(CUgraphNode *phNode, CUgraphNode hOriginalNode,
                                          CUgraph hClonedGraph)
{
    sim_graph *g;
    sim_node *x, *found;
    CUresult rc = sim_graph_get(hClonedGraph, &g);
    if (rc || (rc = sim_node_get(hOriginalNode, -1, &x)) != CUDA_SUCCESS)
        return rc;
    if (!phNode || !(found = sim_node_by_seq(g, x->seq)) ||
        sim_op_node_type(&found->op) != sim_op_node_type(&x->op))
        return CUDA_ERROR_INVALID_VALUE;
    *phNode = (CUgraphNode)found;
    return CUDA_SUCCESS;
}

/* ---- DOT */

/* verbose (CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE): a kernel's launch configuration too */
static void dot_label(FILE *f, sim_op *op, int verbose)
{
    static const char *names[] = {
        [SIM_OP_KERNEL] = "KERNEL", [SIM_OP_MEMCPY] = "MEMCPY", [SIM_OP_MEMSET] = "MEMSET",
        [SIM_OP_HOST] = "HOST", [SIM_OP_CALLBACK] = "HOST",
        [SIM_OP_EVENT_RECORD] = "EVENT_RECORD", [SIM_OP_EVENT_WAIT] = "WAIT_EVENT",
        [SIM_OP_GRAPH] = "GRAPH", [SIM_OP_EMPTY] = "EMPTY", [SIM_OP_MEM_ALLOC] = "MEM_ALLOC",
        [SIM_OP_MEM_FREE] = "MEM_FREE",
    };
    fprintf(f, "%s", names[op->kind]);
    if (op->kind == SIM_OP_KERNEL)
        fprintf(f, "\\n%s", op->u.k.kern->name);
    if (op->kind == SIM_OP_KERNEL && verbose)
        fprintf(f, "\\ngrid=%ux%ux%u block=%ux%ux%u smem=%u", op->u.k.grid[0], op->u.k.grid[1],
                op->u.k.grid[2], op->u.k.block[0], op->u.k.block[1], op->u.k.block[2],
                op->u.k.smem);
}

CUresult sim_api_graph_debug_dot_print(CUgraph hGraph, const char *path, unsigned int flags)
{
    sim_graph *g;
    FILE *f;
    CUresult rc = sim_graph_get(hGraph, &g);
    if (rc)
        return rc;
    if (!path || !(f = fopen(path, "w")))
        return CUDA_ERROR_OPERATING_SYSTEM;
    fprintf(f, "digraph graph%lu {\n", g->o.ordinal);
    for (size_t i = 0; i < g->nodes.n; i++) {
        sim_node *x = g->nodes.v[i];
        fprintf(f, "  n%lu [label=\"%lu ", x->seq, x->seq);
        dot_label(f, &x->op, (flags & CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE) != 0);
        fprintf(f, "\"];\n");
    }
    for (size_t i = 0; i < g->nodes.n; i++) {
        for (size_t j = 0; j < g->nodes.v[i]->deps.n; j++)
            fprintf(f, "  n%lu -> n%lu;\n", g->nodes.v[i]->deps.v[j]->seq, g->nodes.v[i]->seq);
    }
    fprintf(f, "}\n");
    fclose(f);
    return CUDA_SUCCESS;
}
