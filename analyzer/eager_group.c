/* eager_group.c -- eager windows grouped by shape: the sequence of (stream, name) of
 * their records and their edges, hashed (64 bits) and compared in full where hashes
 * meet.  The first window of a shape becomes a positional graph (node v = the window's
 * v-th record), which every window of that shape is analysed against, as an exec
 * graph's replays are; then the shapes become groups of the analysis. */
#include "eager.h"

#include "vec.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static uint64_t shape_hash(const struct trace *t, const struct eager_window *w)
{
    uint64_t h = mix(mix(0x243f6a8885a308d3ull, w->n), w->m);
    for (uint32_t i = 0; i < w->n; i++)
        h = mix(mix(h, (uint64_t)t->ev[w->ev[i]].stream), t->ev[w->ev[i]].name);
    for (uint32_t e = 0; e < w->m; e++)
        h = mix(h, (uint64_t)w->from[e] << 32 | w->to[e]);
    return h;
}

static int same_shape(const struct graph *g, const struct trace *t, const struct eager_window *w)
{
    struct edge_iter it = { 0, 0 };
    uint32_t from, to;
    if (g->n != w->n || g->m != w->m)
        return 0;
    for (uint32_t v = 0; v < w->n; v++)
        if (g->nodes[v].stream != t->ev[w->ev[v]].stream || g->nodes[v].name != t->ev[w->ev[v]].name)
            return 0;
    for (uint32_t e = 0; graph_next_edge(g, &it, &from, &to); e++)
        if (from != w->from[e] || to != w->to[e])
            return 0;
    return 1;
}

/* The window's graph: its records as timed nodes, in order, and its edges. */
static struct graph *window_graph(const struct trace *t, const struct eager_window *w,
                                  uint64_t hash)
{
    struct graph *g = calloc(1, sizeof *g);
    uint32_t bad;
    if (g == NULL)
        return NULL;
    g->nodes = calloc((size_t)w->n + 1, sizeof *g->nodes);
    g->from = malloc(((size_t)w->m + 1) * sizeof *g->from);
    g->to = malloc(((size_t)w->m + 1) * sizeof *g->to);
    if (g->nodes != NULL && g->from != NULL && g->to != NULL) {
        for (uint32_t v = 0; v < w->n; v++)
            g->nodes[v] = (struct gnode){ .stream = t->ev[w->ev[v]].stream, .node_id = v,
                                          .name = t->ev[w->ev[v]].name, .timed = 1 };
        if (w->m > 0) {         /* (a window without edges may have no edge buffers) */
            memcpy(g->from, w->from, w->m * sizeof *w->from);
            memcpy(g->to, w->to, w->m * sizeof *w->to);
        }
        g->n = w->n;
        g->m = w->m;
        g->positional = 1;
        g->exec_id = hash;
        if (graph_finish(g, &bad) == GRAPH_OK)
            return g;
    }
    graph_free(g);
    free(g);
    return NULL;
}

/* The shape of the window (a new one when none matches); UINT32_MAX out of memory. */
static uint32_t shape_of(struct eager_collect *c, const struct trace *t,
                         const struct eager_window *w)
{
    uint64_t hash = shape_hash(t, w);
    int64_t k = 0;
    uint32_t i;
    struct eager_shape *s;
    for (; (i = keymap_get(&c->by_hash, (int64_t)hash, k)) != UINT32_MAX; k++)
        if (same_shape(c->shapes[i].g, t, w))
            return i;
    if (vec_reserve(&c->shapes, &c->cap_shapes, c->n_shapes + 1, sizeof *c->shapes) != 0
        || keymap_put(&c->by_hash, (int64_t)hash, k, (uint32_t)c->n_shapes) != 0)
        return UINT32_MAX;
    s = &c->shapes[c->n_shapes];
    *s = (struct eager_shape){ window_graph(t, w, hash), hash, w->device, w->streams, 0 };
    if (s->g == NULL)
        return UINT32_MAX;
    return (uint32_t)c->n_shapes++;
}

