/* node_map.c -- launch groups (records sharing a correlation, no graph keys: PyTorch
 * 2.11's profiler traces of CUDA graph replays) mapped to graph files' nodes by kernel
 * name, launch order and dependency order (analyzer/FORMAT.md, "Replays without node
 * ids").
 *
 * A group matches the first graph file whose timed nodes have the same multiset of
 * name keys as its records (name_key.c: mangled and demangled names compare alike;
 * copy and memset nodes match copy and memset records or the driver's copy kernels).
 * Each replay is then walked in start order; a record takes an unmapped node of its
 * key whose timed predecessors are all mapped and had ended by its start (plus
 * epsilon): a topological order consistent with the observed starts.  The choice is
 * *exact* when one node qualifies, or when all that qualify are interchangeable (same
 * name, same shape of ancestors and descendants, same timed predecessors: swapping
 * them changes no record's predecessors); *by stream* when one of them has a
 * predecessor whose record ran on the record's stream (a captured branch keeps its
 * internal stream); *ambiguous* otherwise (the lowest such node is taken, and
 * serializations that involve the record are classed ambiguous). */
#include "analysis.h"
#include "name_key.h"

#include <stdlib.h>
#include <string.h>

#define FNV_PRIME 1099511628211ull

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static int by_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Per graph: each node's name key, structural signature, and its set of timed
 * predecessors (hashed, whatever their order). */
struct gmap {
    const struct graph *g;
    uint64_t *key, *sig, *preds;
};

/* A node's key: its kernel name's, or its kind's for a copy or memset node (which
 * has no name; the trace shows it as a copy or memset record, or as a kernel of the
 * driver's: name_key_driver_class). */
static uint64_t node_key(const struct graphset *gs, const struct name_keys *names,
                         const struct gnode *nd)
{
    const char *type = strtab_get(&gs->strs, nd->type);
    if (strcmp(type, "memcpy") == 0)
        return NAME_KEY_COPY;
    if (strcmp(type, "memset") == 0)
        return NAME_KEY_SET;
    return name_key(names, nd->name ? nd->name : nd->type);
}

/* Each node's signature: a hash of its ancestors' and its descendants' shapes (names
 * and edges), so that structurally alike nodes share one. */
static int gmap_sigs(struct gmap *m)
{
    const struct graph *g = m->g;
    uint64_t *up = calloc((size_t)g->n + 1, sizeof *up);
    uint64_t *down = calloc((size_t)g->n + 1, sizeof *down);
    if (up == NULL || down == NULL) {
        free(up);
        free(down);
        return -1;
    }
    for (uint32_t k = 0; k < g->n_topo; k++) {        /* ancestors' shape */
        uint32_t v = g->topo[k];
        uint64_t h = m->key[v];
        for (uint32_t i = g->tp_off[v]; i < g->tp_off[v + 1]; i++)
            h += mix(up[g->tp[i]] + 1);
        up[v] = mix(h);
    }
    for (uint32_t k = g->n_topo; k-- > 0;) {          /* descendants' shape */
        uint32_t v = g->topo[k];
        down[v] = mix(down[v] + m->key[v]);
        for (uint32_t i = g->tp_off[v]; i < g->tp_off[v + 1]; i++)
            down[g->tp[i]] += mix(down[v] + 7);
    }
    for (uint32_t v = 0; v < g->n; v++)
        m->sig[v] = mix(up[v] ^ (down[v] * FNV_PRIME));
    free(up);
    free(down);
    return 0;
}

static int gmap_init(struct gmap *m, const struct graphset *gs, const struct name_keys *names,
                     const struct graph *g)
{
    m->g = g;
    m->key = calloc((size_t)g->n + 1, sizeof *m->key);
    m->sig = calloc((size_t)g->n + 1, sizeof *m->sig);
    m->preds = calloc((size_t)g->n + 1, sizeof *m->preds);
    if (m->key == NULL || m->sig == NULL || m->preds == NULL)
        return -1;
    for (uint32_t v = 0; v < g->n; v++) {
        m->key[v] = node_key(gs, names, &g->nodes[v]);
        for (uint32_t i = g->tp_off[v]; i < g->tp_off[v + 1]; i++)
            m->preds[v] += mix(g->tp[i] + 1);
    }
    return gmap_sigs(m);
}

