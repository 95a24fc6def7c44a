/* report_svg.c -- the built-in SVG drawing of the drawn graphs (report_common.c; used
 * when Graphviz dot is not installed, or with --svg-engine builtin): nodes in layers by longest path from
 * the roots, graph edges as grey arrows, false dependencies as red dashed curves with
 * their counts; the same colours as the DOT output.  Graphs over SVG_MAX_NODES nodes
 * get a line saying so instead of a drawing. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>

#define SVG_MAX_NODES 4000
#define BOX_W 190
#define BOX_H 34
#define GAP_X 100
#define GAP_Y 46
#define MARGIN 20
#define TITLE_H 50

struct layout {
    uint32_t *depth, *col;
    uint32_t layers, widest;
};

/* Layer = longest path from a root; column = order of arrival in the layer. */
static int layout_graph(const struct graph *g, struct layout *l)
{
    uint32_t *count = calloc((size_t)g->n + 1, sizeof *count);
    l->depth = calloc((size_t)g->n + 1, sizeof *l->depth);
    l->col = calloc((size_t)g->n + 1, sizeof *l->col);
    l->layers = l->widest = 0;
    if (count == NULL || l->depth == NULL || l->col == NULL) {
        free(count);
        return -1;
    }
    for (uint32_t k = 0; k < g->n; k++) {
        uint32_t v = g->topo[k];
        for (uint32_t i = g->pred_off[v]; i < g->pred_off[v + 1]; i++)
            if (l->depth[g->pred[i]] + 1 > l->depth[v])
                l->depth[v] = l->depth[g->pred[i]] + 1;
    }
    for (uint32_t v = 0; v < g->n; v++) {
        l->col[v] = count[l->depth[v]]++;
        l->widest = count[l->depth[v]] > l->widest ? count[l->depth[v]] : l->widest;
        l->layers = l->depth[v] + 1 > l->layers ? l->depth[v] + 1 : l->layers;
    }
    free(count);
    return 0;
}

static int node_x(const struct layout *l, uint32_t v)
{
    return MARGIN + (int)l->col[v] * (BOX_W + GAP_X);
}

static int node_y(const struct layout *l, uint32_t v, int top)
{
    return top + TITLE_H + (int)l->depth[v] * (BOX_H + GAP_Y);
}

static void svg_node(struct out *o, const struct analysis *a, const struct graph *g,
                     const struct layout *l, uint32_t v, int top, int waited)
{
    char text[96];
    int x = node_x(l, v), y = node_y(l, v, top);
    const char *fill = waited ? "#ffd6d6" : g->nodes[v].timed ? "#ffffff" : "#eeeeee";
    node_label(a, g, v, g->positional ? 14 : 24, text, sizeof text);
    out_printf(o, "<g><title>#%u ", v);
    out_xml_str(o, node_name(a, g, v));
    out_printf(o, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"%d\" "
               "fill=\"%s\" stroke=\"#333\"/><text x=\"%d\" y=\"%d\">", x, y, BOX_W, BOX_H,
               g->nodes[v].timed ? 3 : 15, fill, x + 8, y + 21);
    out_xml_str(o, text);
    out_printf(o, "</text></g>\n");
}

static void svg_edge(struct out *o, const struct layout *l, uint32_t u, uint32_t v, int top)
{
    out_printf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#555\" "
               "marker-end=\"url(#arrow)\"/>\n", node_x(l, u) + BOX_W / 2,
               node_y(l, u, top) + BOX_H, node_x(l, v) + BOX_W / 2, node_y(l, v, top));
}

/* A false dependency: a curve between the facing sides of the two boxes, bowed
 * upwards (side by side) or outwards (one above the other); labelled at its middle. */
