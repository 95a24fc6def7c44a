/* config.h -- the AUTOGRAPH_* environment switches, parsed once.
 *
 * README.md holds the table of switches; config.c is the only place that reads
 * them.  A malformed value gives one line on stderr and the safe default.
 */
#ifndef AG_CONFIG_H
#define AG_CONFIG_H

#include "log.h"

#include <stddef.h>

enum ag_mode { AG_MODE_OFF, AG_MODE_ON };
enum ag_liveness { AG_LIVENESS_OFF, AG_LIVENESS_WARN, AG_LIVENESS_ERROR };
enum ag_capture_mode { AG_CAPTURE_RELAXED, AG_CAPTURE_THREAD_LOCAL, AG_CAPTURE_GLOBAL };
/* AUTOGRAPH_CHUNK_TUNE=auto: only windows the configured chunk plan leaves in one
 * chunk are tuned (build_tune.c). */
#define AG_CHUNK_TUNE_AUTO (-1)

/* AUTOGRAPH_LAUNCH_THREAD: paced chunks launched by the shim's thread never, always, or
 * while only one of the program's threads has offered work (replay_launcher.c) */
enum ag_launch_thread { AG_LAUNCH_THREAD_OFF, AG_LAUNCH_THREAD_ON, AG_LAUNCH_THREAD_AUTO };

struct ag_config {
    enum ag_mode mode;              /* AUTOGRAPH */
    int summary_stderr;             /* AUTOGRAPH_SUMMARY */
    const char *summary_file;       /* AUTOGRAPH_SUMMARY_FILE (NULL: none) */
    enum ag_log_level log_level;    /* AUTOGRAPH_LOG */
    int explain;                    /* AUTOGRAPH_EXPLAIN: why windows were not graphed */
    int warmup;                     /* AUTOGRAPH_WARMUP: eager repeats before graphing */
    int min_ops;                    /* AUTOGRAPH_MIN_OPS: shortest window worth a graph */
    int chunk_first, chunk_max;     /* AUTOGRAPH_CHUNK, AUTOGRAPH_CHUNK_MAX: replay chunks */
    int chunk_growth;               /* AUTOGRAPH_CHUNK_GROWTH: next chunk = this x the last */
    int chunk_slow_us;              /* AUTOGRAPH_CHUNK_SLOW_US */
    int chunk_tune;                 /* AUTOGRAPH_CHUNK_TUNE: replays timed per plan, or
                                     * AG_CHUNK_TUNE_AUTO */
    int max_variants;               /* AUTOGRAPH_VARIANTS: exec graphs per chunk */
    int period_min;                 /* AUTOGRAPH_PERIOD_MIN: shortest period template */
    int light_after;                /* AUTOGRAPH_LIGHT_AFTER: differing windows before light recording */
    int skim_after;                 /* AUTOGRAPH_SKIM_AFTER: then more before skimming */
    enum ag_liveness liveness;      /* AUTOGRAPH_CHECK_LIVENESS: dead pointers in launches */
    enum ag_capture_mode capture_mode;  /* AUTOGRAPH_CAPTURE_MODE: of the shim's own captures */
    const char *inject_faults;      /* AUTOGRAPH_INJECT_FAULTS: fail the shim's own calls */
    int keep_graph;                 /* AUTOGRAPH_KEEP_GRAPH: instantiate at first replay */
    int cut_anywhere;               /* AUTOGRAPH_CUT_ANYWHERE: chunk cuts across streams */
    const char *collective_prefixes;    /* AUTOGRAPH_COLLECTIVE_PREFIXES: more names of
                                     * collective kernels, comma-separated (NULL: none) */
    int hold_runtime;               /* AUTOGRAPH_HOLD_RUNTIME: hold at cudaLaunchKernel too */
    int smem_flush;                 /* AUTOGRAPH_SMEM_FLUSH: a shared memory limit change ends the window */
    int host_funcs;                 /* AUTOGRAPH_HOST_FUNCS: host functions recorded, graphed */
    int destroy_flush;              /* AUTOGRAPH_DESTROY_FLUSH: an event's destroy ends the window */
    enum ag_launch_thread launch_thread;  /* AUTOGRAPH_LAUNCH_THREAD: chunks launched by the shim's thread */
    int launch_spin_us;             /* AUTOGRAPH_LAUNCH_SPIN_US: the launcher waits awake */
    int launch_poll_us;             /* AUTOGRAPH_LAUNCH_POLL_US: ... in naps this long (0: spinning) */
    int guard_ms;                   /* AUTOGRAPH_GUARD_MS: replays before the speed guard's
                                     * first trial (0: no guard) */
    int max_graphs, max_graph_mb;   /* AUTOGRAPH_MAX_GRAPHS, _MAX_GRAPH_MB: cache bounds (0: none) */
    int stage_mb;                   /* AUTOGRAPH_STAGE_MB: pinned staging ring (0: none) */
    const char *debug_dump;         /* AUTOGRAPH_DEBUG_DUMP: folder for DOT and JSON (NULL: none) */
    const char *plugin;             /* AUTOGRAPH_PLUGIN: library to load (NULL: none) */
    const char *trace;              /* AUTOGRAPH_TRACE: CUPTI trace file, %p = pid (NULL: none) */
    const char *graph_data;         /* AUTOGRAPH_GRAPH_DATA: folder for the program's graph data, %p = pid */
    const char *timing;             /* AUTOGRAPH_TIMING: window latencies file, %p = pid (NULL: none) */
    const char *guard_job;          /* AUTOGRAPH_GUARD_JOB: the job whose ranks share the
                                     * guard's trials (NULL: the launcher's; "none") */
};

/* The parsed configuration; parses the environment on first use. */
const struct ag_config *ag_config(void);

/* A variable of the process environment, as the configuration reads it (getenv with
 * the const result that ag_config_parse's `get` takes). */
const char *ag_config_getenv(const char *name);

/* Parses from a getenv-like function (unit tests); messages go to stderr. */
void ag_config_parse(struct ag_config *out, const char *(*get)(const char *name),
                     char **environment);

/* `pattern` with every %p replaced by the pid (AUTOGRAPH_SUMMARY_FILE, AUTOGRAPH_TRACE,
 * AUTOGRAPH_TIMING: forked children write files of their own); truncated to `size`. */
void ag_expand_pid(char *dst, size_t size, const char *pattern);

#endif
