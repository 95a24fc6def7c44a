/* deps.c -- one replay: span and idle gaps, lanes, observed serializations and their
 * class, critical path, and the span estimated without false dependencies.
 *
 * A serialization is B starting within epsilon of A's end, A and B consecutive on
 * one channel; or B *queued* behind A: B started within epsilon of A's start, although
 * B had been ready for more than epsilon before A was, and A started as soon as it was
 * ready (it waited for its own predecessors): the channel's queue dispatched B only
 * after A.  An example: independent streams sharing a channel (eager
 * launches, CUDA_DEVICE_MAX_CONNECTIONS below the stream count) overlap a stream's
 * first kernel with the one before it, and the next stream's first kernel waits behind
 * that stream's second, which waits for its first: queued, not after an end.  It is true when the graph has a path A -> B; false when it has none
 * and B had waited more than epsilon since its last predecessor ended (or since the
 * replay began, for a root): B was ready and the channel held it back; ambiguous when
 * there is no path but B's predecessors ended too close to A's end to tell.
 *
 * Times of graph nodes: a node's "ready" time is the latest end among its timed
 * predecessors (through untimed nodes; a timed node missing from the replay passes
 * its predecessors' time through), or the replay start; in an eager window, no
 * earlier than its record's floor (its driver call's end, predecessors outside the
 * window: eager.c) instead of the start.  lag = start - ready.  The
 * estimate re-times the replay in topological order keeping every node's own lag,
 * except that a falsely delayed node gets the replay's median lag: with no false
 * dependency it reproduces the observed span exactly, so the gain is never negative. */
#include "analysis.h"
#include "vec.h"

#include <stdlib.h>
#include <string.h>

struct deps_scratch {
    uint32_t cap_nodes, cap_recs;
    int32_t *node_rec;          /* node -> replay-local record, -1 */
    int32_t *rec_node;          /* replay-local record -> node, -1 */
    int64_t *obs_end, *ready, *new_end, *cp, *lags;
    uint8_t *falsely;
    struct lane_rec *lr;
    const int64_t *floor;       /* eager windows: per replay-local record (else NULL) */
};

void *deps_scratch_new(void)
{
    return calloc(1, sizeof(struct deps_scratch));
}

void deps_scratch_free(void *p)
{
    struct deps_scratch *s = p;
    if (s == NULL)
        return;
    free(s->node_rec);
    free(s->rec_node);
    free(s->obs_end);
    free(s->ready);
    free(s->new_end);
    free(s->cp);
    free(s->lags);
    free(s->falsely);
    free(s->lr);
    free(s);
}

static int fit(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, (n + 1) * size);
    if (q == NULL)
        return -1;
    *p = q;
    return 0;
}

static int scratch_fit(struct deps_scratch *s, uint32_t nodes, uint32_t recs)
{
    if (nodes > s->cap_nodes) {
        if (fit((void **)&s->node_rec, nodes, sizeof *s->node_rec)
            || fit((void **)&s->obs_end, nodes, sizeof *s->obs_end)
            || fit((void **)&s->ready, nodes, sizeof *s->ready)
            || fit((void **)&s->new_end, nodes, sizeof *s->new_end)
            || fit((void **)&s->cp, nodes, sizeof *s->cp)
            || fit((void **)&s->falsely, nodes, sizeof *s->falsely))
            return -1;
        s->cap_nodes = nodes;
    }
    if (recs > s->cap_recs) {
        if (fit((void **)&s->rec_node, recs, sizeof *s->rec_node)
            || fit((void **)&s->lags, recs, sizeof *s->lags)
            || fit((void **)&s->lr, recs, sizeof *s->lr))
            return -1;
        s->cap_recs = recs;
    }
    return 0;
}

static const struct kev *rec(const struct analysis *a, const struct replay *r, uint32_t i)
{
    return &a->t->ev[a->order[r->first + i]];
}

/* Records -> graph nodes (first record of a node wins; others are duplicates). */
static void map_nodes(const struct analysis *a, struct replay *r, struct graph *g,
                      struct deps_scratch *s)
{
    for (uint32_t v = 0; v < g->n; v++)
        s->node_rec[v] = -1, s->falsely[v] = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        long v = replay_node(a, r, g, i);
        s->rec_node[i] = -1;
        if (v < 0 || !g->nodes[v].timed)
            r->unmatched++;
        else if (s->node_rec[v] >= 0)
            r->duplicates++;
        else
            s->node_rec[v] = (int32_t)i, s->rec_node[i] = (int32_t)v;
    }
}

