/* sim_graph.c -- the graph data structure shared by capture, explicit graph
 * building and executable graphs: node sets, nodes and edges, clone, free,
 * the deterministic topological order (among ready nodes, the earliest
 * created runs first) and running a graph.
 *
 * Because capture creates nodes in submission order, running a captured graph
 * replays its operations in exactly the order they were submitted.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- node sets */

void sim_nodes_push(sim_nodes *s, sim_node *n)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4;
        s->v = sim_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = n;
}

int sim_nodes_has(const sim_nodes *s, const sim_node *n)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i] == n)
            return 1;
    }
    return 0;
}

void sim_nodes_remove(sim_nodes *s, const sim_node *n)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i] != n)
            s->v[k++] = s->v[i];
    }
    s->n = k;
}

void sim_nodes_set(sim_nodes *dst, sim_node *const *v, size_t n)
{
    dst->n = 0;
    for (size_t i = 0; i < n; i++)
        sim_nodes_push(dst, v[i]);
}

void sim_nodes_union(sim_nodes *dst, const sim_nodes *src)
{
    for (size_t i = 0; i < src->n; i++) {
        if (!sim_nodes_has(dst, src->v[i]))
            sim_nodes_push(dst, src->v[i]);
    }
}

void sim_nodes_free(sim_nodes *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* ---- graphs and nodes */

sim_graph *sim_graph_new(void)
{
    return sim_obj_new(SIM_K_GRAPH, sizeof(sim_graph), NULL);
}

static sim_node *node_new(sim_graph *g, unsigned long seq)
{
    sim_node *x = sim_obj_new(SIM_K_NODE, sizeof *x, NULL);
    x->graph = g;
    x->seq = seq;
    sim_nodes_push(&g->nodes, x);
    return x;
}

static void node_release(sim_node *x)
{
    sim_op_release(&x->op);
    sim_nodes_free(&x->deps);
    sim_nodes_free(&x->outs);
    sim_obj_free(x);
}

sim_node *sim_graph_add(sim_graph *g, sim_op *op, sim_node *const *deps, size_t n)
{
    sim_node *x = node_new(g, g->next_seq++);
    x->op = *op;
    for (size_t i = 0; i < n; i++) {
        if (sim_nodes_has(&x->deps, deps[i]))
            continue;
        sim_nodes_push(&x->deps, deps[i]);
        sim_nodes_push(&deps[i]->outs, x);
    }
    return x;
}

void sim_graph_free(sim_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nodes.n; i++)
        node_release(g->nodes.v[i]);
    sim_nodes_free(&g->nodes);
    sim_obj_free(g);
}

static size_t node_index(const sim_graph *g, const sim_node *x)
{
    for (size_t i = 0; i < g->nodes.n; i++) {
        if (g->nodes.v[i] == x)
            return i;
    }
    return (size_t)-1;
}

/* A deep copy; nodes keep their creation sequence numbers. */
sim_graph *sim_graph_clone(const sim_graph *g)
{
    sim_graph *c = sim_graph_new();
    c->next_seq = g->next_seq;
    for (size_t i = 0; i < g->nodes.n; i++) {
        sim_node *x = node_new(c, g->nodes.v[i]->seq);
        sim_op_copy(&x->op, &g->nodes.v[i]->op);
    }
    for (size_t i = 0; i < g->nodes.n; i++) {
        const sim_node *from = g->nodes.v[i];
        for (size_t j = 0; j < from->deps.n; j++)
            sim_nodes_push(&c->nodes.v[i]->deps, c->nodes.v[node_index(g, from->deps.v[j])]);
        for (size_t j = 0; j < from->outs.n; j++)
            sim_nodes_push(&c->nodes.v[i]->outs, c->nodes.v[node_index(g, from->outs.v[j])]);
    }
    return c;
}

sim_node *sim_node_by_seq(const sim_graph *g, unsigned long seq)
{
    for (size_t i = 0; i < g->nodes.n; i++) {
        if (g->nodes.v[i]->seq == seq)
            return g->nodes.v[i];
    }
    return NULL;
}