static void svg_false(struct out *o, const struct layout *l, const struct pair_stat *p,
                      const struct group *grp, int top)
{
    int ax = node_x(l, p->a_node), ay = node_y(l, p->a_node, top) + BOX_H / 2;
    int bx = node_x(l, p->b_node), by = node_y(l, p->b_node, top) + BOX_H / 2;
    int x1 = bx > ax ? ax + BOX_W : ax, x2 = bx > ax ? bx : bx + BOX_W;
    int cx = (x1 + x2) / 2, cy = (ay < by ? ay : by) - BOX_H;
    if (bx == ax) {
        x1 = x2 = ax + BOX_W;
        cx = ax + BOX_W + GAP_X + 40;
        cy = (ay + by) / 2;
    }
    out_printf(o, "<g class=\"false-dependency\"><title>false dependency #%u -&gt; #%u: "
               "%u of %u replays</title><path d=\"M%d,%d Q%d,%d %d,%d\" fill=\"none\" "
               "stroke=\"red\" stroke-width=\"2\" stroke-dasharray=\"6,4\" "
               "marker-end=\"url(#arrow-red)\"/><text x=\"%d\" y=\"%d\" fill=\"red\" "
               "text-anchor=\"middle\">false %u/%u</text></g>\n", p->a_node, p->b_node,
               p->count, grp->replays, x1, ay, cx, cy, x2, by, (x1 + 2 * cx + x2) / 4,
               (ay + 2 * cy + by) / 4 - 4, p->count, grp->replays);
}

static int graph_height(const struct layout *l, const struct graph *g)
{
    if (g->n > SVG_MAX_NODES)
        return TITLE_H + 20;
    return TITLE_H + (int)l->layers * (BOX_H + GAP_Y) + MARGIN;
}

/* One graph drawn from y = top; its height. */
static int svg_graph(struct out *o, const struct analysis *a, const struct graph *g,
                     const struct group *grp, int top)
{
    unsigned char *waited = calloc((size_t)g->n + 1, 1);
    struct layout l;
    uint32_t from, to;
    char title[600];
    int h;
    graph_title(title, sizeof title, g, grp);
    out_printf(o, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">", MARGIN, top + 22);
    out_xml_str(o, title);
    out_printf(o, "</text>\n");
    if (waited == NULL || layout_graph(g, &l) != 0) {
        free(waited);
        o->failed = 1;
        return TITLE_H;
    }
    h = graph_height(&l, g);
    if (g->n > SVG_MAX_NODES)
        out_printf(o, "<text x=\"%d\" y=\"%d\">%u nodes: too many to draw here (use --dot)"
                   "</text>\n", MARGIN, top + TITLE_H + 10, g->n);
    for (size_t k = 0; grp && k < grp->n_pairs; k++)
        waited[grp->pairs[k].b_node] = 1;
    for (struct edge_iter it = { 0, 0 };
         g->n <= SVG_MAX_NODES && graph_next_edge(g, &it, &from, &to);)
        svg_edge(o, &l, from, to, top);
    for (uint32_t v = 0; g->n <= SVG_MAX_NODES && v < g->n; v++)
        svg_node(o, a, g, &l, v, top, waited[v]);
    for (size_t k = 0; grp && g->n <= SVG_MAX_NODES && k < grp->n_pairs; k++)
        svg_false(o, &l, &grp->pairs[k], grp, top);
    free(l.depth);
    free(l.col);
    free(waited);
    return h;
}

static void svg_size(const struct analysis *a, int *w, int *h)
{
    *w = 1000;
    *h = TITLE_H + MARGIN;
    for (size_t i = 0; i < drawn_count(a); i++) {
        const struct group *grp;
        const struct graph *g = drawn_graph(a, i, &grp);
        struct layout l;
        if (layout_graph(g, &l) != 0)
            continue;
        int gw = 2 * MARGIN + (int)l.widest * (BOX_W + GAP_X) + GAP_X + 80;
        if (g->n <= SVG_MAX_NODES && gw > *w)
            *w = gw;
        *h += graph_height(&l, g);
        free(l.depth);
        free(l.col);
    }
}

void report_svg(struct out *o, const struct analysis *a)
{
    int w, h, top = TITLE_H;
    svg_size(a, &w, &h);
    out_printf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/"
               "2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family="
               "\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n<defs>"
               "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
               "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 "
               "L0,10 z\" fill=\"#555\"/></marker><marker id=\"arrow-red\" viewBox=\"0 0 10 "
               "10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto"
               "\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"red\"/></marker></defs>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%d\" y=\"22\">"
               "grey: graph dependencies; red dashed: false dependencies (serialized on one "
               "channel, no path in the graph); pink: nodes that waited on one</text>\n",
               w, h, w, h, MARGIN);
    for (size_t i = 0; i < drawn_count(a); i++) {
        const struct group *grp;
        const struct graph *g = drawn_graph(a, i, &grp);
        top += svg_graph(o, a, g, grp, top);
    }
    out_printf(o, "</svg>\n");
}
