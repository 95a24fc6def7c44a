/* analysis.h -- the dependency analysis of one trace against its graphs: replays,
 * observed serializations and their classes, lanes, critical paths, estimates.
 * Filled by analysis_run (replay.c, eager.c, eager_group.c, lanes.c, deps.c,
 * aggregate.c); read by the reports. Times are integer nanoseconds. */
#ifndef AGA_ANALYSIS_H
#define AGA_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "graph.h"
#include "trace.h"

/* Where a GPU record ran: a hardware channel, or (without "channel") a stream. */
struct lane_key {
    int32_t device;
    int64_t id;
};
#define LANE_NO_CHANNEL INT64_MIN   /* a record without "channel" in a channel trace */

enum ser_class { SER_TRUE, SER_FALSE, SER_AMBIGUOUS, SER_UNKNOWN, SER_CLASSES };

/* B started within epsilon of A's end, on one channel, in one replay. */
#define SER_NO_NODE UINT32_MAX
struct ser {
    uint32_t a, b;          /* record indices (trace.ev) */
    uint32_t a_node, b_node;    /* their graph nodes (SER_NO_NODE: unclassified) */
    uint32_t replay;
    uint8_t cls;
    uint8_t queued;         /* B started right after A's start, not its end (deps.c) */
    int64_t gap;            /* B.start - A.end */
    int64_t wait;           /* B.start - the end of B's last predecessor (or replay start) */
};

struct replay {
    uint32_t group;
    int64_t corr;
    uint32_t first, count;  /* records: order[first .. first+count), by start time */
    int64_t t0, span, idle, max_gap;
    uint32_t gaps;          /* idle gaps longer than epsilon */
    uint32_t lanes;
    uint32_t ser_first, ser_count;
    uint32_t n_cls[SER_CLASSES];
    uint32_t unmatched, duplicates, delayed;
    int64_t delay;          /* sum of (start - ready) over delayed starts */
    int64_t cp, est;        /* critical path, estimated span without false deps */
    uint8_t has_cp, has_est;
};

/* A (replay, lane) share: collected for every replay, summed per group. */
struct lane_use {
    uint32_t group;
    struct lane_key lane;
    int64_t busy;
    uint32_t records;
};

struct lane_stat {
    struct lane_key lane;
    int64_t busy;           /* summed over the group's replays */
    uint32_t replays;
    uint64_t records;
};

/* A false dependency A -> B seen in some replays of a group (by node). */
struct pair_stat {
    uint32_t a_node, b_node;
    uint32_t a_rec, b_rec;  /* one example */
    uint32_t count;
    int64_t wait_sum, gap_sum;
    struct lane_key lane;
};

/* An exec graph (graph keys), a launch shape (kernels sharing a correlation) or an
 * eager window shape (its graph is the analyzer's own, freed with the analysis). */
struct group {
    uint64_t id;            /* exec graph id, or a hash of the launch or window shape */
    int by_graph;
    int eager;
    struct graph *g;
    int32_t device;         /* eager: the windows' device */
    uint32_t streams;       /* eager: distinct streams of a window */
    uint32_t first_replay, replays;
    uint32_t sample;        /* a record, for names */
    int64_t span_sum, span_min, span_max, cp_sum, est_sum, idle_sum;
    uint32_t n_cp, n_est;
    uint64_t n_cls[SER_CLASSES], unmatched, delayed;
    uint8_t mapped;         /* a launch group whose records node_map.c mapped to g */
    uint64_t map_exact, map_stream, map_ambiguous, map_unmapped;    /* records, all replays */
    struct lane_stat *lanes;
    size_t n_lanes;
    struct pair_stat *pairs;
    size_t n_pairs;
};

/* Every lane of the trace (all GPU records). */
struct lane_total {
    struct lane_key lane;
    uint64_t records;
    int64_t busy, first, last;
};

/* Eager windows (analyzer/FORMAT.md, section 3), over the whole trace. */
struct eager_totals {
    int present;                /* the trace has section 1d records */
    uint64_t windows, groups, records, host_syncs, event_edges, implicit_edges;
    uint64_t unmatched_waits;   /* waits whose event record is not in the trace */
    uint64_t legacy_streams;    /* streams with eager records and no stream_info */
    uint64_t left_out;          /* eager records without a correlation or a stream */
    uint64_t split;             /* windows cut at EAGER_WINDOW_MAX records or the edge cap */
    uint64_t submit_api;        /* records submitted at their API record's end */
    uint64_t submit_host;       /* ... at the host's time estimated for their call */
    uint64_t submit_unknown;    /* ... at the window's first start (no timed call before) */
    int multi_stream;           /* eager records on two or more (device, stream) */
};