CUresult sim_graph_get(CUgraph h, sim_graph **out)
{
    CUresult rc;
    *out = sim_obj_need(h, SIM_K_GRAPH, CUDA_ERROR_INVALID_VALUE, &rc);
    return rc;
}

void sim_node_replace(sim_node *x, sim_op *op, int keep_label)
{
    if (keep_label) {
        memcpy(op->label, x->op.label, sizeof op->label);
        op->dev1 = x->op.dev1;
    }
    sim_op_release(&x->op);
    x->op = *op;
}

CUresult sim_node_get(CUgraphNode h, int type, sim_node **out)
{
    CUresult rc;
    *out = sim_obj_need(h, SIM_K_NODE, CUDA_ERROR_INVALID_VALUE, &rc);
    if (rc)
        return rc;
    if (type >= 0 && sim_op_node_type(&(*out)->op) != (CUgraphNodeType)type)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult sim_graph_check_deps(sim_graph *g, const CUgraphNode *deps, size_t n)
{
    if (n && !deps)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        const sim_node *x = sim_obj_get(deps[i], SIM_K_NODE);
        if (!x || x->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++) {
            if (deps[j] == deps[i])
                return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

/* ---- node parameters: one builder per parameter structure */

static CUresult op_from_host_params(sim_op *op, const CUDA_HOST_NODE_PARAMS *p)
{
    if (!p || !p->fn)
        return CUDA_ERROR_INVALID_VALUE;
    op->kind = SIM_OP_HOST;
    op->u.host.fn = p->fn;
    op->u.host.user = p->userData;
    return CUDA_SUCCESS;
}

CUresult sim_op_from_params(CUgraphNodeType type, const void *params, sim_op *op)
{
    memset(op, 0, sizeof *op);
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return sim_op_from_kernel_params(op, params);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return sim_op_from_memcpy3d(op, params);
    case CU_GRAPH_NODE_TYPE_MEMSET:
        return sim_op_from_memset_params(op, params);
    case CU_GRAPH_NODE_TYPE_HOST:
        return op_from_host_params(op, params);
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* ---- order and execution */

/* SIM_GRAPH_ORDER=latest: among ready nodes the latest created goes first, so that
 * a graph missing an edge its ops needed runs them out of submission order. */
static int latest_first(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("SIM_GRAPH_ORDER");
        v = e && !strcmp(e, "latest");
    }
    return v;
}

/* The ready node to run next (n: none). */
static size_t next_ready(size_t n, const size_t *waiting, const char *emitted)
{
    size_t found = n;
    for (size_t i = 0; i < n; i++) {
        if (emitted[i] || waiting[i])
            continue;
        found = i;
        if (!latest_first())
            break;
    }
    return found;
}

/* Kahn's algorithm; among ready nodes the earliest created goes first (the latest with
 * SIM_GRAPH_ORDER=latest).  Returns how many nodes were ordered (fewer than all: a
 * cycle). */
size_t sim_graph_order(const sim_graph *g, sim_node ***out)
{
    size_t n = g->nodes.n, done = 0;
    size_t *waiting = sim_xcalloc(n, sizeof *waiting);
    char *emitted = sim_xcalloc(n, 1);
    sim_node **order = sim_xcalloc(n, sizeof *order);

    for (size_t i = 0; i < n; i++)
        waiting[i] = g->nodes.v[i]->deps.n;
    while (done < n) {
        size_t i = next_ready(n, waiting, emitted);
        if (i == n)
            break;
        emitted[i] = 1;
        order[done++] = g->nodes.v[i];
        for (size_t j = 0; j < g->nodes.v[i]->outs.n; j++)
            waiting[node_index(g, g->nodes.v[i]->outs.v[j])]--;
    }
    free(waiting);
    free(emitted);
    *out = order;
    return done;
}

void sim_graph_run(sim_graph *g, const char *label, int in_graph)
{
    sim_node **order;
    size_t n = sim_graph_order(g, &order);
    for (size_t i = 0; i < n; i++) {
        sim_op *op = &order[i]->op;
        if (in_graph) {
            sim_cupti_trace_node(order[i]);
            sim_activity_node(order[i]);
        }
        sim_op_execute(op, op->label[0] ? op->label : label, in_graph);
    }
    free(order);
}
