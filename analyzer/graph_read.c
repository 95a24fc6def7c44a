/* graph_read.c -- graph data files: the JSON of PyTorch's CUDAGraph.get_graph_data()
 * and of libautograph's AUTOGRAPH_DEBUG_DUMP (analyzer/FORMAT.md), one object per exec
 * graph, or an array of them.  Node "index" values must be 0..N-1, each once; the
 * edges are the union of every node's "dependencies" and "dependents". */
#include "graph_read.h"

#include "json_stream.h"
#include "vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pending_edge {
    uint32_t pos, other;    /* node position in the file, the index it names */
    uint8_t dependent;      /* 1: pos -> other, 0: other -> pos */
    uint64_t off;
};

struct greader {
    struct js j;
    struct graphset *set;
    struct graph *g;                /* being read (&cur) */
    struct graph cur;
    const char *path;
    uint64_t node_graph_id;         /* a node's "graph_id", for a null exec_graph_id */
    int node_graph_id_set;
    uint32_t *index;                /* per position: its "index" */
    uint64_t *index_off;            /* per position: where its "index" is */
    uint64_t *pos_off, *node_off;   /* where each node starts: per position, per index */
    struct pending_edge *edges;
    size_t n_edges, cap_edges, cap_nodes, cap_index;
    char key[32], text[4096];
};

static void *grow(struct greader *r, void *p, size_t *cap, size_t need, size_t size)
{
    if (vec_reserve(&p, cap, need, size) != 0)
        js_fail(&r->j, "out of memory");
    return p;
}

static uint32_t intern(struct greader *r, const char *s)
{
    uint32_t id = strtab_intern(&r->set->strs, s, strlen(s));
    if (id == UINT32_MAX)
        js_fail(&r->j, "out of memory");
    return id;
}

/* An unsigned integer or null (0); anything else is an error naming the member. */
static int opt_u64(struct greader *r, uint64_t *out, const char *what)
{
    struct js_num num;
    if (js_peek(&r->j) == 'n') {
        js_skip(&r->j);
        return 0;
    }
    js_number(&r->j, &num);
    if (js_num_u64(&num, out) != 0)
        js_fail_at(&r->j, num.off, "\"%s\": expected a non-negative integer or null", what);
    return 1;
}

static uint32_t index_value(struct greader *r, const char *what, uint64_t *off)
{
    uint64_t v = 0;
    *off = js_offset(&r->j);
    if (!opt_u64(r, &v, what) || v >= GRAPH_MAX_NODES)
        js_fail_at(&r->j, *off, "\"%s\": expected a node index (0 to %u)", what,
                   GRAPH_MAX_NODES - 1);
    return (uint32_t)v;
}

static void edge_list(struct greader *r, uint32_t pos, int dependent, const char *what)
{
    int first = 1;
    js_expect(&r->j, '[', "'[' (a list of node indices)");
    while (js_array_next(&r->j, &first)) {
        struct pending_edge e = { .pos = pos, .dependent = (uint8_t)dependent };
        e.other = index_value(r, what, &e.off);
        if (r->n_edges >= GRAPH_MAX_EDGES)
            js_fail(&r->j, "more than %u dependencies", GRAPH_MAX_EDGES);
        r->edges = grow(r, r->edges, &r->cap_edges, r->n_edges + 1, sizeof *r->edges);
        r->edges[r->n_edges++] = e;
    }
}

static int timed_type(const char *type)
{
    return strcmp(type, "kernel") == 0 || strcmp(type, "memcpy") == 0
           || strcmp(type, "memset") == 0;
}

/* A string or null, interned (0 for null). */
static uint32_t opt_string(struct greader *r)
{
    if (js_peek(&r->j) == 'n') {
        js_skip(&r->j);
        return 0;
    }
    if (js_peek(&r->j) != '"')
        js_fail_expected(&r->j, "a string or null");
    js_string(&r->j, r->text, sizeof r->text, NULL);
    return intern(r, r->text);
}

struct node_ids { int has_tools, has_node; };

static void node_id_member(struct greader *r, struct gnode *nd, struct node_ids *ids)
{
    uint64_t v = 0, off = js_offset(&r->j);
    if (!opt_u64(r, &v, "node_id"))
        return;
    if (v > UINT32_MAX)
        js_fail_at(&r->j, off, "\"node_id\": expected a 32-bit node id");
    nd->node_id = (uint32_t)v;
    ids->has_node = 1;
}

