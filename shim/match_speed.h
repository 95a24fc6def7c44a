/* match_speed.h -- the speed guard: graphing stays on only where it is measured faster.
 *
 * The engine's rules (warm-up, retirement, back-off, futile shapes) judge windows by
 * what they see of the ops; none sees the clock.  A program can still run slower with
 * graphs than without (templates that churn, replays that stop, patches that cost more
 * than the launches they replace, a host-bound program whose cache the shim's work
 * disturbs).  The guard measures it: once graphs have been replaying for a while, it
 * alternates short blocks of the program's own time with graphing on and paused
 * (autograph_disable's pause: every call goes to the driver as made), each block
 * running from one host synchronization to another, and compares the wall time per
 * submitted op of each paused block with its two neighbours'.  Graphing that is not
 * faster is paused, graphing that is stays; either verdict is tried again after an
 * interval that doubles while it holds, so a program that changes is looked at again.
 *
 * Before any graph replays, the guard also watches for a program the engine cannot
 * help: AG_SPEED_IDLE_WINDOWS windows in a row with no template made, replayed or
 * stopped (windows too short, never alike, unrecordable) pause recording, whose cost
 * is then all the shim adds, for AG_SPEED_IDLE_NS; recording then resumes to look
 * again, and the pause doubles each time it finds nothing, up to AG_SPEED_IDLE_LEVELS
 * doublings.  After a quiet spell (a sleep, I/O: few windows, and a synchronization
 * long after the watch's poll was due) the watch begins again: what came before the
 * spell is not held against what comes after it.
 *
 * The decision itself (struct ag_speed, ag_speed_step) is a pure function of the
 * times and counts it is given, so that the unit tests can drive it; match_speed.c
 * also holds the glue that feeds it from the shim's clock and counters.  No CUDA.
 */
#ifndef AG_MATCH_SPEED_H
#define AG_MATCH_SPEED_H

#include <stdint.h>
#include <stdio.h>

#define AG_SPEED_BLOCK_NS     20000000ull   /* a block: at least this long, to a sync */
#define AG_SPEED_POLL_NS      5000000ull    /* before the first trial: look this often */
#define AG_SPEED_TROUBLE      8             /* replays stopped: a trial comes early */
#define AG_SPEED_PAIRS        3             /* paused blocks a trial has at least... */
#define AG_SPEED_PAIRS_MAX    7             /* ...and at most, while it is unclear */
#define AG_SPEED_CLEAR        0.02          /* a verdict within 1 +- this is unclear */
#define AG_SPEED_SURE         0.25          /* graphs this much faster: kept at once */
#define AG_SPEED_KEEP_NS      4000000000ull /* graphing faster: next trial after this... */
#define AG_SPEED_PAUSE_NS     1000000000ull /* ...not faster: after this, each doubling */
#define AG_SPEED_LEVELS       4             /* up to 2^this times (64 s kept, 16 s paused) */
#define AG_SPEED_IDLE_WINDOWS 256           /* windows with nothing graphed: idle... */
#define AG_SPEED_IDLE_NS      50000000ull   /* ...recording paused this long, doubling */
#define AG_SPEED_IDLE_LEVELS  5             /* up to 2^this times while it finds nothing */
#define AG_SPEED_GRID_NS      250000000ull  /* trials begin on this grid of the clock */
#define AG_SPEED_LEAD_NS      20000000ull   /* a job's trial: announced this long ahead */

enum ag_speed_phase {
    AG_SPEED_WAIT,      /* no trial yet: graphs must replay for a while first */
    AG_SPEED_ON,        /* a trial's block with graphing on */
    AG_SPEED_OFF,       /* a trial's block with graphing paused */
    AG_SPEED_KEPT,      /* graphing measured faster: on until the next trial */
    AG_SPEED_PAUSED,    /* graphing measured no faster: paused until the next trial */
    AG_SPEED_IDLE,      /* nothing to graph lately: recording paused for a while */
};

/* What the shim has counted so far, at a step. */
struct ag_speed_counts {
    uint64_t work;              /* ops submitted: launches, copies, memsets */
    uint64_t replays;           /* templates replayed to their end */
    uint64_t trouble;           /* replays stopped before it */
    uint64_t windows;           /* windows ended */
    uint64_t templates;         /* templates made */
};

/* What the ranks of one job on one host share (in memory they all map): the time of
 * the job's next or last trial, on the clock all processes of a host share.  The first
 * rank due for a trial announces it a little ahead; the others, graphs replaying, join
 * it, so a job's ranks try the same steps eager even where their engines were not at
 * the same point (a rank that replayed later, a verdict that differed). */
struct ag_speed_job {
    uint64_t trial_at;          /* read and written with atomics */
};

