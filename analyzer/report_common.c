/* report_common.c -- names the reports share: records, graph nodes, lanes. */
#include "report.h"

#include <stdio.h>

const char *rec_name(const struct analysis *a, uint32_t rec)
{
    const char *s = strtab_get(&a->t->strs, a->t->ev[rec].name);
    return s[0] ? s : kev_kind_name(a->t->ev[rec].kind);
}

/* A node's kernel name, else its type. */
const char *node_name(const struct analysis *a, const struct graph *g, uint32_t v)
{
    const struct gnode *n = &g->nodes[v];
    return strtab_get(&a->gs->strs, n->name ? n->name : n->type);
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
