/* engine_internal.h -- the engine's data, shared by the engine's files only.
 *
 *   record   window: the ops submitted since the last flush point (record_window.c),
 *            with their stream slots, event links and the period detector's state;
 *            light recording and its per-thread queue (record_light.c); skimming,
 *            fingerprints only, where nothing repeats for long (record_skim.c)
 *   match    replay: a template being matched against incoming ops (match_replay.c)
 *   build    template: a window (or one period of it) built into graphs, cut into
 *            chunks, each with its executable variants (build_template.c); tune:
 *            chunk plans tried and chosen per window shape (build_tune.c); the
 *            bounds on the graphs kept (build_cache.c)
 *   replay   a chunk's launch (replay_chunk.c), on the launcher thread
 *            (replay_launcher.c); the program's event destroys (replay_events.c)
 *   report   counters for the exit summary and the explain log (report_stats.c)
 * There is one engine per CUDA context (engine_table.c): its window, templates,
 * replay, launcher and counters, guarded by its own lock (engine.c).  The code of the
 * stages reads `ag_eng`, the calling thread's engine; what the process shares (the
 * program's captures, hooks, dumps, thread and template numbering) is `ag_sh`.
 */
#ifndef AG_ENGINE_INTERNAL_H
#define AG_ENGINE_INTERNAL_H

#include "engine.h"
#include "engine_lock.h"

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include <autograph.h>   /* the hooks' types */

#define AG_EVMAP_SIZE  256     /* distinct events in one window */
#define AG_LAST_SIZE   4096    /* period detector's table of last positions */
#define AG_PERIOD_MAX  4096    /* longest period looked for */
#define AG_WINDOW_MAX  (1u << 17)  /* ops in one window before it is cut */
#define AG_OP_SEEN     4       /* distinct arg values remembered per op of a chunk */
#define AG_BUILD_TRIES 3       /* builds tried per window before giving up */
#define AG_MAX_DROPS   3       /* graphs of one window dropped by the program's destroys
                                * and unloads before it is no longer built */
#define AG_DROPS_SIZE  64      /* windows whose drops are counted (by hash) */
#define AG_MISMATCH_RETIRE 16  /* a template whose replays stopped early this often, and
                                * four times as often as they ran to its end, goes: a
                                * period cut from a program's first steps, or a window
                                * that only starts like it, would hold and issue ops
                                * back for nothing; its window is graphed anew */
#define AG_SUBPERIOD_RING  16   /* broken runs of period templates remembered */
#define AG_SUBPERIOD_APART 4    /* ... equally far apart that show a longer period */
#define AG_SUBPERIOD_LOOK  4    /* its lengths of eager ops it is looked for */
#define AG_BACKOFF_STRIKES 4   /* templates retired for their stops before a back-off */
#define AG_BACKOFF_FEW     4   /* ... each after fewer replays to its end than this */
#define AG_BACKOFF_PROVEN  16  /* replays to its end that clear the strikes */
#define AG_BACKOFF_WINDOWS 64u /* judged windows of a first back-off; each doubles */
#define AG_BACKOFF_LEVELS  6   /* doublings at most */
#define AG_BACKOFF_SPAN    64  /* ops of a window counted as one more judged window */

/* Why a window was not made into a graph. */
enum ag_skip {
    AG_SKIP_NONE,
    AG_SKIP_WARMUP,        /* seen fewer than AUTOGRAPH_WARMUP times in a row */
    AG_SKIP_SHAPE_VARIES,  /* differs from the window before it */
    AG_SKIP_SHORT,         /* fewer than AUTOGRAPH_MIN_OPS work ops (events not counted) */
    AG_SKIP_FAILED_OP,     /* an op failed when issued */
    AG_SKIP_PTDS_THREADS,  /* per-thread default stream in a multi-threaded process */
    AG_SKIP_LEGACY_MIX,    /* the legacy stream together with blocking streams */
    AG_SKIP_STREAMS,       /* more streams than AG_MAX_SLOTS */
    AG_SKIP_EVENTS,        /* more events than AG_EVMAP_SIZE (in the slice judged) */
    AG_SKIP_CONTEXT,       /* ops of several contexts */
    AG_SKIP_APP_CAPTURE,   /* the program was capturing a stream itself */
    AG_SKIP_BUILD_FAILED,  /* the backend could not build or instantiate it */
    AG_SKIP_TOO_LONG,      /* AG_WINDOW_MAX ops without a sync or a period */
    AG_SKIP_LIGHT,         /* recorded light (no args): its repeat was not expected */
    AG_SKIP_DROPPED_OFTEN, /* its graphs were dropped AG_MAX_DROPS times by the program */
    AG_SKIP_BACKOFF,       /* templates kept being retired: none made for a while */
    AG_SKIP_COUNT
};