/* What the caller must do with graphing after a step. */
enum ag_speed_action { AG_SPEED_STAY, AG_SPEED_PAUSE, AG_SPEED_RESUME };

struct ag_speed {
    enum ag_speed_phase phase;
    uint64_t after_ns;          /* graphs replaying this long before the first trial */
    uint64_t next_ns;           /* nothing to decide before this time */
    uint64_t first_replay_ns;   /* when replays were first seen (0: not yet) */
    uint64_t grid_ns, grid_phase_ns;    /* trials begin at t with (t + phase) % grid
                                         * == 0 (grid 0: whenever due) */
    uint64_t trial_ns;          /* when the last trial began */
    struct ag_speed_job *job;   /* shared with the job's other ranks (NULL: alone) */
    uint64_t job_from;          /* announcements older than this are another job's */
    uint64_t trouble_at_first;  /* replays stopped by then */
    uint64_t block_ns, block_work;  /* the block under way began then, at this count */
    double on[AG_SPEED_PAIRS_MAX + 1], off[AG_SPEED_PAIRS_MAX];  /* ns per op */
    int n_on, n_off;
    int level;                  /* verdicts alike in a row: their interval doubles */
    enum ag_speed_phase last_verdict;   /* AG_SPEED_KEPT or _PAUSED, or _WAIT: none */
    double speedup;             /* the last trial's: eager time over graphed time */
    unsigned long trials, paused_verdicts;
    struct ag_speed_counts idle_from;   /* the counts when the idle watch began */
    int idle_level;             /* idle pauses in a row: their length doubles */
    uint64_t step_ns, step_windows;     /* the watch's last step: when, windows ended */
    unsigned long idle_pauses;
};

/* Starts the guard: its first trial once graphs have replayed for after_ns. */
void ag_speed_init(struct ag_speed *g, uint64_t after_ns);

/* Trials begin only on a grid of the clock: at the first step at or after a time t
 * with (t + phase_ns) % grid_ns == 0, and the next trial is due a whole interval after
 * the last one began (or after its verdict, when the trial ran longer than that).
 * Processes of one job that share the grid (the ranks of a data-parallel job) so have
 * their trials, and their paused blocks, at the same steps: each rank's step waits for
 * the others', so a rank that paused alone would measure the others' pace. */
void ag_speed_align(struct ag_speed *g, uint64_t grid_ns, uint64_t phase_ns);

/* Trials shared with the job's other ranks through *job, from time `now` on: a rank
 * due for a trial announces it AG_SPEED_LEAD_NS ahead (on the grid) unless another
 * rank's is pending, and every rank whose graphs have replayed begins the job's trial
 * at its first step at or after the announced time. */
void ag_speed_share(struct ag_speed *g, struct ag_speed_job *job, uint64_t now);

/* The job's trial that this guard has not begun yet (0: none): its announced time. */
uint64_t ag_speed_job_trial(const struct ag_speed *g);

/* At a host synchronization at time `now` (ns), with the counts so far (only `work`
 * is read once a trial has begun).  Returns what to do with graphing; g->next_ns says
 * when the next step is due (earlier calls need not step). */
enum ag_speed_action ag_speed_step(struct ag_speed *g, uint64_t now,
                                   const struct ag_speed_counts *c);

/* ---- the shim's guard (one per process) ----------------------------------------- */

/* Sets it up from AUTOGRAPH_GUARD_MS (0: no guard), once, after ag_engine_setup;
 * count_work: the program's calls so far that submit work (kernel launches, copies,
 * memsets: *work) and its kernel launches (*launches), held or not (counters.c). */
typedef void ag_speed_count_fn(uint64_t *work, unsigned long *launches);
void ag_speed_setup(int after_ms, ag_speed_count_fn *count_work, struct ag_speed_job *job);

/* match_speed_job.c: the job's name, `own` (AUTOGRAPH_GUARD_JOB) when set, else from
 * the launcher's variables, read with `get` (1: found, in buf; 0: none, or "none"). */
int ag_speed_job_name(const char *own, const char *(*get)(const char *), char *buf,
                      size_t size);

/* The record the job's ranks on this host share, mapped (NULL: alone). */
struct ag_speed_job *ag_speed_job_map(const char *own);

/* Right after the program's host synchronization returned (a call of flush reason
 * AG_FLUSH_SYNC, a query that found the work done, a held copy into host memory, a
 * synchronous copy that reached the driver): one clock read, and a step when due. */
void ag_speed_sync(void);

/* Kernel launches the program made while the guard had graphing paused. */
unsigned long ag_speed_launches_paused(void);

/* Its lines of the exit summary, with ag_speed_launches_paused's count (the one the
 * summary's graphed_share was computed with). */
void ag_speed_summary(FILE *out, const char *prefix, unsigned long launches_paused);

#endif
