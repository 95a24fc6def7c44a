/* engine.h -- the auto-graphing engine, as the interception layer calls it.
 *
 * Pipeline, one file prefix per stage, engine.c coordinating:
 *   intercept  intercept_*.c: the CUDA entry points
 *   record     record_ops.c and record_kernel.c make a struct ag_op; record_window.c
 *              appends it to the window, record_light.c and record_skim.c where
 *              nothing repeats
 *   match      match_replay.c: incoming ops against a template, held back
 *   build      build_template.c (templates, chunks, executables), build_tune.c,
 *              build_cache.c, through a struct ag_backend
 *   replay     replay_chunk.c (a chunk's launch), replay_launcher.c, replay_events.c
 *   report     report_stats.c, report_dump.c, report_introspect.c, engine_hooks.c
 * No CUDA types: the engine is tested with a fake backend (tests/unit).
 *
 * Calling convention for a recordable call:
 *     if (ag_engine_offer(&op) == AG_HELD) return success;     // held back
 *     result = <the real call>;  ag_engine_done(&op, result);   // issued eagerly
 * The engine lock is held from an AG_EAGER answer until ag_engine_done, so that
 * the order the engine sees is the order the driver sees.
 */
#ifndef AG_ENGINE_H
#define AG_ENGINE_H

#include "backend.h"
#include "flush_points.h"
#include "op.h"

/* Each context has an engine of its own (engine_table.c); an op goes to its context's.
 * AG_PASS: the engine is off or stepping aside: make the call, no ag_engine_done.
 * AG_RECORD_FULL: a light op (op.h) that the engine needs in full: record the call
 * again with ag_record_light = 0 and offer it again (no ag_engine_done).
 * AG_QUEUED: ag_engine_light_push took a light op without the lock: make the call;
 * if it fails, call ag_engine_light_failed (no ag_engine_done). */
enum { AG_EAGER = 0, AG_HELD = 1, AG_PASS = 2, AG_RECORD_FULL = 3, AG_QUEUED = 4 };

/* tune_replays: only windows the configured chunk plan leaves in one chunk are tuned,
 * each candidate over AG_TUNE_AUTO_REPLAYS replays (build_tune.c). */
#define AG_TUNE_AUTO (-1)
#define AG_TUNE_AUTO_REPLAYS 32

struct ag_engine_params {
    int warmup;          /* a window seen this many times in a row becomes a graph */
    int min_ops;         /* shorter windows are not worth a graph */
    int chunk_first;     /* size of the first replay chunk; each later one is... */
    int chunk_growth;    /* ...this many times the one before (at least 1)... */
    int chunk_max;       /* ...up to this */
    int chunk_slow_ns;   /* a window whose program spends more than this between its
                          * calls (mean, outside the driver) keeps chunk_first-sized
                          * chunks (0: always growing; build_template.c) */
    int tune_replays;    /* replays timed per candidate chunk plan (0: no tuning;
                          * AG_TUNE_AUTO: windows left in one chunk only; build_tune.c) */
    int max_variants;    /* executable graphs kept per chunk for alternating args */
    int period_min;      /* shortest template cut by period detection */
    int light_after;     /* record light after this many differing windows in a row (0: never) */
    int skim_after;      /* then skim after this many more (0: never; record_skim.c) */
    int explain;         /* print why windows were not graphed */
    int keep_graph;      /* instantiate a chunk at its first replay, not when built */
    int cut_anywhere;    /* cut windows on several streams as planned, even where a cut
                          * orders independent streams (build_cuts.c) */
    int max_graphs;      /* templates kept; least recently used dropped (0: no bound) */
    int max_graph_mb;    /* MiB (estimated) held by executable graphs (0: no bound) */
    const char *dump_dir;  /* AUTOGRAPH_DEBUG_DUMP folder, or NULL */
    int destroy_flush;   /* an event's destroy ends the window (replay_events.c) */
    int launch_thread;   /* chunks are launched by the engine's own thread: an enum
                          * ag_launch_thread (config.h; replay_launcher.c) */
    int launch_spin_ns;  /* after a launch it waits awake this long for the next */
    int launch_poll_ns;  /* ... looking after naps this long (0: spinning) */
};