struct ag_wop {                 /* one op of the window trace */
    AG_OP_ID;                   /* hash: the op's own (kind, entry, shape); slot: the
                                 * window's own stream numbering */
    uint64_t key;               /* hash + slot + event link: what repeats compare */
    uintptr_t ctx;
    uint32_t shape_off, args_off;   /* in the window arena */
    uint32_t link_back;         /* EVENT_WAIT: ops back to its event's record; 0 none */
    unsigned char held;         /* held back by a replay, not issued yet */
    unsigned char light;        /* recorded light: no shape or args in the arena */
};

struct ag_evpos { uintptr_t event; uint32_t pos, gen; };
struct ag_lastpos { uint64_t key; uint32_t pos, gen; };

struct ag_window {              /* what every op appended touches, in two lines */
    struct ag_wop *ops;
    size_t n, cap;
    uintptr_t ctx;              /* context of its full ops (0: none yet) */
    uint64_t hash;
    unsigned char *arena;
    size_t used, arena_cap;
    size_t kernels;
    int nslots;
    uint32_t gen;               /* generation of evmap and last entries */
    uintptr_t slot_key[AG_MAX_SLOTS];
    size_t full_from;           /* ops [full_from, n) were recorded in full */
    enum ag_skip ineligible;    /* first reason found, or AG_SKIP_NONE */
    struct ag_evpos evmap[AG_EVMAP_SIZE];
    size_t events_from;         /* no slice starting before it is graphed: the event map
                                 * was pruned of records there (record_window.c) */
    /* period detection over ops [period_base, n) that were issued eagerly */
    size_t period_base, period, run;
    size_t cut_end;             /* a period found: where its template is to end (0: none) */
    /* the skim fingerprint of its ops (match_futile.c), valid while no op was held */
    uint64_t fingerprint;
    int fingerprint_valid;
    /* the program's own time between its calls: from the return of an op issued
     * eagerly to the arrival of the next op (full path only; engine.c) */
    uint64_t last_return_ns, program_ns;
    uint32_t program_gaps;
    struct ag_lastpos last[AG_LAST_SIZE];
};

struct ag_top {                 /* one op of a template, a cache line */
    AG_OP_ID;                   /* stream: the key it had when recorded; link: template
                                 * index of an EVENT_WAIT's record, or external */
    uint64_t key;
    uint32_t shape_off, args_off;   /* args_off: in its chunk */
};
_Static_assert(sizeof(struct ag_top) <= 64, "a template op fills one cache line");

struct ag_variant {
    void *exec;
    unsigned char *args;        /* the args its nodes hold now */
    uint64_t used;              /* replay clock of its last use */
};

struct ag_chunk {
    int begin, end;             /* template ops [begin, end) */
    void *graph;
    void **nodes;               /* per op of the chunk */
    int nslots;                 /* template slots the chunk uses, launch slot first */
    unsigned char slots[AG_MAX_SLOTS];
    size_t args_len, kernels;
    unsigned char *base;        /* the args the graph was built with */
    int nvariants;
    struct ag_variant *variants;
    uint64_t (*seen)[AG_OP_SEEN];   /* per op: hashes of its latest distinct args */
    int want_variant;           /* its last launch asked for a new variant */
    int collective;             /* its last op is a collective or a host function:
                                 * launched at that op's call, never handed to the
                                 * launcher thread */
};

struct ag_plan {                /* how a template is cut into chunks */
    int first, growth;          /* the first chunk's length; each next is growth x */
};

struct ag_tuning;               /* a template's replays being timed (build_tune.c) */

struct ag_template {            /* a held op reads its first line */
    struct ag_top *ops;
    unsigned char *shapes;
    struct ag_chunk *chunks;
    uintptr_t ctx;              /* context of its ops */
    int nops, nslots, nchunks;
    unsigned id;
    uint64_t hash;              /* of the ops it was built from (the lookup key) */
    uint64_t start_key;         /* key of its first op */
    int paced;                  /* its program slower than its GPU: chunks short towards
                                 * its end (build_template.c) */
    int from_period;            /* cut from a run by period detection: it recurs within
                                 * one window, so a stop does not bar it there */
    unsigned char suspended;    /* a part of a longer period: no replay starts with it
                                 * for now (match_subperiod.c) */
    unsigned char confirmed;    /* ... came back after a probation: never suspended again */
    struct ag_plan plan;        /* its chunk plan */
    struct ag_tuning *tuning;   /* NULL unless its plan is being timed */
    uintptr_t slot_fixed[AG_MAX_SLOTS];   /* special stream a slot must map to, or 0 */
    size_t kernels;
    int retired, failed;        /* failed: a stub for a window that did not build */
    int build_attempts;
    unsigned long replays, mismatches;
    uint64_t used;              /* replay clock of its last launch, or of its build */
    unsigned start_score;       /* windows of its shape lately (ag_template_credit) */
    struct ag_template *next_same_start;
    UT_hash_handle hh;          /* by hash */
};

/* Whether t's chunks are cut from its last op: paced, with chunks that grow towards
 * its start (no launcher thread); every other plan is cut from the first op. */
static inline int ag_plan_from_end(const struct ag_template *t)
{
    return t->paced && t->plan.growth > 1;
}

