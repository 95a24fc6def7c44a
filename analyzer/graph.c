/* graph.c -- the exec graph model: CSR predecessors, a topological order (Kahn; a
 * cycle is an error), the collapsed timed view, node lookup by id, and reachability
 * (a backward search from b that never goes above a in topological order, memoised
 * per pair).  What two views would hold twice is kept once: the timed view of a graph
 * whose nodes are all timed is its predecessor lists, and edges sorted by (to, from)
 * (an eager window's) are those lists too. */
#include "graph.h"
#include "vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int graphset_init(struct graphset *s)
{
    memset(s, 0, sizeof *s);
    return strtab_init(&s->strs);
}

void graph_free(struct graph *g)
{
    free(g->file);
    free(g->nodes);
    free(g->from);
    free(g->to);
    if (!g->tp_shared) {
        free(g->tp_off);
        free(g->tp);
    }
    free(g->pred_off);
    free(g->pred);
    free(g->topo);
    free(g->topo_pos);
    free(g->by_id);
    graph_release_search(g);
    memset(g, 0, sizeof *g);
}

void graphset_free(struct graphset *s)
{
    for (size_t i = 0; i < s->n; i++)
        graph_free(&s->g[i]);
    free(s->g);
    strtab_free(&s->strs);
    memset(s, 0, sizeof *s);
}

/* By exec id, then in the order the files were read (which duplicate is kept). */
static int by_exec_id(const void *a, const void *b)
{
    const struct graph *x = a, *y = b;
    if (x->has_exec_id != y->has_exec_id)
        return x->has_exec_id ? -1 : 1;
    if (x->exec_id != y->exec_id)
        return x->exec_id < y->exec_id ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void graphset_index(struct graphset *s, size_t *dups)
{
    size_t out = 0;
    if (s->n > 1)
        qsort(s->g, s->n, sizeof *s->g, by_exec_id);
    *dups = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (out > 0 && s->g[i].has_exec_id && s->g[out - 1].has_exec_id
            && s->g[i].exec_id == s->g[out - 1].exec_id) {
            graph_free(&s->g[i]);
            ++*dups;
            continue;
        }
        s->g[out++] = s->g[i];
    }
    s->n = out;
}

struct graph *graphset_find(const struct graphset *s, uint64_t exec_id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct graph *g = &s->g[mid];
        if (!g->has_exec_id || g->exec_id >= exec_id)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo < s->n && s->g[lo].has_exec_id && s->g[lo].exec_id == exec_id)
        return &s->g[lo];
    return NULL;
}

/* Adjacency lists (CSR): for each edge, val[e] is listed under key[e]. */
static int csr_build(uint32_t n, uint32_t m, const uint32_t *key, const uint32_t *val,
                     uint32_t **off_out, uint32_t **adj_out)
{
    uint32_t *off = calloc((size_t)n + 2, sizeof *off);
    uint32_t *adj = malloc(((size_t)m + 1) * sizeof *adj);
    *off_out = off;
    *adj_out = adj;
    if (off == NULL || adj == NULL)
        return -1;
    for (uint32_t e = 0; e < m; e++)
        off[key[e] + 2]++;
    for (uint32_t v = 0; v < n; v++)
        off[v + 2] += off[v + 1];
    for (uint32_t e = 0; e < m; e++)
        adj[off[key[e] + 1]++] = val[e];
    return 0;          /* off[v]..off[v+1] now delimit v's list */
}

/* Kahn's algorithm: 0, -1 out of memory, -2 a cycle. */
static int build_topo(struct graph *g)
{
    uint32_t *succ_off, *succ, *indeg = malloc(((size_t)g->n + 1) * sizeof *indeg);
    uint32_t head = 0, tail = 0;
    int rc = csr_build(g->n, g->m, g->from, g->to, &succ_off, &succ);
    g->topo = malloc(((size_t)g->n + 1) * sizeof *g->topo);
    g->topo_pos = malloc(((size_t)g->n + 1) * sizeof *g->topo_pos);
    if (rc != 0 || indeg == NULL || g->topo == NULL || g->topo_pos == NULL)
        rc = -1;
    for (uint32_t v = 0; rc == 0 && v < g->n; v++)
        if ((indeg[v] = g->pred_off[v + 1] - g->pred_off[v]) == 0)
            g->topo[tail++] = v;
    while (rc == 0 && head < tail) {
        uint32_t v = g->topo[head];
        g->topo_pos[v] = head++;
        for (uint32_t k = succ_off[v]; k < succ_off[v + 1]; k++)
            if (--indeg[succ[k]] == 0)
                g->topo[tail++] = succ[k];
    }
    g->n_topo = tail;
    if (rc == 0 && tail < g->n)
        rc = -2;
    free(indeg);
    free(succ_off);
    free(succ);
    return rc;
}

/* After Kahn stopped early: a node on a cycle.  Every node it never reached has a
 * predecessor it never reached; following those n times lands on a cycle. */