/* Starts the engine (once).  Until then every call passes through. */
void ag_engine_setup(const struct ag_backend *backend, const struct ag_engine_params *p);
int ag_engine_running(void);

/* autograph_disable() or the speed guard (match_speed.h) in effect (read unlocked):
 * recordable calls go straight to the driver, unrecorded, as with AUTOGRAPH=off;
 * flush points still reach the engine until it holds nothing (ag_engine_quiet).  A bit
 * for each who paused. */
enum { AG_PAUSE_API = 1, AG_PAUSE_GUARD = 2 };
extern int ag_engine_paused;
static inline int ag_engine_is_paused(void)
{
    return __atomic_load_n(&ag_engine_paused, __ATOMIC_RELAXED);
}

/* Paused, once every engine was found holding nothing (ag_engine_note_quiet: no window,
 * replay, skimmed ops or chunk launch out), a flush point has nothing to end: the
 * wrappers then skip the engine (ag_engine_quiet) until the pause changes, which moves
 * ag_pause_epoch. */
extern unsigned ag_pause_epoch;
extern unsigned ag_quiet_epoch;
static inline int ag_engine_quiet(void)
{
    return __atomic_load_n(&ag_engine_paused, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&ag_quiet_epoch, __ATOMIC_ACQUIRE) ==
               __atomic_load_n(&ag_pause_epoch, __ATOMIC_ACQUIRE);
}
void ag_engine_note_quiet(void);
extern unsigned long ag_quiet_flush_points;    /* flush points passed so (summary) */

/* Whether the engine would take a recorded op now (read unlocked): not while the
 * program captures a stream itself or autograph_disable() is in effect.  The recorders
 * ask before work that only a held op needs (staging a copy: record_stage.c), which
 * must not touch the driver in the middle of the program's capture. */
int ag_engine_takes_ops(void);

/* Before another call of the program reaches the driver: the chunk launch that the
 * calling thread's engine handed to its launcher thread, if one is out, is made first
 * (replay_launcher.c; another engine's, of another context, where the call is a flush
 * point of that engine).  ag_launch_state: the engines with a launch out, read
 * unlocked. */
extern int ag_launch_state;
void ag_launch_settle_slow(void);
static inline void ag_launch_settle(void)
{
    if (__atomic_load_n(&ag_launch_state, __ATOMIC_ACQUIRE))
        ag_launch_settle_slow();
}

/* Whether to record the next op light (a hint: ag_engine_offer has the last word). */
int ag_engine_light_hint(void);
int ag_engine_offer(struct ag_op *op);
/* A light op first: 1 (AG_QUEUED) when it was queued without the lock, 0 when it
 * must be offered. */
int ag_engine_light_push(const struct ag_op *op);
void ag_engine_light_failed(void);

/* The light fast path (record_light.c): a kernel launch of a single-threaded program
 * in light mode is hashed where it is called and queued, nothing else.  The gate is
 * open (1; 2 while skimming) while that is allowed; ag_light_starts has a bit per (hash >> 58) of every
 * template's first op (such an op must take the full path). */
extern int ag_light_gate;
extern uint64_t ag_light_starts;
static inline int ag_light_open(void)
{
    return __atomic_load_n(&ag_light_gate, __ATOMIC_RELAXED);
}
/* Skimming (record_skim.c) and no template to look out for: fingerprint the op. */
static inline int ag_skim_blind(void)
{
    return __atomic_load_n(&ag_light_gate, __ATOMIC_RELAXED) == 2 &&
           __atomic_load_n(&ag_light_starts, __ATOMIC_RELAXED) == 0;
}
int ag_engine_skim(uint64_t word, int kernel);
static inline int ag_light_may_start(uint64_t hash)
{
    return (int)((__atomic_load_n(&ag_light_starts, __ATOMIC_RELAXED) >> (hash >> 58)) & 1);
}
int ag_engine_light_queue(uint64_t hash, uint64_t skim, uintptr_t stream, int entry, int kind);
void ag_engine_done(const struct ag_op *op, int result);

