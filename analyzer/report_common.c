/* report_common.c -- what the reports share: names of records, graph nodes and lanes,
 * graph titles, and which graphs are drawn (DOT, SVG): every graph file's, then the
 * graphs of the eager window shapes with the most windows (small enough to read). */
#include "report.h"

#include <stdio.h>

#define EAGER_DRAWN_MAX 32
#define EAGER_DRAWN_NODES 4000

const char *rec_name(const struct analysis *a, uint32_t rec)
{
    const char *s = strtab_get(&a->t->strs, a->t->ev[rec].name);
    return s[0] ? s : kev_kind_name(a->t->ev[rec].kind);
}

/* A node's kernel name, else its type (an eager window's node: its record's name). */
const char *node_name(const struct analysis *a, const struct graph *g, uint32_t v)
{
    const struct gnode *n = &g->nodes[v];
    if (g->positional)
        return n->name ? strtab_get(&a->t->strs, n->name) : "record";
    return strtab_get(&a->gs->strs, n->name ? n->name : n->type);
}

void node_label(const struct analysis *a, const struct graph *g, uint32_t v, size_t max,
                char *buf, size_t size)
{
    char name[256];
    shorten(name, sizeof name, node_name(a, g, v), max);
    if (g->positional)
        snprintf(buf, size, "#%u [stream %lld] %s", v, (long long)g->nodes[v].stream, name);
    else
        snprintf(buf, size, "#%u %s", v, name);
}

void lane_name(const struct analysis *a, const struct lane_key *l, char *buf, size_t size)
{
    if (!a->by_channel)
        snprintf(buf, size, "device %d stream %lld", (int)l->device, (long long)l->id);
    else if (l->id == LANE_NO_CHANNEL)
        snprintf(buf, size, "device %d (no channel)", (int)l->device);
    else
        snprintf(buf, size, "device %d channel %lld", (int)l->device, (long long)l->id);
}

double map_confidence(const struct group *g)
{
    uint64_t n = g->map_exact + g->map_stream + g->map_ambiguous + g->map_unmapped;
    return n ? (double)g->map_exact / (double)n : 0.0;
}

const struct group *group_of_graph(const struct analysis *a, const struct graph *g)
{
    for (size_t i = 0; i < a->n_groups; i++)
        if (a->groups[i].g == g)
            return &a->groups[i];
    return NULL;
}

void graph_title(char *buf, size_t size, const struct graph *g, const struct group *grp)
{
    char id[32] = "(no id)";
    if (g->positional) {
        snprintf(buf, size, "eager window %016llx (device %d): %u records on %u streams, %u "
                 "edges, %u windows in the trace", (unsigned long long)grp->id,
                 (int)grp->device, g->n, grp->streams, g->m, grp->replays);
        return;
    }
    if (g->has_exec_id)
        snprintf(id, sizeof id, "%llu", (unsigned long long)g->exec_id);
    snprintf(buf, size, "exec graph %s (%s): %u nodes, %u replays in the trace", id, g->file,
             g->n, grp ? grp->replays : 0);
}

int report_to_file(const char *path, void (*fn)(struct out *, const struct analysis *),
                   const struct analysis *a, char *err, size_t errsize)
{
    struct out o;
    if (out_open(&o, path, err, errsize) != 0)
        return -1;
    fn(&o, a);
    return out_close(&o, err, errsize);
}

/* Eager window shapes drawn: the first EAGER_DRAWN_MAX (most windows first) of at
 * most EAGER_DRAWN_NODES records. */
static int drawable(const struct group *g)
{
    return g->eager && g->g->n <= EAGER_DRAWN_NODES;
}

static size_t eager_drawn(const struct analysis *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_groups; i++)
        n += drawable(&a->groups[i]);
    return n < EAGER_DRAWN_MAX ? n : EAGER_DRAWN_MAX;
}

size_t drawn_count(const struct analysis *a)
{
    return a->gs->n + eager_drawn(a);
}

const struct graph *drawn_graph(const struct analysis *a, size_t i, const struct group **grp)
{
    size_t k = a->gs->n;
    if (i < a->gs->n) {
        *grp = group_of_graph(a, &a->gs->g[i]);
        return &a->gs->g[i];
    }
    for (size_t gi = 0; gi < a->n_groups; gi++)
        if (drawable(&a->groups[gi]) && k++ == i) {
            *grp = &a->groups[gi];
            return a->groups[gi].g;
        }
    *grp = NULL;
    return NULL;
}

size_t drawn_left_out(const struct analysis *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_groups; i++)
        n += a->groups[i].eager;
    return n - eager_drawn(a);
}