struct ag_start {               /* templates by the key of their first op */
    uint64_t key;
    struct ag_template *list;
    struct ag_template *preferred;  /* the one a replay starts with (find_start) */
    UT_hash_handle hh;
};

struct ag_replay {              /* read by every held op: its first line first */
    struct ag_template *t;      /* NULL: not replaying */
    int pos, chunk;             /* next template op, chunk being matched */
    unsigned slot_set;          /* bit per template slot already mapped */
    unsigned char *pending;     /* args of the chunk being matched */
    unsigned char *pending_out; /* the other buffer: the chunk before's, which may be
                                 * with the launcher (replay_launcher.c) */
    size_t base;                /* window position of template op 0 */
    uintptr_t slot_key[AG_MAX_SLOTS];
    size_t pending_cap;
    unsigned stopped_id;        /* the template whose replay stopped last, and the */
    unsigned long stopped_window;   /* window it stopped in (s.windows then) */
    enum ag_flush_reason ended_by;  /* the flush point that stopped it, if one did */
    unsigned long defer_replay; /* the replay (engine_scope.c) whose observer */
    unsigned defers;            /* queries were answered "not ready", and how many */
};

struct ag_stats {               /* those a replay counts first, in one cache line */
    unsigned long held_fast;    /* launches held by the replay's fast path */
    unsigned long held_runtime; /* of those, at the runtime's launch call */
    unsigned long held_fast_events; /* event records and waits held that way */
    unsigned long replays, chunk_launches, launches_graphed, patches;
    double patch_us, chunk_launch_us;  /* replays: patching executables, launching chunks */
    unsigned long windows, templates, build_failures, variants;
    unsigned long launches_eager, launches_held_issued;
    unsigned long mismatches, period_cuts, retired, issue_failures, unrecorded;
    unsigned long light_windows, light_ops, freed_kept, skimmed_windows, skimmed_ops;
    unsigned long futile_shapes;    /* window shapes found futile (match_futile.c) */
    unsigned long backoffs;         /* back-offs from making templates (match_backoff.c) */
    unsigned long subperiods;       /* period templates suspended as parts of longer ones */
    unsigned long superseded;       /* ... then dropped for the longer period cut */
    unsigned long rematches;        /* replays moved to a template with the same start */
    unsigned long queries_passed;   /* queries that saw no held op: no window ended */
    unsigned long queries_deferred; /* observers' queries of held records: "not ready" */
    unsigned long futile_windows;   /* windows of futile shapes skimmed */
    unsigned long evicted;      /* templates dropped by a cache bound (build_cache.c) */
    unsigned long paced;        /* templates of slow programs: chunks short at the end */
    unsigned long tune_rebuilds;    /* templates dropped to try another chunk plan */
    unsigned long tuned;        /* window shapes whose chunk plan tuning ended */
    unsigned long collective_cuts;  /* chunk ends put after collectives (build_collective.c) */
    unsigned long host_func_cuts;   /* ... and after host functions */
    unsigned long events_parked;    /* event nodes parked when their event was destroyed */
    unsigned long events_repointed; /* event nodes patched to the program's event */
    unsigned long destroys_in_window;  /* event destroys made within a window, which went on */
    unsigned long destroys_held;    /* of those, held until the ops naming the event went out */
    unsigned long launches_threaded;   /* chunk launches the launcher thread made */
    unsigned long launches_taken_back; /* chunk launches handed off, then made inline */
    unsigned long cross_context;    /* event ops across engines: every window ended */
    size_t graph_bytes_peak;    /* most (estimated) bytes held by executable graphs */
    unsigned long flush[AG_FLUSH_REASON_COUNT];
    unsigned long skip[AG_SKIP_COUNT];
    double build_us, instantiate_us;
    double launch_wait_us;      /* program's threads waiting for the launcher thread */
};

#define AG_SKIM_RECENT 16       /* skimmed windows a repeat is looked for among */
struct ag_skim {
    int on;                     /* skimming: ops are only fingerprinted */
    uint64_t running;           /* the fingerprint being folded (record_skim.c) */
    uint64_t fingerprint;       /* of the current window's skimmed ops */
    unsigned long ops;          /* skimmed ops in the current window */
    uint64_t recent_fingerprint[AG_SKIM_RECENT];   /* the last skimmed windows' (at
                                 * flush points), and their op counts */
    unsigned long recent_ops[AG_SKIM_RECENT];
    unsigned recent_next;
    unsigned long streak;       /* skimmed windows since skimming started */
    int futile;                 /* started for futile shapes (match_futile.c): a window
                                 * longer than any of them stops it */
    unsigned last_futile;       /* the futile shape whose window started or last went on
                                 * with this skim: its slot + 1 (0: none) */
    unsigned record_after;      /* the futile shape after whose skimmed window recording
                                 * went back to full for the window now recorded: its
                                 * slot + 1 (0: none) */
};

/* A window shape's chunk plan tuning (build_tune.c): the candidate being tried,
 * or, done, the one chosen; the median replay period each candidate had, and the
 * interquartile range of its periods. */
