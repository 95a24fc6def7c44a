/* aggregate.c -- per group (exec graph, launch or window shape): replay statistics summed,
 * lane occupancy summed over replays, and false dependencies gathered by node pair. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

static void sum_replays(struct analysis *a, struct group *g)
{
    g->span_min = INT64_MAX;
    for (uint32_t i = 0; i < g->replays; i++) {
        const struct replay *r = &a->replays[g->first_replay + i];
        g->span_sum = sat_add(g->span_sum, r->span);
        g->span_min = r->span < g->span_min ? r->span : g->span_min;
        g->span_max = r->span > g->span_max ? r->span : g->span_max;
        g->idle_sum = sat_add(g->idle_sum, r->idle);
        g->cp_sum = sat_add(g->cp_sum, r->has_cp ? r->cp : 0);
        g->n_cp += r->has_cp;
        g->est_sum = sat_add(g->est_sum, r->has_est ? r->est : 0);
        g->n_est += r->has_est;
        g->unmatched += r->unmatched;
        g->delayed += r->delayed;
        for (int c = 0; c < SER_CLASSES; c++)
            g->n_cls[c] += r->n_cls[c];
    }
}

static int by_group_lane(const void *x, const void *y)
{
    const struct lane_use *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return lane_cmp(&a->lane, &b->lane);
}

/* Lane uses sorted by (group, lane), then summed into each group's table. */
static int sum_lanes(struct analysis *a)
{
    size_t i = 0;
    sort_n(a->uses, a->n_uses, sizeof *a->uses, by_group_lane);
    while (i < a->n_uses) {
        struct group *g = &a->groups[a->uses[i].group];
        size_t j = i, n = 0;
        while (j < a->n_uses && a->uses[j].group == a->uses[i].group)
            j++;
        g->lanes = calloc(j - i, sizeof *g->lanes);
        if (g->lanes == NULL)
            return -1;
        for (size_t k = i; k < j; k++) {
            if (k == i || lane_cmp(&a->uses[k].lane, &g->lanes[n - 1].lane) != 0)
                g->lanes[n++].lane = a->uses[k].lane;
            g->lanes[n - 1].busy = sat_add(g->lanes[n - 1].busy, a->uses[k].busy);
            g->lanes[n - 1].replays++;
            g->lanes[n - 1].records += a->uses[k].records;
        }
        g->n_lanes = n;
        i = j;
    }
    return 0;
}

struct pair_key {
    uint32_t group, a_node, b_node, ser;
};

static int by_pair(const void *x, const void *y)
{
    const struct pair_key *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->a_node != b->a_node)
        return a->a_node < b->a_node ? -1 : 1;
    if (a->b_node != b->b_node)
        return a->b_node < b->b_node ? -1 : 1;
    return a->ser < b->ser ? -1 : a->ser > b->ser;
}

static void add_pair(struct analysis *a, struct group *g, const struct pair_key *k)
{
    const struct ser *s = &a->sers[k->ser];
    struct pair_stat *p = g->n_pairs ? &g->pairs[g->n_pairs - 1] : NULL;
    if (p == NULL || p->a_node != k->a_node || p->b_node != k->b_node) {
        p = &g->pairs[g->n_pairs++];
        memset(p, 0, sizeof *p);
        p->a_node = k->a_node;
        p->b_node = k->b_node;
        p->a_rec = s->a;
        p->b_rec = s->b;
        p->lane = lane_of(a, &a->t->ev[s->a]);
    }
    p->count++;
    p->wait_sum = sat_add(p->wait_sum, s->wait);
    p->gap_sum = sat_add(p->gap_sum, s->gap);
}

/* Most frequent first, then by nodes. */
static int by_count(const void *x, const void *y)
{
    const struct pair_stat *a = x, *b = y;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->a_node != b->a_node)
        return a->a_node < b->a_node ? -1 : 1;
    return a->b_node < b->b_node ? -1 : a->b_node > b->b_node;
}

/* False serializations, by (group, A's node, B's node). */
static int sum_pairs(struct analysis *a)
{
    struct pair_key *keys = malloc((a->n_sers + 1) * sizeof *keys);
    size_t n = 0;
    if (keys == NULL)
        return -1;
    for (size_t i = 0; i < a->n_sers; i++) {
        const struct ser *s = &a->sers[i];
        if (s->cls != SER_FALSE)
            continue;
        keys[n++] = (struct pair_key){ a->replays[s->replay].group, s->a_node, s->b_node,
                                       (uint32_t)i };
    }
    sort_n(keys, n, sizeof *keys, by_pair);
    for (size_t i = 0; i < n; i++) {
        struct group *g = &a->groups[keys[i].group];
        if (g->pairs == NULL && (g->pairs = calloc(g->n_cls[SER_FALSE] + 1,
                                                   sizeof *g->pairs)) == NULL) {
            free(keys);
            return -1;
        }
        add_pair(a, g, &keys[i]);
    }
    free(keys);
    for (size_t i = 0; i < a->n_groups; i++)
        sort_n(a->groups[i].pairs, a->groups[i].n_pairs, sizeof *a->groups[i].pairs, by_count);
    return 0;
}

int aggregate_groups(struct analysis *a)
{
    for (size_t i = 0; i < a->n_groups; i++)
        sum_replays(a, &a->groups[i]);
    if (sum_lanes(a) != 0)
        return -1;
    return sum_pairs(a);
}
