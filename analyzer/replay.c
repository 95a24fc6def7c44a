/* replay.c -- GPU records grouped into replays, and replays into groups.
 *
 * With graph keys: a replay is every record of one (graph id, correlation) -- all
 * kernels of one graph launch share the launch's correlation -- and a group is an
 * exec graph.  Without them: a replay is the records of one (device, correlation)
 * when there are two or more (an eager launch has a correlation of its own), and a
 * group is a launch shape: the same multiset of kernel names.  (Eager windows are
 * appended after these by eager.c.)  Also: which graph node a replay's record is. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

struct sort_rec {
    uint64_t k1;
    int64_t k2, ts;
    uint32_t idx;
};

static int by_keys(const void *x, const void *y)
{
    const struct sort_rec *a = x, *b = y;
    if (a->k1 != b->k1)
        return a->k1 < b->k1 ? -1 : 1;
    if (a->k2 != b->k2)
        return a->k2 < b->k2 ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The records that take part, sorted by (k1, k2, start); k1/k2 kept in keys. */
static struct sort_rec *sorted_records(struct analysis *a)
{
    const struct trace *t = a->t;
    struct sort_rec *s = malloc((t->n + 1) * sizeof *s);
    size_t n = 0;
    if (s == NULL)
        return NULL;
    for (size_t i = 0; i < t->n; i++) {
        const struct kev *k = &t->ev[i];
        uint8_t need = a->by_graph ? KEV_GRAPH | KEV_NODE | KEV_CORR : KEV_CORR;
        if ((k->flags & need) != need) {
            a->no_corr += a->by_graph && (k->flags & KEV_GRAPH) && !(k->flags & KEV_CORR);
            continue;
        }
        s[n].k1 = a->by_graph ? k->graph_id : (uint64_t)(uint32_t)k->device;
        s[n].k2 = k->corr;
        s[n].ts = k->ts;
        s[n].idx = (uint32_t)i;
        n++;
    }
    sort_n(s, n, sizeof *s, by_keys);
    a->n_order = n;
    return s;
}

/* Runs of equal (k1, k2) become replays (runs of one record only with graph keys);
 * order keeps only their records. */
static int cut_replays(struct analysis *a, const struct sort_rec *s)
{
    size_t n = a->n_order, i = 0, kept = 0;
    void *fit;
    a->order = malloc((n + 1) * sizeof *a->order);
    a->replays = malloc((n + 1) * sizeof *a->replays);
    if (a->order == NULL || a->replays == NULL)
        return -1;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && s[j].k1 == s[i].k1 && s[j].k2 == s[i].k2)
            j++;
        if (a->by_graph || j - i >= 2) {
            struct replay *r = &a->replays[a->n_replays++];
            memset(r, 0, sizeof *r);
            r->corr = s[i].k2;
            r->first = (uint32_t)kept;
            r->count = (uint32_t)(j - i);
            r->t0 = s[i].ts;
            for (size_t k = i; k < j; k++)
                a->order[kept++] = s[k].idx;
            for (size_t k = i; k < j && !a->by_graph; k++)
                a->t->ev[s[k].idx].flags |= KEV_GROUPED;
        }
        i = j;
    }
    a->n_order = kept;
    if ((fit = realloc(a->order, (kept + 1) * sizeof *a->order)) != NULL)
        a->order = fit;
    if ((fit = realloc(a->replays, (a->n_replays + 1) * sizeof *a->replays)) != NULL)
        a->replays = fit;
    return 0;
}

static int by_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* A launch shape: a hash of the sorted kernel names of one replay. */
static uint64_t shape_of(const struct analysis *a, const struct replay *r, uint32_t *tmp)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < r->count; i++)
        tmp[i] = a->t->ev[a->order[r->first + i]].name;
    sort_n(tmp, r->count, sizeof *tmp, by_u32);
    for (uint32_t i = 0; i < r->count; i++)
        h = (h ^ tmp[i]) * 1099511628211ull;
    return h ? h : 1;
}

static const uint64_t *sort_shapes;

static int by_shape(const void *x, const void *y)
{
    const struct replay *a = x, *b = y;
    uint64_t sa = sort_shapes[a->group], sb = sort_shapes[b->group];
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

/* Without graph keys: replays sorted by shape (group temporarily holds their
 * position, to look the shape up). */
static int sort_by_shape(struct analysis *a, uint64_t **shapes_out)
{
    uint64_t *shapes = malloc((a->n_replays + 1) * sizeof *shapes);
    uint32_t *tmp = malloc((a->n_order + 1) * sizeof *tmp);
    if (shapes == NULL || tmp == NULL) {
        free(shapes);
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < a->n_replays; i++) {
        shapes[i] = shape_of(a, &a->replays[i], tmp);
        a->replays[i].group = (uint32_t)i;
    }
    free(tmp);
    sort_shapes = shapes;
    sort_n(a->replays, a->n_replays, sizeof *a->replays, by_shape);
    *shapes_out = shapes;
    return 0;
}

static uint64_t group_key(const struct analysis *a, const struct replay *r,
                          const uint64_t *shapes)
{
    return a->by_graph ? a->t->ev[a->order[r->first]].graph_id : shapes[r->group];
}

static int cut_groups(struct analysis *a, const uint64_t *shapes)
{
    size_t i = 0;
    a->groups = calloc(a->n_replays + 1, sizeof *a->groups);
    if (a->groups == NULL)
        return -1;
    while (i < a->n_replays) {
        uint64_t key = group_key(a, &a->replays[i], shapes);
        size_t j = i;
        struct group *g = &a->groups[a->n_groups];
        while (j < a->n_replays && group_key(a, &a->replays[j], shapes) == key)
            a->replays[j++].group = (uint32_t)a->n_groups;
        g->id = key;
        g->by_graph = a->by_graph;
        g->g = a->by_graph ? graphset_find(a->gs, key) : NULL;
        g->first_replay = (uint32_t)i;
        g->replays = (uint32_t)(j - i);
        g->sample = a->order[a->replays[i].first];
        a->graphs_missing += a->by_graph && g->g == NULL;
        a->n_groups++;
        i = j;
    }
    return 0;
}

int replays_build(struct analysis *a)
{
    struct sort_rec *s = sorted_records(a);
    uint64_t *shapes = NULL;
    int rc = s == NULL ? -1 : cut_replays(a, s);
    free(s);
    if (rc == 0 && !a->by_graph)
        rc = sort_by_shape(a, &shapes);
    if (rc == 0)
        rc = cut_groups(a, shapes);
    free(shapes);
    return rc;
}

long replay_node(const struct analysis *a, const struct replay *r, const struct graph *g,
                 uint32_t i)
{
    if (g->positional)
        return i < g->n ? (long)i : -1;
    if (a->map_node != NULL && a->groups[r->group].mapped) {
        int32_t v = a->map_node[r->first + i];
        return v < 0 ? -1 : (long)(v & ~MAP_AMBIGUOUS);
    }
    return graph_find_node(g, a->t->ev[a->order[r->first + i]].node_id);
}

int replay_node_ambiguous(const struct analysis *a, const struct replay *r, uint32_t i)
{
    if (a->map_node == NULL || !a->groups[r->group].mapped)
        return 0;
    return a->map_node[r->first + i] >= 0 && (a->map_node[r->first + i] & MAP_AMBIGUOUS);
}

const int64_t *replay_floors(const struct analysis *a, const struct replay *r)
{
    if (a->eager_floor == NULL || r->first < a->eager_first)
        return NULL;
    return a->eager_floor + (r->first - a->eager_first);
}