#define AG_TUNE_PLANS 3
#define AG_TUNE_SIZE  256
struct ag_tune {
    uint64_t hash;              /* the window shape (template hash); 0: free */
    unsigned char stage, done, best;
    unsigned char alike;        /* its candidates cut chunks alike (a paced template's) */
    unsigned char single;       /* the configured plan leaves it in one chunk */
    uint16_t replays;           /* periods timed per candidate */
    uint32_t median_ns[AG_TUNE_PLANS], iqr_ns[AG_TUNE_PLANS];
};

/* The window shape that followed a window shape (build_template.c): a replay starts
 * with the template of that shape where several start with the same op. */
#define AG_SUCCESSORS      256     /* window shapes whose successor is kept (by hash) */
#define AG_SUCCESSOR_WAYS  4       /* ... in sets of this many, the oldest replaced */
#define AG_SUCCESSOR_SURE  2       /* times in a row before it is relied on */
struct ag_successor { uint64_t before, next; unsigned streak; uint32_t noted; };

/* A window shape the engine cannot graph (match_futile.c). */
#define AG_FUTILE_SIZE     64      /* shapes remembered */
#define AG_FUTILE_AFTER    3       /* judged ungraphable this often: futile */
#define AG_FUTILE_RECHECK  256     /* skimmed repeats between two full judgements */
#define AG_FUTILE_HOLD_OFF 8       /* judged windows without futile skimming after a
                                    * skimmed repeat of another shape */
#define AG_FUTILE_BEFORE   8       /* windows remembered as coming before one shape */
struct ag_futile {
    uint64_t hash;              /* the window's hash (0: free) */
    uint64_t fingerprint;       /* its skim fingerprint and op count */
    uint64_t before[AG_FUTILE_BEFORE];  /* hashes of windows judged before it, the
                                 * latest distinct ones (a step whose shape cycles
                                 * through batch sizes has one per size) */
    uint32_t ops, judged, last, skimmed;
    uint32_t before_next;       /* the slot of before[] to overwrite next */
    int followed;               /* a longer window came after it while skimming: after
                                 * its skimmed window, the next one is recorded in full */
};

/* A window shape seen lately (engine.c): windows that come back in a cycle (A B C A
 * B C: a training step split by several syncs) repeat without repeating in a row. */
#define AG_RECENT_SIZE 64
struct ag_recent {
    uint64_t hash;
    uint32_t count;             /* times seen */
    uint32_t last;              /* ag_eng.judged when last seen */
};

/* A chunk's launch: readied under the engine lock (ag_chunk_prepare), fired on any
 * thread (ag_chunk_fire: the variant picked, the patches and the graph launch),
 * counted under the lock again (ag_chunk_count).  Between the three only the
 * launch's own data is touched: the job and its chunk's variants and seen hashes. */
struct ag_launch {
    struct ag_template *t;
    struct ag_chunk *c;
    struct ag_variant *v;       /* the executable it launches (picked when fired) */
    const unsigned char *args;  /* the chunk's args: the replay's pending args */
    uintptr_t streams[AG_MAX_SLOTS];   /* the chunk's slots' streams, launch slot first */
    int exact;                  /* v holds args already: no node to patch */
    uint64_t used;              /* the replay clock at its prepare: v's last use */
    size_t win_from, win_to;    /* its ops in the window (issued eagerly if it fails) */
    int rc;                     /* fired: 0 or the error */
    unsigned long patches, repointed;
    double patch_us, launch_us;
};

/* State of one file each, kept apart from the lines a held op reads. */
#define AG_DEAD_STREAMS 32         /* destroyed stream handles remembered */
struct ag_dead_streams {        /* engine.c: stream handles the program destroyed */
    uintptr_t ring[AG_DEAD_STREAMS];
    int next, count;            /* count: read unlocked by ag_engine_stream_created */
};

#define AG_DEAD_EVENTS 1024         /* destroyed handles remembered */
#define AG_HELD_DESTROYS 16         /* destroys held at once; one more ends the window */
struct ag_dead_event;
struct ag_events {              /* replay_events.c: the program's event destroys */
    struct ag_dead_event *dead;             /* by handle */
    uintptr_t ring[AG_DEAD_EVENTS];         /* in destroy order: the oldest goes */
    unsigned next;
    unsigned count;             /* read unlocked by ag_engine_event_created */
    uintptr_t held[AG_HELD_DESTROYS];       /* destroys held, in the program's order */
    int nheld;
};

struct ag_hook {
    autograph_hook_fn fn;       /* NULL: removed */
    void *user;
    autograph_hook_handle id;
    unsigned kind;              /* enum ag_hook_kind (report_introspect.h) */
};
struct ag_hooks {               /* engine_hooks.c: the introspection hooks */
    struct ag_hook list[AUTOGRAPH_HOOKS_MAX];
    int n;
    autograph_hook_handle last_id;
};

