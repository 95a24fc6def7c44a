/* lanes.c -- lanes (hardware channels, or streams when the trace has no channel),
 * the interval walk that measures busy time and idle gaps, and the lane table of the
 * whole trace. */
#include "analysis.h"

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

int lanes_total(struct analysis *a)
{
    const struct trace *t = a->t;
    struct lane_rec *r = malloc((t->n + 1) * sizeof *r);
    size_t i = 0;
    a->lanes = calloc(t->n + 1, sizeof *a->lanes);
    if (r == NULL || a->lanes == NULL) {
        free(r);
        return -1;
    }
    for (size_t k = 0; k < t->n; k++) {
        r[k].lane = lane_of(a, &t->ev[k]);
        r[k].ts = t->ev[k].ts;
        r[k].end = kev_end(&t->ev[k]);
        r[k].idx = (uint32_t)k;
    }
    lane_recs_sort(r, t->n);
    while (i < t->n) {
        struct lane_total *l = &a->lanes[a->n_lanes++];
        struct walk w = { 0 };
        l->lane = r[i].lane;
        l->last = r[i].end;
        for (; i < t->n && lane_cmp(&r[i].lane, &l->lane) == 0; i++) {
            walk_add(&w, r[i].ts, r[i].end, a->eps);
            l->records++;
            l->last = r[i].end > l->last ? r[i].end : l->last;
        }
        walk_end(&w);
        l->busy = w.busy;
        l->first = w.first;
    }
    free(r);
    return 0;
}