static void gmap_free(struct gmap *m)
{
    free(m->key);
    free(m->sig);
    free(m->preds);
}

/* The sorted keys of a graph's timed nodes. */
static uint64_t *graph_keys(const struct gmap *m, uint32_t *n)
{
    uint64_t *k = malloc(((size_t)m->g->n + 1) * sizeof *k);
    *n = 0;
    if (k == NULL)
        return NULL;
    for (uint32_t v = 0; v < m->g->n; v++)
        if (m->g->nodes[v].timed)
            k[(*n)++] = m->key[v];
    sort_n(k, *n, sizeof *k, by_u64);
    return k;
}

static const struct kev *rec_of(const struct analysis *a, const struct replay *r, uint32_t i)
{
    return &a->t->ev[a->order[r->first + i]];
}

/* Every graph's map and sorted keys, and each launch group record's key (by order
 * position). */
struct maps {
    struct gmap *m;
    uint64_t **keys;
    uint32_t *n_keys;
    uint64_t *rkey;
};

static int replay_matches(const struct maps *ms, const struct replay *r, size_t gi)
{
    uint32_t n = ms->n_keys[gi];
    uint64_t *k;
    int same;
    if (r->count != n)
        return 0;
    if ((k = malloc(((size_t)n + 1) * sizeof *k)) == NULL)
        return -1;
    memcpy(k, ms->rkey + r->first, n * sizeof *k);
    sort_n(k, n, sizeof *k, by_u64);
    same = n == 0 || memcmp(k, ms->keys[gi], n * sizeof *k) == 0;
    free(k);
    return same;
}

enum choice { CH_EXACT, CH_STREAM, CH_AMBIGUOUS, CH_NONE };

struct walk_state {
    const struct analysis *a;
    const struct replay *r;
    const struct gmap *m;
    const uint64_t *rkey;       /* the replay's records' keys */
    int32_t *node_rec;          /* node -> replay-local record, -1 */
};

/* 1 when every timed predecessor of v is mapped (and, strict, ended by ts + eps);
 * *same_stream: one of their records ran on `stream`. */
static int ready(const struct walk_state *w, uint32_t v, const struct kev *k, int strict,
                 int *same_stream)
{
    const struct graph *g = w->m->g;
    *same_stream = 0;
    for (uint32_t i = g->tp_off[v]; i < g->tp_off[v + 1]; i++) {
        int32_t pr = w->node_rec[g->tp[i]];
        const struct kev *p;
        if (pr < 0)
            return 0;
        p = rec_of(w->a, w->r, (uint32_t)pr);
        if (strict && kev_end(p) > k->ts + w->a->eps)
            return 0;
        *same_stream |= p->stream == k->stream;
    }
    return 1;
}

/* v and u are alike and hang from the same timed predecessors: swapping them changes
 * no record's predecessors (alike nodes below different predecessors are told apart
 * by those predecessors' records: not interchangeable). */
static int interchangeable(const struct gmap *m, uint32_t v, uint32_t u)
{
    return m->sig[v] == m->sig[u] && m->preds[v] == m->preds[u];
}

static enum choice choose(const struct walk_state *w, uint32_t i, long *out)
{
    const struct kev *k = rec_of(w->a, w->r, i);
    const struct graph *g = w->m->g;
    uint64_t key = w->rkey[i];
    long best = -1, by_stream = -1;
    uint32_t n = 0, n_stream = 0;
    int alike = 1, same;
    for (int strict = 1; strict >= 0 && n == 0; strict--)
        for (uint32_t v = 0; v < g->n; v++) {
            if (!g->nodes[v].timed || w->node_rec[v] >= 0 || w->m->key[v] != key
                || !ready(w, v, k, strict, &same))
                continue;
            if (best < 0)
                best = v;
            else if (!strict || !interchangeable(w->m, v, (uint32_t)best))
                alike = 0;
            if (same && n_stream++ == 0)
                by_stream = v;
            n++;
        }
    if (n == 0)
        return CH_NONE;
    if (n == 1 || alike) {
        *out = best;
        return CH_EXACT;
    }
    *out = by_stream >= 0 ? by_stream : best;
    return n_stream == 1 ? CH_STREAM : CH_AMBIGUOUS;
}