struct ag_dump {                /* report_dump.c: AUTOGRAPH_DEBUG_DUMP, the trace's graphs */
    char dir[2048], graphs_dir[2048];
    int on;
    int graphs_on;              /* atomic: set by the tracer, read by any thread */
    unsigned long graphs_written;   /* atomic */
    int told[2];                /* a folder's first failure reported (dump, trace) */
};

struct ag_launcher {            /* replay_launcher.c: the engine's launcher thread */
    int state;                  /* the futex word: AG_LAUNCH_IDLE .. _DONE */
    struct ag_launch job;       /* owned by the launcher from QUEUED to DONE */
    int sleeping;               /* the launcher waits for a launch */
    unsigned by_thread;         /* ag_thread_id of the thread that handed it off */
    int started;                /* 0: not yet, 1: running, -1: cannot be */
    uintptr_t ctx;              /* the launcher's current context */
    int may_spin;               /* the process may run on SPIN_MIN_CPUS or more */
};

#define AG_EXPLAINED_SIZE 4096

struct ag_engine {              /* a held op reads its first line, s's and w's first */
    struct ag_lock lock;        /* guards all of it (engine.c) */
    int index;                  /* in the table (engine_table.c) */
    const struct ag_backend *be;
    struct ag_replay r;
    uint64_t clock;             /* replays so far (variant LRU) */
    struct ag_stats s __attribute__((aligned(64)));
    struct ag_window w __attribute__((aligned(64)));
    struct ag_engine_params p;
    struct ag_template *by_hash;
    struct ag_start *by_start;
    uint64_t last_hash;         /* hash of the previous sync-delimited window */
    struct ag_recent recent[AG_RECENT_SIZE];   /* windows seen lately, not yet graphs */
    struct ag_drops { uint64_t hash; unsigned n; } drops[AG_DROPS_SIZE];  /* engine.c */
    struct ag_tune tunes[AG_TUNE_SIZE];         /* build_tune.c, by window hash */
    uint32_t judged;            /* sync-delimited windows judged so far */
    uint32_t long_window;       /* ops of the longest of them lately (decaying) */
    int light;                  /* record light: nothing has repeated for a while */
    int varied_streak;          /* sync-delimited windows in a row that differed */
    struct ag_skim k;
    struct ag_backoff {         /* match_backoff.c */
        unsigned strikes, level;
        unsigned long replayed, stopped;   /* replays to the end, and stopped, since */
        uint32_t until;         /* no template made before the clock reaches it */
        uint32_t spans;         /* long windows' spans of ops counted on the clock */
        size_t span_mark;       /* the window's op count when a span was last counted */
    } backoff;
    struct ag_subperiod {       /* match_subperiod.c */
        struct ag_template *done;   /* a period's template whose replay just ran out */
        uint64_t ops_before;    /* ops of the windows before this one */
        struct ag_break {       /* where a run broke (ops since start), and which */
            uint64_t at, tag;   /* template at which of its ops */
        } breaks[AG_SUBPERIOD_RING];
        unsigned nbreaks;
        int floor;              /* no period template this long or shorter is cut ... */
        uint64_t clock, until;  /* ... until the eager ops' clock reaches `until`; while
                                 * floor > 0, and only then, templates are suspended */
    } subperiod;
    struct ag_dead_streams dead_streams;
    struct ag_events ev;
    struct ag_template *building;   /* report_introspect.c: built, not registered yet */
    uint64_t explained[AG_EXPLAINED_SIZE];   /* report_stats.c: (hash, code) pairs told */
    struct ag_launcher launcher __attribute__((aligned(64)));  /* its thread's own lines */
    struct ag_futile futile[AG_FUTILE_SIZE];   /* match_futile.c */
    struct ag_successor successors[AG_SUCCESSORS];  /* build_template.c */
    int futile_hold_off;        /* judged windows before futile skimming may start */
    uint32_t futile_max_ops;    /* the most ops of a futile shape */
    uintptr_t key;              /* its context (0: engine 0 before its first op) */
    int device;                 /* its context's device ordinal, or -1 */
};

/* What the process shares, beside the engines (engine.c). */
struct ag_shared {
    int app_capturing;          /* the program's own captures in progress (atomic) */
    unsigned next_thread_id;    /* ag_thread_id's last (atomic) */
    unsigned next_template_id;  /* template ids, unique in the process (atomic) */
    struct ag_hooks hooks;      /* engine_hooks.c */
    struct ag_dump dump;        /* report_dump.c */
};
extern struct ag_shared ag_sh;

/* ---- the engines (engine_table.c) ---- */

#define AG_ENGINES_MAX 16       /* contexts with an engine; ops of more pass through */

/* The calling thread's engine: the one of the context of its last op, or the one an
 * engine-wide entry point is visiting (ag_engine_visit).  Every file of the engine
 * reads its state through `ag_eng`. */
#define ag_eng (*ag_thread_hot.eng)

/* The engine of context ctx, made on first use (NULL: the table is full); ctx 0:
 * the calling thread's. */
