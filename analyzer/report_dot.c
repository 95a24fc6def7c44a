/* report_dot.c -- every drawn graph as Graphviz DOT, one cluster per exec graph or
 * eager window shape (its nodes: the first window's records, with their streams):
 * graph edges black; false dependencies (observed serializations with no path in the
 * graph) red, dashed, labelled with the replays they were seen in and B's mean wait;
 * nodes that waited on a false dependency filled pink; untimed nodes (no trace
 * record: empty, event, host...) as ellipses. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>

static void dot_node(struct out *o, const struct analysis *a, size_t gi, const struct graph *g,
                     uint32_t v, const unsigned char *waited)
{
    char text[200];
    node_label(a, g, v, 60, text, sizeof text);
    out_printf(o, "    g%zu_n%u [label=", gi, v);
    out_dot_str(o, text);
    if (!g->nodes[v].timed)
        out_printf(o, ", shape=ellipse, color=gray40");
    if (waited != NULL && waited[v])
        out_printf(o, ", style=filled, fillcolor=\"#ffd6d6\"");
    out_printf(o, "];\n");
}

static void dot_false_edge(struct out *o, size_t gi, const struct group *grp,
                           const struct pair_stat *p)
{
    out_printf(o, "    g%zu_n%u -> g%zu_n%u [color=red, fontcolor=red, style=dashed, "
               "penwidth=2, constraint=false, label=\"false %u/%u\\nwait ", gi, p->a_node, gi,
               p->b_node, p->count, grp->replays);
    out_us(o, p->count ? p->wait_sum / p->count : 0);
    out_printf(o, " us\"];\n");
}

static void dot_graph(struct out *o, const struct analysis *a, size_t gi, const struct graph *g,
                      const struct group *grp)
{
    unsigned char *waited = calloc((size_t)g->n + 1, 1);
    uint32_t from, to;
    char title[600];
    graph_title(title, sizeof title, g, grp);
    out_printf(o, "  subgraph cluster_%zu {\n    label=", gi);
    out_dot_str(o, title);
    out_printf(o, ";\n");
    for (size_t k = 0; grp && waited && k < grp->n_pairs; k++)
        waited[grp->pairs[k].b_node] = 1;
    for (uint32_t v = 0; v < g->n; v++)
        dot_node(o, a, gi, g, v, waited);
    for (struct edge_iter it = { 0, 0 }; graph_next_edge(g, &it, &from, &to);)
        out_printf(o, "    g%zu_n%u -> g%zu_n%u;\n", gi, from, gi, to);
    for (size_t k = 0; grp && k < grp->n_pairs; k++)
        dot_false_edge(o, gi, grp, &grp->pairs[k]);
    out_printf(o, "  }\n");
    free(waited);
}

void report_dot(struct out *o, const struct analysis *a)
{
    out_printf(o, "digraph autograph {\n  graph [fontname=\"Helvetica\", fontsize=11, "
               "labelloc=t, label=\"black: graph dependencies; red dashed: false "
               "dependencies (serialized on one channel, no path in the graph)\"];\n"
               "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
               "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    for (size_t i = 0; i < drawn_count(a); i++) {
        const struct group *grp;
        const struct graph *g = drawn_graph(a, i, &grp);
        dot_graph(o, a, i, g, grp);
    }
    if (drawn_left_out(a) > 0)
        out_printf(o, "  // %zu more eager window shapes (the least frequent, or over 4000 "
                   "records), not drawn\n", drawn_left_out(a));
    out_printf(o, "}\n");
}
