/* sim_graph_query.c -- graph and node queries (nodes, roots, edges, node
 * type, dependencies, dependents) and the per-node parameter getters and
 * setters (kernel, memcpy, memset, host) of a graph under construction.
 * Lists follow the driver's convention: a NULL array asks for the count; a
 * longer array is padded with NULL and the count written back.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

static CUresult fill_nodes(sim_node *const *v, size_t count, CUgraphNode *out,
                           CUgraphEdgeData *edges, size_t *num)
{
    size_t k;
    if (!num || (edges && !out))
        return CUDA_ERROR_INVALID_VALUE;
    if (!out) {
        *num = count;
        return CUDA_SUCCESS;
    }
    k = *num < count ? *num : count;
    for (size_t i = 0; i < *num; i++) {
        out[i] = i < k ? (CUgraphNode)v[i] : NULL;
        if (edges)
            memset(&edges[i], 0, sizeof edges[i]);
    }
    *num = k;
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_get_nodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    sim_graph *g;
    CUresult rc = sim_graph_get(hGraph, &g);
    return rc ? rc : fill_nodes(g->nodes.v, g->nodes.n, nodes, NULL, numNodes);
}

CUresult sim_api_graph_get_root_nodes(CUgraph hGraph, CUgraphNode *rootNodes,
                                      size_t *numRootNodes)
{
    sim_graph *g;
    sim_nodes roots = { 0 };
    CUresult rc = sim_graph_get(hGraph, &g);
    if (rc)
        return rc;
    for (size_t i = 0; i < g->nodes.n; i++) {
        if (!g->nodes.v[i]->deps.n)
            sim_nodes_push(&roots, g->nodes.v[i]);
    }
    rc = fill_nodes(roots.v, roots.n, rootNodes, NULL, numRootNodes);
    sim_nodes_free(&roots);
    return rc;
}

/* Edges in a fixed order: by destination node (creation order), then by the
 * order its dependencies were added. */
CUresult sim_api_graph_get_edges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                                    CUgraphEdgeData *edgeData, size_t *numEdges)
{
    sim_graph *g;
    sim_nodes src = { 0 }, dst = { 0 };
    size_t want;
    CUresult rc = sim_graph_get(hGraph, &g);
    if (rc)
        return rc;
    if (!numEdges || (!from != !to))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < g->nodes.n; i++) {
        for (size_t j = 0; j < g->nodes.v[i]->deps.n; j++) {
            sim_nodes_push(&src, g->nodes.v[i]->deps.v[j]);
            sim_nodes_push(&dst, g->nodes.v[i]);
        }
    }
    want = *numEdges;
    rc = fill_nodes(src.v, src.n, from, edgeData, numEdges);
    if (rc == CUDA_SUCCESS && to)
        rc = fill_nodes(dst.v, dst.n, to, NULL, &want);
    sim_nodes_free(&src);
    sim_nodes_free(&dst);
    return rc;
}

CUresult sim_api_graph_get_edges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                                 size_t *numEdges)
{
    return sim_api_graph_get_edges_v2(hGraph, from, to, NULL, numEdges);
}

CUresult sim_api_graph_node_get_type(CUgraphNode hNode, CUgraphNodeType *type)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, -1, &x);
    if (rc)
        return rc;
    if (!type)
        return CUDA_ERROR_INVALID_VALUE;
    *type = sim_op_node_type(&x->op);
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_node_get_dependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies,
                                                CUgraphEdgeData *edgeData,
                                                size_t *numDependencies)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, -1, &x);
    return rc ? rc : fill_nodes(x->deps.v, x->deps.n, dependencies, edgeData, numDependencies);
}

CUresult sim_api_graph_node_get_dependencies(CUgraphNode hNode, CUgraphNode *dependencies,
                                             size_t *numDependencies)
{
    return sim_api_graph_node_get_dependencies_v2(hNode, dependencies, NULL, numDependencies);
}

CUresult sim_api_graph_node_get_dependent_nodes_v2(CUgraphNode hNode, CUgraphNode *dependentNodes,
                                                   CUgraphEdgeData *edgeData,
                                                   size_t *numDependentNodes)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, -1, &x);
    return rc ? rc : fill_nodes(x->outs.v, x->outs.n, dependentNodes, edgeData,
                                numDependentNodes);
}

CUresult sim_api_graph_node_get_dependent_nodes(CUgraphNode hNode, CUgraphNode *dependentNodes,
                                                size_t *numDependentNodes)
{
    return sim_api_graph_node_get_dependent_nodes_v2(hNode, dependentNodes, NULL,
                                                     numDependentNodes);
}

/* ---- node parameters */