/* The earliest a node can be ready: its record's floor in an eager window, else the
 * replay's start. */
static int64_t ready_base(const struct replay *r, const struct deps_scratch *s, uint32_t v)
{
    return s->floor != NULL && s->node_rec[v] >= 0 ? s->floor[s->node_rec[v]] : r->t0;
}

/* Observed ends (missing nodes pass their predecessors' time through) and ready times. */
static void observe(const struct analysis *a, const struct replay *r, struct graph *g,
                    struct deps_scratch *s)
{
    for (uint32_t k = 0; k < g->n; k++) {
        uint32_t v = g->topo[k];
        int64_t ready = ready_base(r, s, v);
        if (!g->nodes[v].timed)
            continue;
        for (uint32_t i = g->tp_off[v]; i < g->tp_off[v + 1]; i++)
            if (s->obs_end[g->tp[i]] > ready)
                ready = s->obs_end[g->tp[i]];
        s->ready[v] = ready;
        s->obs_end[v] = s->node_rec[v] >= 0 ? kev_end(rec(a, r, (uint32_t)s->node_rec[v]))
                                             : ready;
    }
}

static int push_ser(struct analysis *a, const struct ser *x)
{
    if (vec_reserve(&a->sers, &a->cap_sers, a->n_sers + 1, sizeof *a->sers) != 0)
        return -1;
    a->sers[a->n_sers++] = *x;
    return 0;
}

static int push_use(struct analysis *a, const struct lane_use *u)
{
    if (vec_reserve(&a->uses, &a->cap_uses, a->n_uses + 1, sizeof *a->uses) != 0)
        return -1;
    a->uses[a->n_uses++] = *u;
    return 0;
}

/* The class of "y started right after x" (replay-local record numbers). */
static int classify(struct analysis *a, const struct replay *r, struct graph *g,
                    struct deps_scratch *s, uint32_t x, uint32_t y, struct ser *out)
{
    int32_t nx = g ? s->rec_node[x] : -1, ny = g ? s->rec_node[y] : -1;
    int reach;
    out->wait = 0;
    out->cls = SER_UNKNOWN;
    out->a_node = out->b_node = SER_NO_NODE;
    if (nx < 0 || ny < 0)
        return 0;
    out->a_node = (uint32_t)nx;
    out->b_node = (uint32_t)ny;
    out->wait = rec(a, r, y)->ts - s->ready[ny];
    reach = graph_reaches(g, (uint32_t)nx, (uint32_t)ny);
    if (reach < 0)
        return -1;
    if (replay_node_ambiguous(a, r, x) || replay_node_ambiguous(a, r, y))
        out->cls = SER_AMBIGUOUS;       /* which node a record is was a guess */
    else if (reach)
        out->cls = SER_TRUE;
    else if (out->wait > a->eps)
        out->cls = SER_FALSE, s->falsely[ny] = 1;
    else
        out->cls = SER_AMBIGUOUS;
    return 0;
}

/* y dispatched right after x although ready well before it (see the top). */
static int queued_behind(const struct analysis *a, const struct graph *g,
                         const struct deps_scratch *s, const struct lane_rec *x,
                         const struct lane_rec *y)
{
    int32_t nx = g ? s->rec_node[x->idx] : -1, ny = g ? s->rec_node[y->idx] : -1;
    if (nx < 0 || ny < 0 || y->ts - x->ts > a->eps)
        return 0;
    return s->ready[ny] < s->ready[nx] - a->eps && x->ts - s->ready[nx] <= a->eps;
}

/* Serializations between consecutive records lr[i-1], lr[i] of one lane. */
static int lane_pair(struct analysis *a, struct replay *r, struct graph *g,
                     struct deps_scratch *s, uint32_t i)
{
    const struct lane_rec *x = &s->lr[i - 1], *y = &s->lr[i];
    struct ser z = { .a = a->order[r->first + x->idx], .b = a->order[r->first + y->idx],
                     .replay = (uint32_t)(r - a->replays), .gap = y->ts - x->end };
    if (z.gap < -a->eps || z.gap > a->eps) {
        if (!queued_behind(a, g, s, x, y))
            return 0;
        z.queued = 1;
    }
    if (classify(a, r, g, s, x->idx, y->idx, &z) != 0 || push_ser(a, &z) != 0)
        return -1;
    r->n_cls[z.cls]++;
    r->ser_count++;
    return 0;
}