static void map_replay(struct analysis *a, struct group *grp, const struct replay *r,
                       const struct maps *ms, size_t gi, int32_t *node_rec)
{
    struct walk_state w = { a, r, &ms->m[gi], ms->rkey + r->first, node_rec };
    for (uint32_t v = 0; v < w.m->g->n; v++)
        node_rec[v] = -1;
    for (uint32_t i = 0; i < r->count; i++) {
        long v = -1;
        enum choice c = choose(&w, i, &v);
        int32_t *slot = &a->map_node[r->first + i];
        *slot = -1;
        grp->map_exact += c == CH_EXACT;
        grp->map_stream += c == CH_STREAM;
        grp->map_ambiguous += c == CH_AMBIGUOUS;
        grp->map_unmapped += c == CH_NONE;
        if (c == CH_NONE)
            continue;
        node_rec[v] = (int32_t)i;
        *slot = (int32_t)v | (c == CH_AMBIGUOUS ? MAP_AMBIGUOUS : 0);
    }
}

/* The first graph file a group's records match, mapped replay by replay. */
static int map_group(struct analysis *a, struct group *grp, const struct maps *ms)
{
    const struct replay *first = &a->replays[grp->first_replay];
    for (size_t gi = 0; gi < a->gs->n; gi++) {
        int32_t *node_rec;
        int m = replay_matches(ms, first, gi);
        if (m < 0)
            return -1;
        if (!m)
            continue;
        node_rec = malloc(((size_t)a->gs->g[gi].n + 1) * sizeof *node_rec);
        if (node_rec == NULL)
            return -1;
        grp->g = &a->gs->g[gi];
        grp->mapped = 1;
        for (uint32_t k = 0; k < grp->replays; k++)
            map_replay(a, grp, &a->replays[grp->first_replay + k], ms, gi, node_rec);
        free(node_rec);
        return 0;
    }
    return 0;
}

/* Each graph's map and sorted keys. */
static int maps_of_graphs(struct maps *ms, const struct graphset *gs,
                          const struct name_keys *names)
{
    for (size_t i = 0; i < gs->n; i++)
        if (gmap_init(&ms->m[i], gs, names, &gs->g[i]) != 0
            || (ms->keys[i] = graph_keys(&ms->m[i], &ms->n_keys[i])) == NULL)
            return -1;
    return 0;
}

/* 1 when key is some graph's kernel name (a kernel of the program, not the driver's). */
static int graph_kernel(const struct maps *ms, size_t n_graphs, uint64_t key)
{
    for (size_t i = 0; i < n_graphs; i++)
        if (bsearch(&key, ms->keys[i], ms->n_keys[i], sizeof key, by_u64) != NULL)
            return 1;
    return 0;
}

/* A record's key: its name's (demangled), its kind's for a copy or memset record, or
 * for a kernel the driver runs a copy or memset node with. */
static uint64_t rec_key(const struct analysis *a, const struct maps *ms,
                        const struct name_keys *names, const struct kev *k)
{
    const char *s = strtab_get(&a->t->strs, k->name);
    uint64_t key, cls;
    if (k->kind != KEV_KERNEL)
        return k->kind == KEV_MEMCPY ? NAME_KEY_COPY : NAME_KEY_SET;
    if (s[0] == '\0')
        return name_key_plain(kev_kind_name(k->kind));
    key = name_key(names, k->name);
    cls = name_key_driver_class(s);
    return cls != 0 && !graph_kernel(ms, a->gs->n, key) ? cls : key;
}

