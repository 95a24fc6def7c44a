/* compare.h -- autograph compare: what its files share (compare.c runs the program,
 * collect.c reads each run's files, figures.c computes the comparison, compare_out.c
 * writes it as text and JSON, svg.c draws it).
 */
#ifndef AUTOGRAPH_COMPARE_H
#define AUTOGRAPH_COMPARE_H

#include "cli.h"

enum { OFF, ON };                       /* the two sides */
extern const char *const side_name[2];  /* "off", "on" */

/* What the runs of one side measured. */
struct side_data {
    struct samples latency;             /* ns per window, pooled (warm-up windows left out) */
    struct samples launch;              /* ns inside launch calls, the same windows */
    struct samples shim;                /* ns of the shim's own work in their submits */
    struct samples wall;                /* s per run */
    struct samples run_p50, run_p90;    /* per run (in run order): latency percentiles */
    unsigned long windows_all;          /* windows in the files, warm-up ones too */
    unsigned long submits, held;        /* of the pooled windows */
    unsigned long kernel_launches, launches_graphed;  /* summary files (on side) */
    struct samples guard_speedup;       /* the speed guard's verdict of each run that made
                                         * a trial (summary guard_speedup) */
    unsigned long guard_paused;         /* runs in which it paused graphing */
};

/* Reads run folder `dir` (timing.* and summary.* files) into `side`, leaving out the
 * first `warmup` windows of each timing file; 0, or EXIT_RUN (reported). */
int collect_run(const char *dir, int warmup, struct side_data *side);
void side_free(struct side_data *side);

struct side_figures {
    double wall_med, wall_min, wall_max;
    double p50, p90, p99;               /* latency, ns (NaN: no windows) */
    double launch_med;                  /* ns inside launch calls per window, median */
    double shim_med;                    /* ns of the shim's own work per window, median */
    double submits_per_window, held_share;
    unsigned long windows;
};

enum outputs { OUT_SAME, OUT_DIFFER, OUT_UNSTABLE, OUT_NO_MATCH };

struct figures {
    struct side_figures side[2];
    double speedup_p50, speedup_p90;    /* off / on */
    double spread_p50[2], spread_p90[2]; /* p25, p75 of the per-run ratios */
    double graphed_share;               /* launches_graphed / kernel_launches (on) */
    unsigned long launches_graphed, kernel_launches;
    double recovered;                   /* (p50 off - p50 on) / launch_med off */
    double launch_share;                /* launch_med off / p50 off */
    double ceiling;                     /* p50 off / (p50 off - launch_med off) */
    double guard_speedup;               /* median of the on runs' guard verdicts (NaN: none) */
    unsigned long guard_runs, guard_paused;  /* on runs with a verdict; that paused */
    /* what was run */
    char *const *program;
    int runs, warmup;
    enum outputs outputs;
    const char *check;                  /* --check REGEX, or NULL: all of stdout compared */
    unsigned long checked_lines;        /* --check: the lines of stdout it matched (run off-1) */
    const char *differ_run;             /* OUT_DIFFER: the first on run that differed */
};

/* Sorts the samples and fills `f` (its program, runs, warmup, outputs are the caller's). */
void figures_compute(struct side_data side[2], struct figures *f);

/* Output. */
void print_report(FILE *out, const struct figures *f, const char *kept, const char *svg,
                  const char *json);
int write_json(const char *path, const struct figures *f, const struct side_data side[2]);
int write_svg(const char *path, const struct figures *f, const struct side_data side[2]);
/* The program's command line, words separated by spaces, cut to `size`. */
void program_line(char *const *program, char *buf, size_t size);
/* 1234.5 ns as "1.23 us" (ns, us, ms, s; 3 significant digits); "n/a" for NaN. */
const char *format_ns(double ns, char *buf, size_t size);

#endif