/* Whether the report answers a question: for every record, for some, for none. */
enum status_value { ST_DECIDED, ST_PARTIAL, ST_UNDECIDED };
struct status {
    uint8_t dep;                /* true or false dependencies of serializations */
    uint8_t cp;                 /* critical paths (needs graphs) */
    uint8_t est;                /* estimated spans without false dependencies */
    uint8_t all;                /* decided when all are, undecided when none is */
};

/* node_map.c: a launch group record's node, and whether the choice was ambiguous. */
#define MAP_AMBIGUOUS (1 << 30)

#define NOTE_MAX 32
struct note {
    char what[96];
    char why[400];
};

struct analysis {
    const struct trace *t;
    struct graphset *gs;
    int64_t eps;                /* ns */
    int by_graph;               /* replays grouped by (graph id, correlation) */
    int by_channel;             /* lanes are channels */
    uint32_t *order;
    size_t n_order;
    struct replay *replays;
    size_t n_replays;
    struct group *groups;
    size_t n_groups;
    struct ser *sers;
    size_t n_sers, cap_sers;
    struct lane_use *uses;
    size_t n_uses, cap_uses;
    struct lane_total *lanes;
    size_t n_lanes;
    struct note notes[NOTE_MAX];
    size_t n_notes;
    uint64_t no_corr, graphs_missing, graphs_unused;
    size_t eager_first;         /* order[eager_first..n_order): eager windows' records */
    int64_t *eager_floor;       /* their ready floors (analyzer/FORMAT.md, ready time) */
    struct eager_totals eager;
    int32_t *map_node;          /* per order position of a mapped launch group's record:
                                   its node (| MAP_AMBIGUOUS), or -1 (node_map.c) */
    struct status status;       /* status.c */
    int hint;                   /* the trace lacks both node ids and stream-order records */
};

/* 0, or -1 (out of memory; message in err). */
int analysis_run(struct analysis *a, const struct trace *t, struct graphset *gs,
                 double eps_us, char *err, size_t errsize);
void analysis_free(struct analysis *a);
void analysis_note(struct analysis *a, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Busy time and idle gaps of intervals fed in start order (lanes.c). */
struct walk {
    int started;
    int64_t cur_start, cur_end, first, busy, idle, max_gap;
    uint32_t gaps;
};
void walk_add(struct walk *w, int64_t start, int64_t end, int64_t eps);
void walk_end(struct walk *w);

/* A record placed on its lane, for sorting by (lane, start). */
struct lane_rec {
    struct lane_key lane;
    int64_t ts, end;
    uint32_t idx;
};
void lane_recs_sort(struct lane_rec *r, size_t n);

/* replay.c */
int replays_build(struct analysis *a);
/* The node of a replay's i-th record (-1: none): its position in an eager window's
 * graph, else the node its "graph node id" names. */
long replay_node(const struct analysis *a, const struct replay *r, const struct graph *g,
                 uint32_t i);
/* Per record of an eager window: the earliest its record could be ready (NULL for
 * the replays of exec graphs and launch groups, whose roots are ready at t0). */
const int64_t *replay_floors(const struct analysis *a, const struct replay *r);
/* eager.c: eager windows, grouped by shape (eager_group.c), appended to the replays */
int eager_build(struct analysis *a);
/* lanes.c */
struct lane_key lane_of(const struct analysis *a, const struct kev *k);
int lane_cmp(const struct lane_key *x, const struct lane_key *y);
int lanes_total(struct analysis *a);
/* deps.c */
int deps_replay(struct analysis *a, struct replay *r, struct group *grp, void *scratch);
void *deps_scratch_new(void);  /* grows as replays need */
void deps_scratch_free(void *scratch);
/* node_map.c: launch groups mapped to graph files by kernel name and order */
int node_map_build(struct analysis *a);
/* 1 when the replay's i-th record was mapped to its node by an ambiguous choice. */
int replay_node_ambiguous(const struct analysis *a, const struct replay *r, uint32_t i);
/* status.c */
void status_compute(struct analysis *a);
const char *status_name(int st);
/* The one line telling what to turn on (a->hint). */
extern const char status_hint[];
/* aggregate.c */
int aggregate_groups(struct analysis *a);

const char *ser_class_name(int cls);
static inline int64_t kev_end(const struct kev *k) { return k->ts + k->dur; }

/* a + b, saturating (sums over many replays of hostile input must not overflow). */
static inline int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* qsort, but never with a NULL base (an empty array may be unallocated). */
static inline void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

#endif