int eager_collect_add(struct eager_collect *c, struct analysis *a, const struct eager_window *w)
{
    uint32_t shape = shape_of(c, a->t, w);
    struct replay *r;
    if (shape == UINT32_MAX
        || vec_reserve(&c->windows, &c->cap_windows, c->n_windows + 1, sizeof *c->windows) != 0)
        return -1;
    c->shapes[shape].windows++;
    r = &c->windows[c->n_windows++];
    *r = (struct replay){ .group = shape, .corr = a->t->ev[w->ev[0]].corr,
                          .first = (uint32_t)a->n_order, .count = w->n, .t0 = w->t0 };
    memcpy(a->order + a->n_order, w->ev, w->n * sizeof *w->ev);
    memcpy(a->eager_floor + (a->n_order - a->eager_first), w->floor, w->n * sizeof *w->floor);
    a->n_order += w->n;
    return 0;
}

static const struct eager_shape *sort_shapes;

/* Most windows first, then in the order they first appeared. */
static int by_windows(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    if (sort_shapes[i].windows != sort_shapes[j].windows)
        return sort_shapes[i].windows > sort_shapes[j].windows ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* By group (a rank by then), then start. */
static int by_group_start(const void *x, const void *y)
{
    const struct replay *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

/* rank[shape]: its place among the groups to come. */
static uint32_t *shape_ranks(const struct eager_collect *c)
{
    uint32_t *order = malloc((c->n_shapes + 1) * sizeof *order);
    uint32_t *rank = malloc((c->n_shapes + 1) * sizeof *rank);
    if (order != NULL && rank != NULL) {
        for (uint32_t i = 0; i < c->n_shapes; i++)
            order[i] = i;
        sort_shapes = c->shapes;
        sort_n(order, c->n_shapes, sizeof *order, by_windows);
        for (uint32_t k = 0; k < c->n_shapes; k++)
            rank[order[k]] = k;
    }
    free(order);
    if (order == NULL) {
        free(rank);
        return NULL;
    }
    return rank;
}

static int make_room(struct analysis *a, size_t groups, size_t replays)
{
    struct group *g = realloc(a->groups, (a->n_groups + groups + 1) * sizeof *g);
    struct replay *r;
    if (g == NULL)
        return -1;
    a->groups = g;
    memset(g + a->n_groups, 0, (groups + 1) * sizeof *g);
    r = realloc(a->replays, (a->n_replays + replays + 1) * sizeof *r);
    if (r == NULL)
        return -1;
    a->replays = r;
    return 0;
}

/* The windows, sorted by group, become replays; their groups point at them. */
static void add_groups(struct eager_collect *c, struct analysis *a, const uint32_t *rank)
{
    size_t base = a->n_groups;
    for (uint32_t i = 0; i < c->n_shapes; i++) {
        struct group *g = &a->groups[base + rank[i]];
        g->id = c->shapes[i].hash;
        g->eager = 1;
        g->g = c->shapes[i].g;
        g->device = c->shapes[i].device;
        g->streams = c->shapes[i].streams;
        c->shapes[i].g = NULL;
    }
    for (size_t k = 0; k < c->n_windows; k++) {
        struct replay *r = &a->replays[a->n_replays];
        struct group *g = &a->groups[base + c->windows[k].group];
        *r = c->windows[k];
        r->group = (uint32_t)(base + c->windows[k].group);
        if (g->replays++ == 0) {
            g->first_replay = (uint32_t)a->n_replays;
            g->sample = a->order[r->first];
        }
        a->n_replays++;
    }
    a->n_groups += c->n_shapes;
}

int eager_collect_finish(struct eager_collect *c, struct analysis *a)
{
    uint32_t *rank = shape_ranks(c);
    if (rank == NULL || make_room(a, c->n_shapes, c->n_windows) != 0) {
        free(rank);
        return -1;
    }
    for (size_t k = 0; k < c->n_windows; k++)
        c->windows[k].group = rank[c->windows[k].group];
    sort_n(c->windows, c->n_windows, sizeof *c->windows, by_group_start);
    add_groups(c, a, rank);
    a->eager.groups = c->n_shapes;
    free(rank);
    return 0;
}

void eager_collect_free(struct eager_collect *c)
{
    for (size_t i = 0; i < c->n_shapes; i++)
        if (c->shapes[i].g != NULL) {
            graph_free(c->shapes[i].g);
            free(c->shapes[i].g);
        }
    free(c->shapes);
    free(c->windows);
    keymap_free(&c->by_hash);
    memset(c, 0, sizeof *c);
}