CUresult sim_api_graph_kernel_node_get_params_v2(CUgraphNode hNode,
                                                 CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, CU_GRAPH_NODE_TYPE_KERNEL, &x);
    if (rc)
        return rc;
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    memset(nodeParams, 0, sizeof *nodeParams);
    nodeParams->func = (CUfunction)x->op.u.k.fn;
    nodeParams->gridDimX = x->op.u.k.grid[0];
    nodeParams->gridDimY = x->op.u.k.grid[1];
    nodeParams->gridDimZ = x->op.u.k.grid[2];
    nodeParams->blockDimX = x->op.u.k.block[0];
    nodeParams->blockDimY = x->op.u.k.block[1];
    nodeParams->blockDimZ = x->op.u.k.block[2];
    nodeParams->sharedMemBytes = x->op.u.k.smem;
    nodeParams->kernelParams = sim_kernel_argv(&x->op);
    if (sim_func_check((CUfunction)x->op.u.k.fn))
        nodeParams->ctx = (CUcontext)x->op.u.k.fn->o.ctx;
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_kernel_node_get_params(CUgraphNode hNode,
                                              CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS q;
    CUresult rc = sim_api_graph_kernel_node_get_params_v2(hNode, nodeParams ? &q : NULL);
    if (rc)
        return rc;
    memcpy(nodeParams, &q, sizeof *nodeParams);   /* v1 is the prefix of v2 */
    return CUDA_SUCCESS;
}

/* Replaces the parameters of a node of a graph under construction. */
static CUresult node_set_params(CUgraphNode h, CUgraphNodeType type, const void *params)
{
    sim_node *x;
    sim_op op;
    CUresult rc = sim_node_get(h, type, &x);
    if (rc || (rc = sim_op_from_params(type, params, &op)) != CUDA_SUCCESS)
        return rc;
    sim_node_replace(x, &op, 1);
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_kernel_node_set_params_v2(CUgraphNode hNode,
                                                 const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    return node_set_params(hNode, CU_GRAPH_NODE_TYPE_KERNEL, nodeParams);
}

CUresult sim_api_graph_kernel_node_set_params(CUgraphNode hNode,
                                              const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS q;
    if (!nodeParams)
        return sim_need_init() ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
    memset(&q, 0, sizeof q);
    memcpy(&q, nodeParams, sizeof *nodeParams);
    return sim_api_graph_kernel_node_set_params_v2(hNode, &q);
}

CUresult sim_api_graph_memset_node_get_params(CUgraphNode hNode,
                                              CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, CU_GRAPH_NODE_TYPE_MEMSET, &x);
    if (rc)
        return rc;
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    nodeParams->dst = (CUdeviceptr)x->op.u.set.dst;
    nodeParams->pitch = x->op.u.set.pitch;
    nodeParams->value = x->op.u.set.value;
    nodeParams->elementSize = x->op.u.set.elem;
    nodeParams->width = x->op.u.set.width;
    nodeParams->height = x->op.u.set.height;
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_memset_node_set_params(CUgraphNode hNode,
                                              const CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    return node_set_params(hNode, CU_GRAPH_NODE_TYPE_MEMSET, nodeParams);
}

CUresult sim_api_graph_memcpy_node_get_params(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, &x);
    const struct sim_cpy *c;
    if (rc)
        return rc;
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    c = &x->op.u.cpy;
    memset(nodeParams, 0, sizeof *nodeParams);
    nodeParams->srcMemoryType = nodeParams->dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    nodeParams->srcDevice = (CUdeviceptr)c->src;
    nodeParams->dstDevice = (CUdeviceptr)c->dst;
    nodeParams->srcPitch = c->spitch, nodeParams->srcHeight = c->sheight;
    nodeParams->dstPitch = c->dpitch, nodeParams->dstHeight = c->dheight;
    nodeParams->WidthInBytes = c->width, nodeParams->Height = c->height;
    nodeParams->Depth = c->depth;
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_memcpy_node_set_params(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams)
{
    return node_set_params(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, nodeParams);
}

CUresult sim_api_graph_host_node_get_params(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams)
{
    sim_node *x;
    CUresult rc = sim_node_get(hNode, CU_GRAPH_NODE_TYPE_HOST, &x);
    if (rc)
        return rc;
    if (!nodeParams || x->op.kind != SIM_OP_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    nodeParams->fn = x->op.u.host.fn;
    nodeParams->userData = x->op.u.host.user;
    return CUDA_SUCCESS;
}

CUresult sim_api_graph_host_node_set_params(CUgraphNode hNode,
                                            const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return node_set_params(hNode, CU_GRAPH_NODE_TYPE_HOST, nodeParams);
}
