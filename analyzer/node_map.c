/* node_map.c -- launch groups (records sharing a correlation, no graph keys: PyTorch
 * 2.11's profiler traces of CUDA graph replays) mapped to graph files' nodes by kernel
 * name, launch order and dependency order (analyzer/FORMAT.md, "Replays without node
 * ids").
 *
 * A group matches the first graph file whose timed nodes have the same multiset of
 * kernel base names as its records (mangled and demangled names compare alike).  Each
 * replay is then walked in start order; a record takes an unmapped node of its name
 * whose timed predecessors are all mapped and had ended by its start (plus epsilon): a
 * topological order consistent with the observed starts.  The choice is *exact* when
 * one node qualifies, or when all that qualify are structurally alike (same name, same
 * shape of ancestors and descendants: swapping them changes nothing); *by stream* when
 * one of them has a predecessor whose record ran on the record's stream (a captured
 * branch keeps its internal stream); *ambiguous* otherwise (the lowest such node is
 * taken, and serializations that involve the record are classed ambiguous). */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h;
}

/* The last <length><identifier> of an Itanium-mangled name's prefix ("_Z...").  */
static uint64_t mangled_base(const char *s)
{
    const char *p = s + 2, *best = NULL;
    size_t best_n = 0;
    if (*p == 'N')
        p++;
    while (*p >= '0' && *p <= '9') {
        size_t n = 0;
        while (*p >= '0' && *p <= '9')
            n = n * 10 + (size_t)(*p++ - '0');
        if (n == 0 || strnlen(p, n) < n)
            break;
        best = p;
        best_n = n;
        p += n;
    }
    return best ? fnv(best, best_n) : fnv(s, strlen(s));
}

/* A kernel name's base: the identifier before its template arguments or parameters,
 * without return type and namespaces ("void at::k<4>(int)" and "_ZN2at1kILi4EEvi"
 * both give "k"). */
uint64_t node_map_key(const char *name)
{
    const char *end, *beg;
    if (name[0] == '_' && name[1] == 'Z')
        return mangled_base(name);
    end = name + strcspn(name, "<(");
    beg = end;
    while (beg > name && beg[-1] != ' ' && beg[-1] != ':')
        beg--;
    return end > beg ? fnv(beg, (size_t)(end - beg)) : fnv(name, strlen(name));
}

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

/* Per graph: each node's name key and structural signature. */
struct gmap {
    const struct graph *g;
    uint64_t *key, *sig;
};

static int gmap_init(struct gmap *m, const struct graphset *gs, const struct graph *g)
{
    uint64_t *up = calloc((size_t)g->n + 1, sizeof *up), *down;
    m->g = g;
    m->key = calloc((size_t)g->n + 1, sizeof *m->key);
    m->sig = calloc((size_t)g->n + 1, sizeof *m->sig);
    down = calloc((size_t)g->n + 1, sizeof *down);
    if (up == NULL || down == NULL || m->key == NULL || m->sig == NULL) {
        free(up);
        free(down);
        return -1;
    }
    for (uint32_t v = 0; v < g->n; v++) {
        const struct gnode *nd = &g->nodes[v];
        m->key[v] = node_map_key(strtab_get(&gs->strs, nd->name ? nd->name : nd->type));
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

static void gmap_free(struct gmap *m)
{
    free(m->key);
    free(m->sig);
}

/* The sorted keys of a graph's timed nodes, or of a replay's records. */
static uint64_t *graph_keys(const struct gmap *m, uint32_t *n)
{
    uint64_t *k = malloc(((size_t)m->g->n + 1) * sizeof *k);
    *n = 0;
    if (k == NULL)
        return NULL;
    for (uint32_t v = 0; v < m->g->n; v++)
        if (m->g->nodes[v].timed)
            k[(*n)++] = m->key[v];
    qsort(k, *n, sizeof *k, by_u64);
    return k;
}

static const struct kev *rec_of(const struct analysis *a, const struct replay *r, uint32_t i)
{
    return &a->t->ev[a->order[r->first + i]];
}

static uint64_t rec_key(const struct analysis *a, const struct kev *k)
{
    const char *s = strtab_get(&a->t->strs, k->name);
    return node_map_key(s[0] ? s : kev_kind_name(k->kind));
}

static int replay_matches(const struct analysis *a, const struct replay *r,
                          const uint64_t *gkeys, uint32_t n)
{
    uint64_t *k;
    int same;
    if (r->count != n)
        return 0;
    if ((k = malloc(((size_t)n + 1) * sizeof *k)) == NULL)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        k[i] = rec_key(a, rec_of(a, r, i));
    qsort(k, n, sizeof *k, by_u64);
    same = n == 0 || memcmp(k, gkeys, n * sizeof *k) == 0;
    free(k);
    return same;
}

enum choice { CH_EXACT, CH_STREAM, CH_AMBIGUOUS, CH_NONE };

struct walk_state {
    const struct analysis *a;
    const struct replay *r;
    const struct gmap *m;
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

static enum choice choose(const struct walk_state *w, uint32_t i, long *out)
{
    const struct kev *k = rec_of(w->a, w->r, i);
    const struct graph *g = w->m->g;
    uint64_t key = rec_key(w->a, k);
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
            else if (w->m->sig[v] != w->m->sig[best] || !strict)
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
                       const struct gmap *m, int32_t *node_rec)
{
    struct walk_state w = { a, r, m, node_rec };
    for (uint32_t v = 0; v < m->g->n; v++)
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
static int map_group(struct analysis *a, struct group *grp, struct gmap *maps, uint64_t **keys,
                     const uint32_t *n_keys)
{
    const struct replay *first = &a->replays[grp->first_replay];
    for (size_t gi = 0; gi < a->gs->n; gi++) {
        int32_t *node_rec;
        int m = replay_matches(a, first, keys[gi], n_keys[gi]);
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
            map_replay(a, grp, &a->replays[grp->first_replay + k], &maps[gi], node_rec);
        free(node_rec);
        return 0;
    }
    return 0;
}

int node_map_build(struct analysis *a)
{
    size_t n = a->gs->n;
    struct gmap *maps;
    uint64_t **keys;
    uint32_t *n_keys;
    int rc = 0;
    if (a->by_graph || n == 0 || a->n_groups == 0)
        return 0;
    a->map_node = malloc((a->n_order + 1) * sizeof *a->map_node);
    maps = calloc(n, sizeof *maps);
    keys = calloc(n, sizeof *keys);
    n_keys = calloc(n, sizeof *n_keys);
    if (a->map_node == NULL || maps == NULL || keys == NULL || n_keys == NULL)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (gmap_init(&maps[i], a->gs, &a->gs->g[i]) != 0
            || (keys[i] = graph_keys(&maps[i], &n_keys[i])) == NULL)
            rc = -1;
    for (size_t i = 0; rc == 0 && i < a->n_order; i++)
        a->map_node[i] = -1;
    for (size_t i = 0; rc == 0 && i < a->n_groups; i++)
        rc = map_group(a, &a->groups[i], maps, keys, n_keys);
    for (size_t i = 0; maps != NULL && keys != NULL && i < n; i++) {
        gmap_free(&maps[i]);
        free(keys[i]);
    }
    free(maps);
    free(keys);
    free(n_keys);
    return rc;
}
