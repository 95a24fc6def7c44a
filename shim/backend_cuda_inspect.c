/* backend_cuda_inspect.c -- introspection on the CUDA driver: the DOT dump and the
 * graph data of a graph the backend built (backend.h: dump_dot, graph_data).
 *
 * Graph data has the shape of PyTorch's CUDAGraph.get_graph_data():
 *   {"exec_graph_id": E, "nodes": [{"index": i, "node_type": "kernel", "tools_id": T,
 *     "graph_id": E, "node_id": N, "kernel_name": "..." or null,
 *     "dependencies": [i, ...], "dependents": [i, ...]}, ...]}
 * Nodes in cuGraphGetNodes order; edges from cuGraphGetEdges (the graph's real
 * edges).  Ids come from CUPTI (cupti_ids.c): node_id is the low 32 bits of
 * cuptiGetGraphNodeId of the template's node, exec_graph_id is cuptiGetGraphExecId
 * of the executable, and, as PyTorch does (the profiler reports the executable's
 * nodes), graph_id = exec_graph_id and tools_id = (exec_graph_id << 32) | node_id:
 * the graphNodeId of that node's kernel records.  Without CUPTI the ids are null.
 * Driver calls go to the real functions, never through the shim's wrappers.
 */
#include "backend_cuda_inspect.h"

#include "cupti_ids.h"
#include "json_escape.h"
#include "log.h"
#include "record_ops.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    __typeof__(&cuGraphGetNodes) get_nodes;
    __typeof__(&cuGraphGetEdges) get_edges;
    __typeof__(&cuGraphNodeGetType) node_type;
    __typeof__(&cuGraphKernelNodeGetParams) kernel_params;
    __typeof__(&cuFuncGetName) func_name;
    __typeof__(&cuKernelGetName) kernel_name;
    __typeof__(&cuGraphDebugDotPrint) dot_print;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&drv.get_nodes = ag_driver_proc("cuGraphGetNodes");
    *(void **)&drv.get_edges = ag_driver_proc("cuGraphGetEdges");
    *(void **)&drv.node_type = ag_driver_proc("cuGraphNodeGetType");
    *(void **)&drv.kernel_params = ag_driver_proc("cuGraphKernelNodeGetParams");
    *(void **)&drv.func_name = ag_driver_proc("cuFuncGetName");
    *(void **)&drv.kernel_name = ag_driver_proc("cuKernelGetName");
    *(void **)&drv.dot_print = ag_driver_proc("cuGraphDebugDotPrint");
}

static int resolved(void)
{
    pthread_once(&drv_once, resolve);
    return drv.get_nodes && drv.get_edges && drv.node_type && drv.kernel_params;
}

int ag_cuda_dump_dot(void *graph, const char *path, int verbose)
{
    pthread_once(&drv_once, resolve);
    if (drv.dot_print == NULL)
        return CUDA_ERROR_NOT_FOUND;
    return drv.dot_print((CUgraph)graph, path, verbose ? CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE : 0);
}

/* ---- the graph: nodes and edges -------------------------------------------------- */

struct graph_view {
    CUgraphNode *nodes, *from, *to;
    size_t n, m;
};

static void view_free(struct graph_view *g)
{
    free(g->nodes);
    free(g->from);
    free(g->to);
}

static CUresult view_load(CUgraph graph, struct graph_view *g)
{
    CUresult rc = drv.get_nodes(graph, NULL, &g->n);
    if (rc == CUDA_SUCCESS)
        rc = drv.get_edges(graph, NULL, NULL, NULL, &g->m);
    if (rc != CUDA_SUCCESS)
        return rc;
    g->nodes = calloc(g->n + 1, sizeof *g->nodes);
    g->from = calloc(g->m + 1, sizeof *g->from);
    g->to = calloc(g->m + 1, sizeof *g->to);
    if (!g->nodes || !g->from || !g->to)
        return CUDA_ERROR_OUT_OF_MEMORY;
    rc = drv.get_nodes(graph, g->nodes, &g->n);
    return rc ? rc : drv.get_edges(graph, g->from, g->to, NULL, &g->m);
}

static long index_of(const struct graph_view *g, CUgraphNode node)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i] == node)
            return (long)i;
    return -1;
}

/* ---- JSON text ------------------------------------------------------------------- */

struct text { char *p; size_t len, cap; int failed; };

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    for (int pass = 0; pass < 2 && !t->failed; pass++) {
        va_start(ap, fmt);
        n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
        } else if (t->p && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        } else {
            size_t cap = (t->cap ? t->cap : 4096) * 2 + (size_t)n;
            char *p = realloc(t->p, cap);
            t->failed = p == NULL;
            t->p = p ? p : t->p;
            t->cap = p ? cap : t->cap;
        }
    }
}

static void put_escaped(void *t, const char *bytes, size_t n)
{
    put(t, "%.*s", (int)n, bytes);
}

/* A JSON string (NULL: null). */
static void put_string(struct text *t, const char *s)
{
    if (s == NULL) {
        put(t, "null");
        return;
    }
    put(t, "\"");
    ag_json_escape(s, put_escaped, t);
    put(t, "\"");
}

static void put_id(struct text *t, int known, unsigned long long id)
{
    if (known)
        put(t, "%llu", id);
    else
        put(t, "null");
}

/* ---- one node ------------------------------------------------------------------- */