/* Mangled names left as written: said once in the report. */
static void note_given_up(struct analysis *a, long n)
{
    if (n > 0)
        analysis_note(a, "the names of some kernels", "%ld mangled kernel names took too "
                      "long to demangle (a few bytes can stand for gigabytes), or no process "
                      "could be started to demangle them; they are compared as written", n);
}

/* Keys of the strings named by ids[0..n) of strs, demangled in one batch. */
static int keys_of(struct analysis *a, struct name_keys *names, const struct strtab *strs,
                   const uint32_t *ids, size_t n)
{
    int rc = name_keys_init(names, strs, ids, n);
    note_given_up(a, names->given_up);
    return rc;
}

/* Every launch group record's key. */
static int record_keys(struct analysis *a, struct maps *ms)
{
    struct name_keys names = { 0 };
    uint32_t *ids = malloc((a->n_order + 1) * sizeof *ids);
    int rc = -1;
    ms->rkey = malloc((a->n_order + 1) * sizeof *ms->rkey);
    for (size_t i = 0; ids != NULL && i < a->n_order; i++)
        ids[i] = a->t->ev[a->order[i]].name;
    if (ids != NULL && ms->rkey != NULL
        && keys_of(a, &names, &a->t->strs, ids, a->n_order) == 0) {
        for (size_t i = 0; i < a->n_order; i++)
            ms->rkey[i] = rec_key(a, ms, &names, &a->t->ev[a->order[i]]);
        rc = 0;
    }
    name_keys_free(&names);
    free(ids);
    return rc;
}

/* Every graph node's name (its type when it has none), for keys_of. */
static uint32_t *graph_name_ids(const struct graphset *gs, size_t *n)
{
    size_t total = 0;
    uint32_t *ids;
    for (size_t i = 0; i < gs->n; i++)
        total += gs->g[i].n;
    if ((ids = malloc((total + 1) * sizeof *ids)) == NULL)
        return NULL;
    *n = 0;
    for (size_t i = 0; i < gs->n; i++)
        for (uint32_t v = 0; v < gs->g[i].n; v++) {
            const struct gnode *nd = &gs->g[i].nodes[v];
            ids[(*n)++] = nd->name ? nd->name : nd->type;
        }
    return ids;
}

static int maps_init(struct maps *ms, struct analysis *a)
{
    struct name_keys names = { 0 };
    size_t n = a->gs->n, n_ids = 0;
    uint32_t *ids;
    int rc = -1;
    ms->m = calloc(n, sizeof *ms->m);
    ms->keys = calloc(n, sizeof *ms->keys);
    ms->n_keys = calloc(n, sizeof *ms->n_keys);
    ms->rkey = NULL;
    ids = graph_name_ids(a->gs, &n_ids);
    if (ms->m != NULL && ms->keys != NULL && ms->n_keys != NULL && ids != NULL
        && keys_of(a, &names, &a->gs->strs, ids, n_ids) == 0)
        rc = maps_of_graphs(ms, a->gs, &names);
    name_keys_free(&names);
    free(ids);
    return rc == 0 ? record_keys(a, ms) : -1;
}

static void maps_free(struct maps *ms, size_t n)
{
    for (size_t i = 0; ms->m != NULL && ms->keys != NULL && i < n; i++) {
        gmap_free(&ms->m[i]);
        free(ms->keys[i]);
    }
    free(ms->m);
    free(ms->keys);
    free(ms->n_keys);
    free(ms->rkey);
}

int node_map_build(struct analysis *a)
{
    struct maps ms;
    int rc;
    if (a->by_graph || a->gs->n == 0 || a->n_groups == 0)
        return 0;
    a->map_node = malloc((a->n_order + 1) * sizeof *a->map_node);
    rc = a->map_node == NULL ? -1 : maps_init(&ms, a);
    for (size_t i = 0; rc == 0 && i < a->n_order; i++)
        a->map_node[i] = -1;
    for (size_t i = 0; rc == 0 && i < a->n_groups; i++)
        rc = map_group(a, &a->groups[i], &ms);
    if (a->map_node != NULL)
        maps_free(&ms, a->gs->n);
    return rc;
}