/* Without channels, in a launch group mapped by name (node_map.c): y started within
 * epsilon of the end of x, a record of the replay that started before it (on any
 * stream of the device), an ancestor of y when one qualifies, else the one that ended
 * nearest y's start: the serialization a channel would show, inferred. */
static int inferred_sers(struct analysis *a, struct replay *r, struct graph *g,
                         struct deps_scratch *s)
{
    r->ser_first = (uint32_t)a->n_sers;
    for (uint32_t y = 0; y < r->count; y++) {
        const struct kev *ey = rec(a, r, y);
        int64_t best_gap = INT64_MAX;
        uint32_t best = y;
        int best_path = 0;
        for (uint32_t x = 0; x < r->count; x++) {
            const struct kev *ex = rec(a, r, x);
            int64_t gap = ey->ts - kev_end(ex);
            int path;
            if (x == y || ex->ts >= ey->ts || ex->device != ey->device || gap > a->eps
                || gap < -a->eps)
                continue;
            path = s->rec_node[x] >= 0 && s->rec_node[y] >= 0
                   && graph_reaches(g, (uint32_t)s->rec_node[x], (uint32_t)s->rec_node[y]) == 1;
            gap = gap < 0 ? -gap : gap;
            if (path < best_path || (path == best_path && gap >= best_gap))
                continue;
            best_gap = gap;
            best_path = path;
            best = x;
        }
        if (best == y)
            continue;
        struct ser z = { .a = a->order[r->first + best], .b = a->order[r->first + y],
                         .replay = (uint32_t)(r - a->replays),
                         .gap = ey->ts - kev_end(rec(a, r, best)) };
        if (classify(a, r, g, s, best, y, &z) != 0 || push_ser(a, &z) != 0)
            return -1;
        r->n_cls[z.cls]++;
        r->ser_count++;
    }
    return 0;
}

/* Per lane: busy time (a lane_use) and, on channels, serializations. */
static int lanes_of_replay(struct analysis *a, struct replay *r, struct graph *g,
                           struct deps_scratch *s)
{
    uint32_t i = 0;
    for (uint32_t k = 0; k < r->count; k++) {
        const struct kev *e = rec(a, r, k);
        s->lr[k] = (struct lane_rec){ lane_of(a, e), e->ts, kev_end(e), k };
    }
    lane_recs_sort(s->lr, r->count);
    r->ser_first = (uint32_t)a->n_sers;
    while (i < r->count) {
        struct lane_use u = { r->group, s->lr[i].lane, 0, 0 };
        struct walk w = { 0 };
        for (; i < r->count && lane_cmp(&s->lr[i].lane, &u.lane) == 0; i++, u.records++) {
            walk_add(&w, s->lr[i].ts, s->lr[i].end, a->eps);
            if (u.records > 0 && a->by_channel && u.lane.id != LANE_NO_CHANNEL
                && lane_pair(a, r, g, s, i) != 0)
                return -1;
        }
        walk_end(&w);
        u.busy = w.busy;
        r->lanes++;
        if (push_use(a, &u) != 0)
            return -1;
    }
    return 0;
}

static int by_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Lags of nodes that were not falsely delayed: the median of those with
 * predecessors (*dep) and the smallest of roots' (*root). */
static void typical_lags(const struct analysis *a, const struct replay *r,
                         const struct graph *g, struct deps_scratch *s, int64_t *dep,
                         int64_t *root)
{
    uint32_t n = 0;
    *root = INT64_MAX;
    for (uint32_t v = 0; v < g->n; v++) {
        if (s->node_rec[v] < 0 || s->falsely[v])
            continue;
        int64_t lag = rec(a, r, (uint32_t)s->node_rec[v])->ts - s->ready[v];
        if (g->tp_off[v] == g->tp_off[v + 1])
            *root = lag < *root ? lag : *root;
        else
            s->lags[n++] = lag;
    }
    sort_n(s->lags, n, sizeof *s->lags, by_i64);
    *dep = n ? s->lags[n / 2] : 0;
    *root = *root == INT64_MAX ? 0 : *root;
}

