/* lanes.c -- lanes (hardware channels, or streams when the trace has no channel),
 * the interval walk that measures busy time and idle gaps, and the lane table of the
 * whole trace (its records sorted once, by lane rank and start). */
#include "analysis.h"
#include "keymap.h"
#include "vec.h"

#include <stdlib.h>
#include <string.h>

struct lane_key lane_of(const struct analysis *a, const struct kev *k)
{
    struct lane_key l = { k->device, k->stream };
    if (a->by_channel)
        l.id = (k->flags & KEV_CHANNEL) ? k->channel : LANE_NO_CHANNEL;
    return l;
}

int lane_cmp(const struct lane_key *x, const struct lane_key *y)
{
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_lane_start(const void *x, const void *y)
{
    const struct lane_rec *a = x, *b = y;
    int c = lane_cmp(&a->lane, &b->lane);
    if (c != 0)
        return c;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

void lane_recs_sort(struct lane_rec *r, size_t n)
{
    sort_n(r, n, sizeof *r, by_lane_start);
}

void walk_add(struct walk *w, int64_t start, int64_t end, int64_t eps)
{
    if (!w->started) {
        w->started = 1;
        w->first = w->cur_start = start;
        w->cur_end = end;
        return;
    }
    if (start > w->cur_end) {
        int64_t gap = start - w->cur_end;
        w->busy += w->cur_end - w->cur_start;
        w->idle += gap;
        if (gap > eps)
            w->gaps++;
        if (gap > w->max_gap)
            w->max_gap = gap;
        w->cur_start = start;
    }
    if (end > w->cur_end)
        w->cur_end = end;
}

void walk_end(struct walk *w)
{
    if (w->started)
        w->busy += w->cur_end - w->cur_start;
}

/* A record of the trace for the lane table, kept small: its lane's rank (lanes in
 * lane_cmp order), start and index; its end is read from the trace. */
struct rank_rec {
    uint32_t lane, idx;
    int64_t ts;
};

static int by_rank_start(const void *x, const void *y)
{
    const struct rank_rec *a = x, *b = y;
    if (a->lane != b->lane)
        return a->lane < b->lane ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int by_lane(const void *x, const void *y)
{
    const struct lane_total *a = x, *b = y;
    return lane_cmp(&a->lane, &b->lane);
}

/* The distinct lanes, sorted, into a->lanes; r[k].lane: record k's lane's rank. */
static int rank_lanes(struct analysis *a, struct rank_rec *r, struct keymap *ids)
{
    const struct trace *t = a->t;
    size_t cap = 0;
    for (size_t k = 0; k < t->n; k++) {
        struct lane_key l = lane_of(a, &t->ev[k]);
        uint32_t i = keymap_get(ids, l.device, l.id);
        if (i == UINT32_MAX) {
            i = (uint32_t)a->n_lanes;
            if (vec_reserve(&a->lanes, &cap, a->n_lanes + 1, sizeof *a->lanes) != 0
                || keymap_put(ids, l.device, l.id, i) != 0)
                return -1;
            a->lanes[a->n_lanes++] = (struct lane_total){ .lane = l };
        }
        r[k] = (struct rank_rec){ i, (uint32_t)k, t->ev[k].ts };
    }
    sort_n(a->lanes, a->n_lanes, sizeof *a->lanes, by_lane);
    for (size_t i = 0; i < a->n_lanes; i++)
        if (keymap_put(ids, a->lanes[i].lane.device, a->lanes[i].lane.id, (uint32_t)i) != 0)
            return -1;
    for (size_t k = 0; k < t->n; k++) {
        struct lane_key l = lane_of(a, &t->ev[k]);
        r[k].lane = keymap_get(ids, l.device, l.id);
    }
    return 0;
}

int lanes_total(struct analysis *a)
{
    const struct trace *t = a->t;
    struct rank_rec *r = malloc((t->n + 1) * sizeof *r);
    struct keymap ids = { 0 };
    size_t i = 0;
    if (r == NULL || rank_lanes(a, r, &ids) != 0) {
        free(r);
        keymap_free(&ids);
        return -1;
    }
    keymap_free(&ids);
    sort_n(r, t->n, sizeof *r, by_rank_start);
    while (i < t->n) {
        struct lane_total *l = &a->lanes[r[i].lane];
        struct walk w = { 0 };
        l->last = kev_end(&t->ev[r[i].idx]);
        for (uint32_t lane = r[i].lane; i < t->n && r[i].lane == lane; i++) {
            int64_t end = kev_end(&t->ev[r[i].idx]);
            walk_add(&w, r[i].ts, end, a->eps);
            l->records++;
            l->last = end > l->last ? end : l->last;
        }
        walk_end(&w);
        l->busy = w.busy;
        l->first = w.first;
    }
    free(r);
    return 0;
}