struct ag_engine *ag_engine_of(uintptr_t ctx);
/* The engine of ctx if it has one, else NULL. */
struct ag_engine *ag_engine_lookup(uintptr_t ctx);
int ag_engines_count(void);          /* engines made so far (read unlocked) */
static inline uintptr_t ag_engine_key(const struct ag_engine *e)   /* its context */
{
    return __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);   /* engine 0's is set once, late */
}
struct ag_engine *ag_engine_at(int i);
/* Makes e the calling thread's engine, no lock held; the light ops the thread queued
 * for the one before go in there first.  The one before. */
struct ag_engine *ag_engine_switch(struct ag_engine *e);
/* The light ops the calling thread queued go into its engine's window (no lock held). */
void ag_engine_drain_thread(void);
/* Engine `e` visited by a thread that may run in another context (a process-wide
 * flush): the thread's engine is e and its lock held (collect: as ag_engine_lock,
 * else as ag_engine_lock_replay).  _enter, before work that needs the driver in its
 * context (ending a window builds graphs): with several engines, its context is made
 * current until _end, where it has work.  _end gives all back. */
struct ag_visit { struct ag_engine *was; int token, entered; };
void ag_engine_visit(struct ag_engine *e, struct ag_visit *v, int collect);
void ag_engine_visit_enter(struct ag_visit *v);
void ag_engine_visit_end(struct ag_visit *v);

/* The engine whose window recorded an event last (a table by handle; a collision
 * forgets): a wait on an event another engine records must not be held. */
void ag_event_owner_note(uintptr_t event);          /* recorded by ag_eng */
int ag_event_owner(uintptr_t event);                /* engine index, or -1: unknown */
void ag_event_owner_forget(uintptr_t event);
/* Whether event op (kind, event) of ag_eng's window crosses engines: a record of an
 * event another engine records, or a wait (link_back: ag_window_link_back's) on an
 * event this engine does not record, while there are several engines. */
int ag_event_crosses(int kind, uintptr_t event, uint32_t link_back);

/* The calling thread's engine made that of context ctx (0: it stays); NULL when ctx
 * has none and the table is full.  While a thread stays in one context: a compare. */
struct ag_engine *ag_engine_select_slow(uintptr_t ctx);
static inline struct ag_engine *ag_engine_select(uintptr_t ctx)
{
    struct ag_thread_hot *th = &ag_thread_hot;
    if (__builtin_expect(ctx == 0 || ctx == th->eng_ctx, 1))
        return th->eng;
    return ag_engine_select_slow(ctx);
}

/* engine_scope.c: an event op that crosses engines (every window ends first). */
void ag_engine_cross_context(const struct ag_op *op);

/* engine.c: one engine's part of the entry points of engine_scope.c */
void ag_engine_end_window(enum ag_flush_reason reason);   /* held ops issued, judged */
void ag_engine_drop_all(const char *why);
int ag_engine_drop_unloaded(int entry, uintptr_t handle);
void ag_stream_alive(uintptr_t stream);
void ag_engine_count_freed(uintptr_t base, size_t size);
void ag_stream_gone(uintptr_t stream);
void ag_window_bound(void);          /* a replay ended: a window too long ends */
/* match_replay.c: whether held ops touch a stream key or record an event */
int ag_replay_holds(uintptr_t stream, uintptr_t event);
/* Whether work on `stream` is implicitly ordered with the legacy stream's. */
int ag_stream_syncs_with_legacy(uintptr_t stream);
void ag_light_gate_update(void);     /* after light, r.t, app_capturing or threads change */
int ag_stream_is_dead(uintptr_t stream);
void ag_engine_lock(void);          /* ag_eng's: also drains the calling thread's light
                                     * queue and collects a chunk launch handed off */
void ag_engine_lock_replay(void);   /* the replay's fast path: no collect */
void ag_engine_unlock(void);
void ag_engine_take_light(const struct ag_op *op);  /* a light op issued eagerly */
unsigned ag_thread_id(void);
unsigned ag_threads_seen(void);     /* threads that ever offered an op */
double ag_now_us(void);

/* record_window.c */
void ag_window_reset(struct ag_window *w);
struct ag_wop *ag_window_append(struct ag_window *w, const struct ag_op *op);
/* The program destroyed `event`: the window's ops that name it forget it (their event
 * and args become 0: the backend's placeholder), and a later wait on a new event with
 * its handle is not linked to its record. */
void ag_window_forget_event(struct ag_window *w, uintptr_t event);
/* An op the replay's fast path matched, held: what ag_window_append does for it, with
 * the template op's hash, shape and layout, less what such an op cannot need (a
 * context or a light recording to check: it matched a template op of the window's
 * context).  A kernel launch goes in with ag_window_append_held (event and kind are
 * not read), an event record or wait with ag_window_append_held_event (a record's
 * event linked as ag_window_append links it; a wait's link_back is the one the caller
 * found matching it, ag_window_link_back's). */