static void node_member(struct greader *r, struct gnode *nd, uint32_t pos,
                        struct node_ids *ids)
{
    const char *key = r->key;
    if (strcmp(key, "index") == 0)
        r->index[pos] = index_value(r, "index", &r->index_off[pos]);
    else if (strcmp(key, "node_type") == 0)
        nd->type = opt_string(r);
    else if (strcmp(key, "kernel_name") == 0)
        nd->name = opt_string(r);
    else if (strcmp(key, "tools_id") == 0)
        ids->has_tools = opt_u64(r, &nd->tools_id, "tools_id");
    else if (strcmp(key, "node_id") == 0)
        node_id_member(r, nd, ids);
    else if (strcmp(key, "graph_id") == 0 && r->g->has_exec_id == 0)
        r->node_graph_id_set = opt_u64(r, &r->node_graph_id, "graph_id");
    else if (strcmp(key, "dependencies") == 0)
        edge_list(r, pos, 0, key);
    else if (strcmp(key, "dependents") == 0)
        edge_list(r, pos, 1, key);
    else
        js_skip(&r->j);
}

static void read_node(struct greader *r, uint32_t pos)
{
    struct graph *g = r->g;
    struct gnode *nd;
    struct node_ids ids = { 0, 0 };
    int first = 1;
    if (pos >= GRAPH_MAX_NODES)
        js_fail(&r->j, "more than %u nodes", GRAPH_MAX_NODES);
    g->nodes = grow(r, g->nodes, &r->cap_nodes, (size_t)pos + 1, sizeof *g->nodes);
    size_t cap_index = r->cap_index, cap_off = r->cap_index, cap_pos = r->cap_index;
    r->index = grow(r, r->index, &cap_index, r->cap_nodes, sizeof *r->index);
    r->index_off = grow(r, r->index_off, &cap_off, r->cap_nodes, sizeof *r->index_off);
    r->pos_off = grow(r, r->pos_off, &cap_pos, r->cap_nodes, sizeof *r->pos_off);
    r->cap_index = cap_index;
    nd = &g->nodes[pos];
    memset(nd, 0, sizeof *nd);
    r->index[pos] = pos;                     /* a missing "index": its position */
    r->index_off[pos] = r->pos_off[pos] = js_offset(&r->j);
    nd->type = intern(r, "kernel");          /* a missing "node_type": a kernel */
    js_expect(&r->j, '{', "a node object '{'");
    while (js_object_next(&r->j, &first)) {
        js_key(&r->j, r->key, sizeof r->key);
        node_member(r, nd, pos, &ids);
    }
    if (!ids.has_node && ids.has_tools) {
        nd->node_id = (uint32_t)nd->tools_id;
        ids.has_node = 1;
    }
    nd->has_id = (uint8_t)ids.has_node;
    nd->timed = (uint8_t)timed_type(strtab_get(&r->set->strs, nd->type));
    g->n = pos + 1;
}

static void read_nodes(struct greader *r)
{
    int first = 1;
    uint32_t pos = 0;
    js_expect(&r->j, '[', "'[' (the list of nodes)");
    while (js_array_next(&r->j, &first))
        read_node(r, pos++);
}

/* Positions -> indices: every index 0..n-1 exactly once. */
static void check_indices(struct greader *r)
{
    struct graph *g = r->g;
    uint32_t *seen = calloc((size_t)g->n + 1, sizeof *seen);
    if (seen == NULL)
        js_fail(&r->j, "out of memory");
    for (uint32_t pos = 0; pos < g->n; pos++) {
        uint32_t ix = r->index[pos];
        if (ix >= g->n || seen[ix]) {
            free(seen);
            js_fail_at(&r->j, r->index_off[pos], "node \"index\" %u: expected each of 0..%u "
                       "exactly once (%s)", ix, g->n - 1, ix >= g->n ? "out of range"
                       : "used twice");
        }
        seen[ix] = 1;
    }
    free(seen);
}