/* Critical path (sum of measured durations) and the re-timed span. */
static void retime(const struct analysis *a, struct replay *r, const struct graph *g,
                   struct deps_scratch *s, int64_t t1_unmatched)
{
    int64_t dep_lag, root_lag, cp = 0, end = t1_unmatched;
    typical_lags(a, r, g, s, &dep_lag, &root_lag);
    for (uint32_t k = 0; k < g->n; k++) {
        uint32_t v = g->topo[k];
        int64_t ready = ready_base(r, s, v), path = 0;
        if (!g->nodes[v].timed)
            continue;
        for (uint32_t i = g->tp_off[v]; i < g->tp_off[v + 1]; i++) {
            uint32_t u = g->tp[i];
            ready = s->new_end[u] > ready ? s->new_end[u] : ready;
            path = s->cp[u] > path ? s->cp[u] : path;
        }
        s->new_end[v] = ready;
        s->cp[v] = path;
        if (s->node_rec[v] >= 0) {
            const struct kev *e = rec(a, r, (uint32_t)s->node_rec[v]);
            int64_t lag = e->ts - s->ready[v];
            int64_t typical = g->tp_off[v] == g->tp_off[v + 1] ? root_lag : dep_lag;
            if (s->falsely[v] && typical < lag)
                lag = typical;
            s->new_end[v] = ready + lag + e->dur;
            s->cp[v] = sat_add(path, e->dur);
            end = s->new_end[v] > end ? s->new_end[v] : end;
        }
        cp = s->cp[v] > cp ? s->cp[v] : cp;
    }
    r->cp = cp;
    r->has_cp = 1;
    r->est = end - r->t0;
    r->has_est = a->by_channel || a->groups[r->group].mapped || a->groups[r->group].eager;
}

/* Starts more than epsilon after the node was ready, whatever the cause. */
static void count_delays(const struct analysis *a, struct replay *r, const struct graph *g,
                         const struct deps_scratch *s)
{
    for (uint32_t v = 0; v < g->n; v++) {
        if (s->node_rec[v] < 0)
            continue;
        int64_t lag = rec(a, r, (uint32_t)s->node_rec[v])->ts - s->ready[v];
        if (lag > a->eps) {
            r->delayed++;
            r->delay = sat_add(r->delay, lag);
        }
    }
}

/* Span, idle time and gaps, the records walked in start order (an eager window's are
 * in correlation order: sorted here). */
static void span_of(const struct analysis *a, struct replay *r, struct deps_scratch *s)
{
    struct walk w = { 0 };
    int64_t t1 = r->t0;
    for (uint32_t k = 0; k < r->count; k++) {
        const struct kev *e = rec(a, r, k);
        s->lr[k] = (struct lane_rec){ { 0, 0 }, e->ts, kev_end(e), k };
        t1 = kev_end(e) > t1 ? kev_end(e) : t1;
    }
    if (s->floor != NULL)
        lane_recs_sort(s->lr, r->count);
    for (uint32_t k = 0; k < r->count; k++)
        walk_add(&w, s->lr[k].ts, s->lr[k].end, a->eps);
    walk_end(&w);
    r->span = t1 - r->t0;
    r->idle = w.idle;
    r->gaps = w.gaps;
    r->max_gap = w.max_gap;
}

int deps_replay(struct analysis *a, struct replay *r, struct group *grp, void *scratch)
{
    struct deps_scratch *s = scratch;
    struct graph *g = grp->g;
    int64_t t1_unmatched = r->t0;
    if (scratch_fit(s, g ? g->n : 0, r->count) != 0)
        return -1;
    s->floor = replay_floors(a, r);
    span_of(a, r, s);
    if (g != NULL) {
        map_nodes(a, r, g, s);
        observe(a, r, g, s);
    }
    if (lanes_of_replay(a, r, g, s) != 0)
        return -1;
    if ((grp->mapped || grp->eager) && !a->by_channel && inferred_sers(a, r, g, s) != 0)
        return -1;
    if (g == NULL)
        return 0;
    for (uint32_t i = 0; i < r->count; i++)
        if (s->rec_node[i] < 0 && kev_end(rec(a, r, i)) > t1_unmatched)
            t1_unmatched = kev_end(rec(a, r, i));
    retime(a, r, g, s, t1_unmatched);
    count_delays(a, r, g, s);
    return 0;
}
