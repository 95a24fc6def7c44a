/* report.h -- the outputs: text (default), JSON, DOT and SVG of the graphs with false
 * dependencies drawn distinctly, and the annotated Chrome trace. */
#ifndef AGA_REPORT_H
#define AGA_REPORT_H

#include <stddef.h>

#include "analysis.h"
#include "out.h"

struct report_opts {
    unsigned replays_shown;     /* text: replays listed per group */
    const char *graphs_from;    /* where the graph files were found (text only) */
};

void report_text(struct out *o, const struct analysis *a, const struct report_opts *opt);
void report_json(struct out *o, const struct analysis *a);
void report_dot(struct out *o, const struct analysis *a);
void report_svg(struct out *o, const struct analysis *a);
/* The trace at path again, copied with flow events added; 0 or -1 (err). */
int trace_annotate(const struct analysis *a, const char *path, struct out *o, char *err,
                   size_t errsize);
/* The same from an input opened by the caller. */
struct input;
int trace_annotate_input(const struct analysis *a, struct input *in, struct out *o,
                         char *err, size_t errsize);

/* report_common.c: names shared by the reports */
const char *rec_name(const struct analysis *a, uint32_t rec);
const char *node_name(const struct analysis *a, const struct graph *g, uint32_t v);
void lane_name(const struct analysis *a, const struct lane_key *l, char *buf, size_t size);
/* "#v name" (an eager window's node: "#v [stream S] name"), the name cut to max bytes. */
void node_label(const struct analysis *a, const struct graph *g, uint32_t v, size_t max,
                char *buf, size_t size);
/* A graph's title line (grp: its group, NULL when it has no replay). */
void graph_title(char *buf, size_t size, const struct graph *g, const struct group *grp);
/* The graphs drawn by --dot and --svg: each graph file's, then the eager window shapes
 * with the most windows (at most 32, of at most 4000 records each: drawn_left_out says
 * how many shapes are not drawn). */
size_t drawn_count(const struct analysis *a);
const struct graph *drawn_graph(const struct analysis *a, size_t i, const struct group **grp);
size_t drawn_left_out(const struct analysis *a);
/* Open path, write it with fn, close; 0 or -1 (err). */
int report_to_file(const char *path, void (*fn)(struct out *, const struct analysis *),
                   const struct analysis *a, char *err, size_t errsize);
/* A mapped launch group's share of records mapped exactly (node_map.c). */
double map_confidence(const struct group *g);
/* The group of a graph (its replays), or NULL. */
const struct group *group_of_graph(const struct analysis *a, const struct graph *g);

#endif