static const char *type_name(CUgraphNodeType type, char *buf, size_t size)
{
    static const char *const names[] = {
        [CU_GRAPH_NODE_TYPE_KERNEL] = "kernel", [CU_GRAPH_NODE_TYPE_MEMCPY] = "memcpy",
        [CU_GRAPH_NODE_TYPE_MEMSET] = "memset", [CU_GRAPH_NODE_TYPE_HOST] = "host",
        [CU_GRAPH_NODE_TYPE_GRAPH] = "child_graph", [CU_GRAPH_NODE_TYPE_EMPTY] = "empty",
        [CU_GRAPH_NODE_TYPE_WAIT_EVENT] = "wait_event",
        [CU_GRAPH_NODE_TYPE_EVENT_RECORD] = "event_record",
        [CU_GRAPH_NODE_TYPE_MEM_ALLOC] = "mem_alloc", [CU_GRAPH_NODE_TYPE_MEM_FREE] = "mem_free",
    };
    if ((size_t)type < sizeof names / sizeof names[0] && names[type])
        return names[type];
    snprintf(buf, size, "%d", (int)type);    /* as PyTorch: str() of an unnamed type */
    return buf;
}

static const char *kernel_name(CUgraphNode node)
{
    CUDA_KERNEL_NODE_PARAMS p;
    const char *name = NULL;
    memset(&p, 0, sizeof p);
    if (drv.kernel_params(node, &p) != CUDA_SUCCESS)
        return NULL;
    if (p.func && drv.func_name && drv.func_name(&name, p.func) == CUDA_SUCCESS)
        return name;
    if (p.kern && drv.kernel_name && drv.kernel_name(&name, p.kern) == CUDA_SUCCESS)
        return name;
    return NULL;
}

/* A list of node indices: the other end of every edge whose `end` is node i. */
static void put_edges(struct text *t, const struct graph_view *g, size_t i, int dependents)
{
    const CUgraphNode *mine = dependents ? g->from : g->to;
    const CUgraphNode *other = dependents ? g->to : g->from;
    int first = 1;
    put(t, "[");
    for (size_t e = 0; e < g->m; e++) {
        long k;
        if (mine[e] != g->nodes[i] || (k = index_of(g, other[e])) < 0)
            continue;
        put(t, first ? "%ld" : ", %ld", k);
        first = 0;
    }
    put(t, "]");
}

static CUresult put_node(struct text *t, const struct graph_view *g, size_t i,
                         int exec_known, uint32_t exec_id)
{
    CUgraphNodeType type;
    uint64_t raw = 0;
    char buf[16];
    CUresult rc = drv.node_type(g->nodes[i], &type);
    int node_known = exec_known && ag_cupti_node_id(g->nodes[i], &raw) == 0;
    uint32_t local = (uint32_t)raw;

    if (rc != CUDA_SUCCESS)
        return rc;
    put(t, "%s\n    {\"index\": %zu, \"node_type\": ", i ? "," : "", i);
    put_string(t, type_name(type, buf, sizeof buf));
    put(t, ", \"tools_id\": ");
    put_id(t, node_known, ((unsigned long long)exec_id << 32) | local);
    put(t, ", \"graph_id\": ");
    put_id(t, node_known, exec_id);
    put(t, ", \"node_id\": ");
    put_id(t, node_known, local);
    put(t, ", \"kernel_name\": ");
    put_string(t, type == CU_GRAPH_NODE_TYPE_KERNEL ? kernel_name(g->nodes[i]) : NULL);
    put(t, ", \"dependencies\": ");
    put_edges(t, g, i, 0);
    put(t, ", \"dependents\": ");
    put_edges(t, g, i, 1);
    put(t, "}");
    return CUDA_SUCCESS;
}

/* AUTOGRAPH_LOG=debug: the raw CUPTI ids behind the remapped ones (the template's
 * graph id and its first node's id), to check their form on a new driver. */
static void log_raw_ids(CUgraph graph, const struct graph_view *g, uint32_t exec_id)
{
    uint32_t graph_id = 0;
    uint64_t node_id = 0;
    if (!ag_log_enabled(AG_LOG_DEBUG) || g->n == 0)
        return;
    ag_cupti_graph_id(graph, &graph_id);
    ag_cupti_node_id(g->nodes[0], &node_id);
    ag_log(AG_LOG_DEBUG, "graph data: exec graph %u, template graph %u, its node 0 has "
           "CUPTI id 0x%llx", exec_id, graph_id, (unsigned long long)node_id);
}

int ag_cuda_graph_data(void *graph, void *exec, char **json)
{
    struct graph_view g = { 0 };
    struct text t = { 0 };
    uint32_t exec_id = 0;
    int exec_known = ag_cupti_ids_available() && ag_cupti_exec_id(exec, &exec_id) == 0;
    CUresult rc = resolved() ? view_load((CUgraph)graph, &g) : CUDA_ERROR_NOT_FOUND;

    if (rc == CUDA_SUCCESS && exec_known)
        log_raw_ids((CUgraph)graph, &g, exec_id);
    put(&t, "{\"exec_graph_id\": ");
    put_id(&t, exec_known, exec_id);
    put(&t, ", \"nodes\": [");
    for (size_t i = 0; i < g.n && rc == CUDA_SUCCESS; i++)
        rc = put_node(&t, &g, i, exec_known, exec_id);
    put(&t, "%s]}\n", g.n ? "\n" : "");
    view_free(&g);
    if (rc == CUDA_SUCCESS && t.failed)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc != CUDA_SUCCESS) {
        ag_log(AG_LOG_INFO, "graph data: the driver refused (error %d)", (int)rc);
        free(t.p);
        return rc;
    }
    *json = t.p;
    return 0;
}