struct ag_held_op {
    uint64_t hash;
    uintptr_t stream, event;
    uint32_t link_back;
    const void *layout;
    const unsigned char *shape, *args;
    uint32_t shape_len, args_len;
    unsigned short entry;
    unsigned char kind;
};
struct ag_wop *ag_window_append_held(struct ag_window *w, const struct ag_held_op *h);
struct ag_wop *ag_window_append_held_event(struct ag_window *w, const struct ag_held_op *h);
/* The link_back an event wait on `event` appended next would get (0: none in the
 * window). */
uint32_t ag_window_link_back(struct ag_window *w, uintptr_t event);
int ag_window_period(struct ag_window *w, size_t *start);
void ag_window_view(const struct ag_window *w, size_t i, struct ag_op *out);

/* The hash of an op's args in a chunk's seen[] (build_template.c, replay_chunk.c). */
static inline uint64_t ag_args_hash(const unsigned char *args, size_t len)
{
    return ag_hash_bytes(0x243f6a8885a308d3ull, args, len);
}

/* build_template.c */
struct ag_template *ag_template_build(const struct ag_window *w, size_t a, size_t b,
                                      int attempts);
void ag_template_free(struct ag_template *t);
struct ag_template *ag_template_find_start(uint64_t start_key);
/* Whether ops a and b (identity and shape bytes) are the same op: the same kind,
 * sizes and shape, or kernel launches through the same entry point whose shapes agree
 * past the function (op.h: AG_KERNEL_FUNC_BYTES; the args carry the function, and a
 * replay patches it).  match_replay.c. */
int ag_same_identity(const struct ag_op_id *a, const unsigned char *a_shape,
                     const struct ag_op_id *b, const unsigned char *b_shape);
/* Another template a replay of t stopped at op pos of its chunk `chunk` can go on
 * with, from its chunk *alt_chunk (match_replay.c's rematch), or NULL. */
struct ag_template *ag_template_same_prefix(const struct ag_template *t, int pos, int chunk,
                                            int (*takes)(struct ag_template *cand),
                                            int *alt_chunk);
void ag_successor_note(uint64_t before, uint64_t next);   /* a judged window followed one */
void ag_light_note_start(uint64_t start_hash);   /* the filter of first ops (engine.h) */
void ag_light_forget_starts(void);
void ag_template_credit(struct ag_template *t);   /* a window of its shape ended */
/* build_cuts.c: moves the chunk plan's cuts of a template on several streams to
 * where they add no order the program does not have (merging chunks), or onto a cut
 * that must be made anyway (must_cut[p]: before op p; NULL: none). */
void ag_chunks_keep_order(struct ag_template *t, const unsigned char *must_cut);
/* build_collective.c: *ends gets, per position p in [1, nops], 1 when op p - 1 of t
 * is a collective or a host function (a chunk must end there), or NULL when t has
 * none; 0 when out of memory.  ag_chunks_end_collectives then cuts t's chunks there
 * too. */
int ag_collective_ends(const struct ag_template *t, unsigned char **ends);
int ag_chunks_end_collectives(struct ag_template *t, const unsigned char *ends);
int ag_plan_lengths(int nops, struct ag_plan plan, int *lens, int cap);
void ag_template_retire(struct ag_template *t, const char *why);
unsigned long ag_templates_held(void);   /* in every engine (read unlocked) */
/* Graphs holding a pointer into [lo, hi) (built with or patched to it, any variant). */
int ag_templates_count_pointing_into(uintptr_t lo, uintptr_t hi);
/* Graph t goes because the program destroyed an event of it or unloaded a module of
 * its kernels (engine.c counts those before a first replay: AG_MAX_DROPS, then its
 * window is no longer built). */
void ag_note_program_drop(const struct ag_template *t);

/* replay_chunk.c */
/* Template op i as an op the backend takes, with `args` as its args. */
void ag_template_op_view(const struct ag_template *t, int i, const unsigned char *args,
                         struct ag_op *out);
/* One more executable of chunk c, made from its graph, holding c->base: 0 or the
 * backend's error. */
int ag_chunk_new_variant(struct ag_chunk *c);
void ag_chunk_drop_variants(struct ag_chunk *c);   /* every executable of c goes */
int ag_chunk_prepare(struct ag_template *t, struct ag_chunk *c, const unsigned char *args,
                     const uintptr_t *slot_key, struct ag_launch *job);
void ag_chunk_fire(struct ag_launch *job);
int ag_chunk_count(const struct ag_launch *job);

/* replay_events.c */
int ag_event_is_dead(uintptr_t event);
void ag_events_made(uintptr_t event);            /* a new event with this handle */
int ag_events_destroying(uintptr_t event);       /* AG_DESTROY_* in this engine */
void ag_events_mark_dead(uintptr_t event);   /* its handle is not held until made again */
int ag_events_park(struct ag_template *t, uintptr_t event);   /* -1: t must go */
void ag_events_forget_all(void);
void ag_events_release_held(void);  /* the held ops went out: the held destroys are made */