static int by_edge(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Pending edges -> the graph's edge list, in index space, duplicates removed. */
static void settle_edges(struct greader *r)
{
    struct graph *g = r->g;
    uint64_t *packed = malloc((r->n_edges + 1) * sizeof *packed);
    size_t m = 0;
    if (packed == NULL)
        js_fail(&r->j, "out of memory");
    for (size_t e = 0; e < r->n_edges; e++) {
        const struct pending_edge *pe = &r->edges[e];
        uint32_t self = r->index[pe->pos], other = pe->other;
        if (other >= g->n || other == self) {
            free(packed);
            js_fail_at(&r->j, pe->off, "dependency on node %u: %s", other,
                       other == self ? "a node cannot depend on itself" : "no such index");
        }
        packed[e] = pe->dependent ? (uint64_t)self << 32 | other : (uint64_t)other << 32 | self;
    }
    if (r->n_edges > 1)
        qsort(packed, r->n_edges, sizeof *packed, by_edge);
    g->from = malloc((r->n_edges + 1) * sizeof *g->from);
    g->to = malloc((r->n_edges + 1) * sizeof *g->to);
    if (g->from == NULL || g->to == NULL) {
        free(packed);
        js_fail(&r->j, "out of memory");
    }
    for (size_t e = 0; e < r->n_edges; e++)
        if (e == 0 || packed[e] != packed[e - 1]) {
            g->from[m] = (uint32_t)(packed[e] >> 32);
            g->to[m++] = (uint32_t)packed[e];
        }
    g->m = (uint32_t)m;
    free(packed);
}

/* Nodes are stored by position; put them in index order. */
static void order_nodes(struct greader *r)
{
    struct graph *g = r->g;
    struct gnode *sorted = malloc(((size_t)g->n + 1) * sizeof *sorted);
    free(r->node_off);
    r->node_off = malloc(((size_t)g->n + 1) * sizeof *r->node_off);
    if (sorted == NULL || r->node_off == NULL) {
        free(sorted);
        js_fail(&r->j, "out of memory");
    }
    for (uint32_t pos = 0; pos < g->n; pos++) {
        sorted[r->index[pos]] = g->nodes[pos];
        r->node_off[r->index[pos]] = r->pos_off[pos];
    }
    free(g->nodes);
    g->nodes = sorted;
}

static void graph_member(struct greader *r, int *has_nodes)
{
    if (strcmp(r->key, "exec_graph_id") == 0) {
        r->g->has_exec_id = opt_u64(r, &r->g->exec_id, "exec_graph_id");
    } else if (strcmp(r->key, "nodes") == 0) {
        read_nodes(r);
        *has_nodes = 1;
    } else {
        js_skip(&r->j);
    }
}

static void reset_graph(struct greader *r)
{
    graph_free(&r->cur);
    r->g = &r->cur;
    r->n_edges = 0;
    r->cap_nodes = 0;
    r->node_graph_id_set = 0;
    r->g->file = strdup(r->path);
    if (r->g->file == NULL)
        js_fail(&r->j, "out of memory");
}

/* The graph's checks that need all of it; errors point at the node concerned. */
static void finish(struct greader *r)
{
    uint32_t bad = 0;
    switch (graph_finish(r->g, &bad)) {
    case GRAPH_OK:
        return;
    case GRAPH_CYCLE:
        js_fail_at(&r->j, r->node_off[bad], "node %u is on a dependency cycle (the graph must "
                   "be a DAG)", bad);
    case GRAPH_DUP_ID:
        js_fail_at(&r->j, r->node_off[bad], "node %u: its node_id %u is another node's too",
                   bad, r->g->nodes[bad].node_id);
    case GRAPH_TOO_LARGE:
        js_fail(&r->j, "graph too large to analyze (more than %u dependencies once paths "
                "through untimed nodes are collapsed)", GRAPH_MAX_TIMED_PREDS);
    default:
        js_fail(&r->j, "out of memory");
    }
}

/* One exec graph object, checked and added to the set. */
static void read_graph(struct greader *r)
{
    uint64_t start = js_offset(&r->j);
    int first = 1, has_nodes = 0;
    reset_graph(r);
    if (js_peek(&r->j) != '{')
        js_fail_expected(&r->j, "a graph data object '{'");
    r->j.p++;
    while (js_object_next(&r->j, &first)) {
        js_key(&r->j, r->key, sizeof r->key);
        graph_member(r, &has_nodes);
    }
    if (!has_nodes)
        js_fail_at(&r->j, start, "a graph data object without \"nodes\"");
    if (!r->g->has_exec_id && r->node_graph_id_set) {
        r->g->exec_id = r->node_graph_id;
        r->g->has_exec_id = 1;
    }
    check_indices(r);
    settle_edges(r);
    order_nodes(r);
    finish(r);
    struct graphset *set = r->set;
    set->g = grow(r, set->g, &set->cap, set->n + 1, sizeof *set->g);
    r->cur.seq = set->n;
    set->g[set->n++] = r->cur;
    memset(&r->cur, 0, sizeof r->cur);
}

static void read_document(struct greader *r)
{
    int first = 1;
    if (js_peek(&r->j) == '[') {
        r->j.p++;
        while (js_array_next(&r->j, &first))
            read_graph(r);
    } else {
        read_graph(r);
    }
    js_expect_end(&r->j);
}

int graph_read(struct graphset *set, struct input *in, char *err, size_t errsize)
{
    jmp_buf fail;
    struct greader *r = calloc(1, sizeof *r);
    size_t before = set->n;
    volatile int rc = -1;
    if (r == NULL || js_init(&r->j, in, &fail, err, errsize) != 0) {
        snprintf(err, errsize, "%s: out of memory", input_name(in));
        free(r);
        return -1;
    }
    r->set = set;
    r->path = input_name(in);
    if (setjmp(fail) == 0) {
        read_document(r);
        rc = 0;
    }
    if (rc != 0)
        while (set->n > before)
            graph_free(&set->g[--set->n]);
    graph_free(&r->cur);
    free(r->index);
    free(r->index_off);
    free(r->pos_off);
    free(r->node_off);
    free(r->edges);
    js_free(&r->j);
    free(r);
    return rc;
}

static int read_cb(void *set, struct input *in, char *err, size_t errsize)
{
    return graph_read(set, in, err, errsize);
}

int graph_read_file(struct graphset *set, const char *path, char *err, size_t errsize)
{
    return input_with_file(path, read_cb, set, err, errsize);
}