static uint32_t first_in_cycle(const struct graph *g)
{
    uint32_t v = 0;
    unsigned char *done = calloc((size_t)g->n + 1, 1);
    if (done == NULL)
        return 0;
    for (uint32_t k = 0; k < g->n_topo; k++)
        done[g->topo[k]] = 1;
    while (v < g->n && done[v])
        v++;
    for (uint32_t step = 0; v < g->n && step < g->n; step++)
        for (uint32_t i = g->pred_off[v]; i < g->pred_off[v + 1]; i++)
            if (!done[g->pred[i]]) {
                v = g->pred[i];
                break;
            }
    free(done);
    return v < g->n ? v : 0;
}

struct growable { uint32_t *p; size_t n, cap; };

static int grow_push(struct growable *a, uint32_t v)
{
    if (a->n >= GRAPH_MAX_TIMED_PREDS || vec_reserve(&a->p, &a->cap, a->n + 1, sizeof *a->p))
        return -1;
    a->p[a->n++] = v;
    return 0;
}

struct tp_range { uint32_t beg, end; };

/* One source of timed predecessors: a timed node stands for itself, an untimed one
 * for its own (already collapsed) list. */
static int collapse_from(struct graph *g, const struct tp_range *tpr, uint32_t u, uint32_t gen,
                         struct growable *out)
{
    if (g->nodes[u].timed) {
        if (g->stamp[u] == gen)
            return 0;
        g->stamp[u] = gen;
        return grow_push(out, u);
    }
    for (uint32_t i = tpr[u].beg; i < tpr[u].end; i++) {
        uint32_t w = out->p[i];
        if (g->stamp[w] == gen)
            continue;
        g->stamp[w] = gen;
        if (grow_push(out, w) != 0)
            return -1;
    }
    return 0;
}

/* The lists, made in topological order, laid out by node (tp_off, tp); kept as pred
 * itself when they are the same.  0, or -1 out of memory. */
static int layout_timed(struct graph *g, const struct tp_range *tpr, const uint32_t *lists,
                        size_t total)
{
    uint32_t k = 0;
    g->tp_off = malloc(((size_t)g->n + 1) * sizeof *g->tp_off);
    g->tp = malloc((total + 1) * sizeof *g->tp);
    if (g->tp_off == NULL || g->tp == NULL)
        return -1;
    for (uint32_t v = 0; v < g->n; v++) {
        g->tp_off[v] = k;
        for (uint32_t i = tpr[v].beg; i < tpr[v].end; i++)
            g->tp[k++] = lists[i];
    }
    g->tp_off[g->n] = k;
    if (k == g->m && memcmp(g->tp_off, g->pred_off, ((size_t)g->n + 1) * sizeof *g->tp_off) == 0
        && (k == 0 || memcmp(g->tp, g->pred, k * sizeof *g->tp) == 0)) {
        free(g->tp_off);
        free(g->tp);
        g->tp_off = g->pred_off;
        g->tp = g->pred;
        g->tp_shared = 1;
    }
    return 0;
}

/* The timed nodes each node depends on directly or through untimed nodes only. */
static int build_timed(struct graph *g)
{
    struct growable out = { 0 };
    struct tp_range *tpr = calloc((size_t)g->n + 1, sizeof *tpr);
    int rc = 0;
    g->stamp = calloc((size_t)g->n + 1, sizeof *g->stamp);
    if (tpr == NULL || g->stamp == NULL)
        rc = -1;
    for (uint32_t i = 0; rc == 0 && i < g->n; i++) {
        uint32_t v = g->topo[i], gen = ++g->gen;
        tpr[v].beg = (uint32_t)out.n;
        for (uint32_t k = g->pred_off[v]; rc == 0 && k < g->pred_off[v + 1]; k++)
            rc = collapse_from(g, tpr, g->pred[k], gen, &out);
        tpr[v].end = (uint32_t)out.n;
        g->n_timed += g->nodes[v].timed;
    }
    if (rc == 0)
        rc = layout_timed(g, tpr, out.p, out.n);
    free(out.p);
    free(tpr);
    return rc;
}

static const struct graph *sort_graph;

static int by_node_id(const void *a, const void *b)
{
    uint32_t x = sort_graph->nodes[*(const uint32_t *)a].node_id;
    uint32_t y = sort_graph->nodes[*(const uint32_t *)b].node_id;
    return x < y ? -1 : x > y;
}

/* Nodes with an id, sorted by it; -2 when two share one (*bad: the second). */
static int build_id_index(struct graph *g, uint32_t *bad)
{
    uint32_t with_id = 0;
    for (uint32_t v = 0; v < g->n; v++)
        with_id += g->nodes[v].has_id;
    if (with_id == 0)
        return 0;
    g->by_id = malloc((size_t)with_id * sizeof *g->by_id);
    if (g->by_id == NULL)
        return -1;
    for (uint32_t v = 0; v < g->n; v++)
        if (g->nodes[v].has_id)
            g->by_id[g->n_by_id++] = v;
    sort_graph = g;
    if (g->n_by_id > 1)
        qsort(g->by_id, g->n_by_id, sizeof *g->by_id, by_node_id);
    for (uint32_t i = 1; i < g->n_by_id; i++)
        if (g->nodes[g->by_id[i]].node_id == g->nodes[g->by_id[i - 1]].node_id) {
            *bad = g->by_id[i] > g->by_id[i - 1] ? g->by_id[i] : g->by_id[i - 1];
            return -2;
        }
    return 0;
}

