/* eager.h -- eager windows (analyzer/FORMAT.md, section 3) between their builder
 * (eager.c: records, edges and ready floors, window by window), the graph launches
 * that may precede their records (eager_graphs.c), and their grouping by shape
 * (eager_group.c: one analyzer-made graph per shape, the windows as its replays). */
#ifndef AGA_EAGER_H
#define AGA_EAGER_H

#include "analysis.h"
#include "keymap.h"

/* A window longer than this is cut into sub-windows (edges always go from a lower to
 * a higher correlation, so no path between two records of a sub-window leaves it). */
#define EAGER_WINDOW_MAX 65536u
/* Another limit, for tests (--window-max); 0: EAGER_WINDOW_MAX. */
void eager_set_window_max(uint32_t max);
uint32_t eager_window_max(void);
/* A window with more edges than this is cut too (edges across the cut count for the
 * ready time only). */
#define EAGER_EDGES_MAX (1u << 20)

/* A closed window: its records by correlation, their ready floors (final), its edges
 * as record positions, sorted by (to, from). */
struct eager_window {
    int32_t device;
    uint32_t n, m, streams;
    const uint32_t *ev;
    const int64_t *floor;
    const uint32_t *from, *to;
    int64_t t0;                 /* the first start */
};

/* Graph launches by end time, per device (eager_graphs.c). */
struct graph_launches {
    struct keymap devices;      /* device -> slice */
    struct launch_slice { size_t first, n; } *slices;
    size_t n_slices;
    int64_t *ends;              /* each device's launches' ends, sorted */
    int64_t *tree;              /* prefix maxima of the ends met so far (Fenwick) */
    int pending;                /* a launch being met record by record: */
    int32_t device;
    int64_t corr, end;
};

int graph_launches_init(struct graph_launches *gl, const struct trace *t);
/* A graph record, met in correlation order. */
void graph_launches_record(struct graph_launches *gl, const struct kev *k);
/* The latest end, at most `by`, among the device's launches met so far (INT64_MIN:
 * none). */
int64_t graph_launches_floor(struct graph_launches *gl, int32_t device, int64_t by);
void graph_launches_free(struct graph_launches *gl);

struct eager_shape {
    struct graph *g;            /* NULL once handed to its group */
    uint64_t hash;
    int32_t device;
    uint32_t streams, windows;
};

struct eager_collect {
    struct eager_shape *shapes;
    size_t n_shapes, cap_shapes;
    struct keymap by_hash;      /* (hash, k-th shape with that hash) -> shape */
    struct replay *windows;     /* group: the shape until eager_collect_finish */
    size_t n_windows, cap_windows;
};

/* Append a window's records and floors to the analysis (a->order has room for them)
 * and file it under its shape; 0, or -1 out of memory. */
int eager_collect_add(struct eager_collect *c, struct analysis *a, const struct eager_window *w);
/* The shapes become groups (most windows first) and the windows their replays. */
int eager_collect_finish(struct eager_collect *c, struct analysis *a);
void eager_collect_free(struct eager_collect *c);

#endif