/* match_replay.c */
int ag_replay_try_start(struct ag_wop *first_candidate_unused, const struct ag_op *op);
int ag_replay_offer(const struct ag_op *op);
extern const char ag_stop_window_end[];  /* the stop a window's end makes (a flush) */
void ag_replay_abort(const char *why);
void ag_replay_mismatch(const char *why);   /* abort; a template that keeps stopping goes */
void ag_replay_window_ended(enum ag_flush_reason reason);  /* a flush stopped the replay */
void ag_issue_held(size_t from);
void ag_issue_ops(size_t from, size_t to);   /* window ops [from, to), held or not */

/* replay_launcher.c; ag_launch_state (engine.h) takes these values */
enum { AG_LAUNCH_IDLE, AG_LAUNCH_QUEUED, AG_LAUNCH_RUNNING, AG_LAUNCH_DONE };
int ag_launch_hand_off(const struct ag_launch *job);  /* 0, or the inline launch's error */
void ag_launch_collect(void);       /* engine lock held: the chunk handed off is done */
/* engine.c: a chunk launch collected with an error (its ops issued, the graph gone). */
void ag_engine_launch_failed(const struct ag_launch *job);
/* engine.c: the program's `event` is gone (replay_events.c, the destroy flush point). */
void ag_engine_event_gone(uintptr_t event);
int ag_launch_pending(void);        /* a chunk handed off is not collected yet */
int ag_launch_names_event(uintptr_t event);   /* the chunk out records or waits on it */
int ag_launcher_available(void);    /* paced chunks can be handed to the launcher */

/* build_tune.c */
extern uint64_t (*ag_tune_clock)(void);   /* ns; the unit tests set their own */
void ag_tune_choose(struct ag_template *t);        /* at build: sets t->plan */
int ag_tune_replay_starts(struct ag_template *t);  /* 0: t was dropped for a rebuild */
void ag_tune_forget(void);                         /* the tests' reset */

/* record_light.c */
void ag_light_choose(int repeated);  /* after a sync-delimited window: light or full */
void ag_light_stop(void);            /* full recording from now on */
int ag_light_wants_full(const struct ag_op *op);
void ag_light_drain(void);

/* record_skim.c */
void ag_skim_drain(void);           /* engine lock held: the thread's skimmed ops go in */
void ag_skim_futile(void);          /* skim from the next op: a futile shape comes */
int ag_skim_take(const struct ag_op *op);   /* a light op still skimmed: 1 */
void ag_skim_choose(void);          /* after a light window that differed */
void ag_skim_stop(const char *why);
void ag_skim_window_end(enum ag_flush_reason reason, int alone);

/* match_backoff.c */
void ag_backoff_strike(void);
void ag_backoff_replayed(const struct ag_template *t);
void ag_backoff_stopped(void);
void ag_backoff_window_grew(const struct ag_window *w);
int ag_backoff_active(void);

/* match_subperiod.c */
void ag_subperiod_replayed(struct ag_template *t);  /* t's replay ran to its end */
void ag_subperiod_next_op(void);    /* the op after it: a replay started or not */
void ag_subperiod_stopped(struct ag_template *t);   /* t's replay stopped (not a flush) */
void ag_subperiod_window_end(void);
void ag_subperiod_forget(const struct ag_template *t);  /* t is being retired */
int ag_subperiod_floor(void);       /* an eager op: the floor on period lengths, or 0 */
void ag_subperiod_cut(const struct ag_template *longer);    /* a period was cut */

/* match_futile.c */
uint64_t ag_futile_fold(uint64_t fingerprint, uint64_t word);
int ag_futile_reason(enum ag_skip why);
/* A full window judged ungraphable for `why`; `before`: the hash of the window judged
 * before it.  A shape judged so AG_FUTILE_AFTER times is futile: 1 when skimming is to
 * start (ag_skim_futile). */
int ag_futile_judged(const struct ag_window *w, enum ag_skip why, uint64_t before);
/* A window of hash `hash` was judged: 1 when a futile shape follows it and skimming is
 * to start. */
int ag_futile_window_end(uint64_t hash);
/* A skimmed window ended at a flush point: 1 when it is a futile shape's (skimming
 * goes on), 0 when it is not, -1 when it is but the next one is to be recorded in full
 * and judged again, 2 when it is one that a longer window follows (the next window is
 * to be recorded in full: ag_futile_followed). */
int ag_futile_skimmed(uint64_t fingerprint, unsigned long ops);
void ag_futile_followed(void);      /* the skimmed window outgrew the futile shapes */
/* A full window was judged (futile_reason: for a reason that makes it futile): a
 * window recorded after a followed futile shape that is futile too ends the rule. */
void ag_futile_next_judged(int futile_reason);
void ag_futile_hold_off(void);      /* a skimmed repeat of another shape stopped skimming */
void ag_futile_forget(void);

/* report_stats.c */
const char *ag_skip_name(enum ag_skip why);
void ag_explain_skip(const struct ag_window *w, enum ag_skip why);
void ag_explain(uint64_t hash, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