/* Edges sorted by (to, from) are the predecessor lists in order: not kept twice. */
static void drop_sorted_edges(struct graph *g)
{
    for (uint32_t e = 1; e < g->m; e++) {
        uint32_t t0 = g->to[e - 1], t1 = g->to[e];
        if (t1 < t0 || (t1 == t0 && g->from[e] < g->from[e - 1]))
            return;
    }
    free(g->from);
    free(g->to);
    g->from = g->to = NULL;
}

enum graph_error graph_finish(struct graph *g, uint32_t *bad)
{
    int rc = csr_build(g->n, g->m, g->to, g->from, &g->pred_off, &g->pred);
    if (rc == 0)
        rc = build_topo(g);
    if (rc == -2) {
        *bad = first_in_cycle(g);
        return GRAPH_CYCLE;
    }
    if (rc == 0 && build_timed(g) != 0)
        return GRAPH_TOO_LARGE;
    if (rc == 0)
        rc = build_id_index(g, bad);
    graph_release_search(g);
    if (rc == 0)
        drop_sorted_edges(g);
    return rc == -2 ? GRAPH_DUP_ID : rc != 0 ? GRAPH_NOMEM : GRAPH_OK;
}

int graph_next_edge(const struct graph *g, struct edge_iter *it, uint32_t *from, uint32_t *to)
{
    if (it->e >= g->m)
        return 0;
    if (g->from != NULL) {
        *from = g->from[it->e];
        *to = g->to[it->e];
    } else {
        while (g->pred_off[it->v + 1] <= it->e)
            it->v++;
        *from = g->pred[it->e];
        *to = it->v;
    }
    it->e++;
    return 1;
}

long graph_find_node(const struct graph *g, uint64_t node_id)
{
    uint32_t want = (uint32_t)node_id, lo = 0, hi = g->n_by_id;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->nodes[g->by_id[mid]].node_id < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->n_by_id && g->nodes[g->by_id[lo]].node_id == want)
        return g->by_id[lo];
    return -1;
}

/* ---- reachability ------------------------------------------------------------- */

static size_t memo_slot(const struct pair_memo *m, uint64_t key)
{
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1);
    while (m->keys[i] != 0 && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int memo_grow(struct pair_memo *m)
{
    struct pair_memo bigger = { 0 };
    bigger.cap = m->cap ? m->cap * 2 : 256;
    bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
    bigger.vals = calloc(bigger.cap, sizeof *bigger.vals);
    if (bigger.keys == NULL || bigger.vals == NULL) {
        free(bigger.keys);
        free(bigger.vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != 0) {
            size_t k = memo_slot(&bigger, m->keys[i]);
            bigger.keys[k] = m->keys[i];
            bigger.vals[k] = m->vals[i];
        }
    bigger.n = m->n;
    free(m->keys);
    free(m->vals);
    *m = bigger;
    return 0;
}

void graph_release_search(struct graph *g)
{
    free(g->memo.keys);
    free(g->memo.vals);
    free(g->stamp);
    free(g->stack);
    memset(&g->memo, 0, sizeof g->memo);
    g->stamp = g->stack = NULL;
}

/* Backward search from b over timed predecessors, never above a in topological order. */
static int search(struct graph *g, uint32_t a, uint32_t b)
{
    uint32_t gen = ++g->gen, top = 0, floor = g->topo_pos[a];
    g->stack[top++] = b;
    g->stamp[b] = gen;
    while (top > 0) {
        uint32_t v = g->stack[--top];
        for (uint32_t i = g->tp_off[v]; i < g->tp_off[v + 1]; i++) {
            uint32_t u = g->tp[i];
            if (u == a)
                return 1;
            if (g->stamp[u] == gen || g->topo_pos[u] < floor)
                continue;
            g->stamp[u] = gen;
            g->stack[top++] = u;
        }
    }
    return 0;
}

int graph_reaches(struct graph *g, uint32_t a, uint32_t b)
{
    uint64_t key = ((uint64_t)(a + 1) << 32) | b;
    size_t slot;
    if (a == b || g->topo_pos[a] >= g->topo_pos[b])
        return 0;
    if (g->stamp == NULL) {
        g->stamp = calloc((size_t)g->n + 1, sizeof *g->stamp);
        g->stack = malloc(((size_t)g->n + 1) * sizeof *g->stack);
        if (g->stamp == NULL || g->stack == NULL)
            return -1;
    }
    if ((g->memo.n + 1) * 2 > g->memo.cap && memo_grow(&g->memo) != 0)
        return -1;
    slot = memo_slot(&g->memo, key);
    if (g->memo.keys[slot] == 0) {
        g->memo.keys[slot] = key;
        g->memo.vals[slot] = (uint8_t)search(g, a, b);
        g->memo.n++;
    }
    return g->memo.vals[slot];
}