/* The replay's fast path (match_replay.c): while a replay waits for its next op
 * (ag_replay_gate, read unlocked, is a hint), a kernel launch with parameters is
 * offered as its stream key, context and the backend's view of the
 * call; matches() says whether the call is the kernel op recorded with `shape`,
 * parameter layout `layout` and args_len bytes of args (the engine compares no
 * backend bytes itself), and when it is the template's next op, fill_args writes its
 * parameter bytes (args_len, as the recorder would) straight into the chunk's
 * pending args and the launch is held: 1.  0: the call must take the full path (a
 * mismatch, or no replay).  above_driver: the launch was offered at the runtime's
 * launch call (counted apart). */
extern int ag_replay_gate;
static inline int ag_replay_open(void)
{
    return __atomic_load_n(&ag_replay_gate, __ATOMIC_RELAXED);
}
struct ag_fast_kernel {
    int entry;
    uintptr_t stream, ctx;
    const void *call;
    int (*matches)(const struct ag_fast_kernel *k, const unsigned char *shape,
                   uint32_t shape_len, const void *layout, uint32_t args_len);
    void (*fill_args)(const struct ag_fast_kernel *k, const void *layout, unsigned char *dst);
    void *const *params;
    int above_driver;
};
int ag_engine_fast_kernel(const struct ag_fast_kernel *k);
/* The same for an event record or stream wait (kind AG_OP_EVENT_RECORD or
 * AG_OP_EVENT_WAIT) without flags, offered with the shape bytes its recorder would
 * write (the engine compares them with the template op's).  When it is the template's
 * next op (a wait: on an event recorded at the same place) it is held, its event
 * written as its args: 1; 0: it must take the full path. */
struct ag_fast_event {
    int entry, kind;
    uintptr_t stream, ctx, event;
    const unsigned char *shape;
    uint32_t shape_len;
};
int ag_engine_fast_event(const struct ag_fast_event *e);

/* A recordable entry point whose call could not be recorded (op->reject says
 * why): held work is issued and the window ends, as at any flush point. */
void ag_engine_unrecorded(const struct ag_op *op);

/* Before and after a call with a policy in ag_call_policy (flush_points.h).  arg0:
 * the call's first argument (a stream as its key, op.h, where the policy scopes a
 * stream); ctx: the context the call is about where its policy scopes one (the
 * calling thread's for the legacy and per-thread streams), else 0; observer: the
 * calling thread has never submitted work (a watchdog that polls).  ag_engine_before
 * returns AG_ANSWER_NOT_READY when the call (an observer's event query of a record a
 * replay holds) is to return "not ready" without reaching the driver, else 0. */
enum { AG_ANSWER_NOT_READY = 1 };
int ag_engine_before(int entry, uintptr_t arg0, uintptr_t ctx, int observer);
void ag_engine_after(int entry, int result);

/* Issues all held work and ends every engine's window (process exit, API flush). */
void ag_engine_flush(enum ag_flush_reason reason);

/* The program is freeing [base, base + size) (size 0: unknown, one byte): graphs
 * that hold a pointer into it are kept (their next replay patches those nodes) and
 * counted (kept_freed_memory). */
void ag_engine_memory_freed(uintptr_t base, size_t size);

/* Whether any engine holds a graph (read unlocked: for what only counts them). */
int ag_engine_holds_graphs(void);

/* The program created a stream with this handle (it may reuse a destroyed one's). */
void ag_engine_stream_created(uintptr_t stream);

/* The program created an event with this handle (it may reuse a destroyed one's:
 * replay_events.c). */
void ag_engine_event_created(uintptr_t event);

/* The program is destroying `event` (replay_events.c): what its wrapper does with
 * the call.  AG_DESTROY_NOW: makes it now (the window goes on; the graphs' nodes that
 * name the event are parked); AG_DESTROY_HELD: returns success without making it (the
 * engine has it made once the held ops that name the event went out); AG_DESTROY_FLUSH:
 * a flush point as before (ag_engine_before, then the call). */
enum { AG_DESTROY_NOW = 0, AG_DESTROY_HELD = 1, AG_DESTROY_FLUSH = 2 };
int ag_engine_event_destroying(uintptr_t event);

/* Drops every graph (their objects are destroyed through the backend). */
void ag_engine_drop_graphs(const char *why);

/* Writes the engine's part of the exit summary ("key value" lines). */
#include <stdio.h>
void ag_engine_summary(FILE *out, const char *prefix);

/* Test hook: forgets all state (after ag_engine_drop_graphs). */
void ag_engine_reset_for_tests(void);

#endif
