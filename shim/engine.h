/* engine.h -- the auto-graphing engine, as the interception layer calls it.
 *
 * Pipeline: intercept (intercept_*.c) -> record (record_ops.c makes a struct ag_op)
 * -> match (engine_window.c, engine_detect.c, engine_replay.c) -> build/replay
 * (engine_template.c through a struct ag_backend) -> report (engine_stats.c).
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

/* AG_PASS: the engine is off or stepping aside: make the call, no ag_engine_done. */
enum { AG_EAGER = 0, AG_HELD = 1, AG_PASS = 2 };

struct ag_engine_params {
    int warmup;          /* a window seen this many times in a row becomes a graph */
    int min_ops;         /* shorter windows are not worth a graph */
    int chunk_first;     /* size of the first replay chunk; later ones double... */
    int chunk_max;       /* ...up to this */
    int max_variants;    /* executable graphs kept per chunk for alternating args */
    int period_min;      /* shortest template cut by period detection */
    int explain;         /* print why windows were not graphed */
};

/* Starts the engine (once).  Until then every call passes through. */
void ag_engine_setup(const struct ag_backend *backend, const struct ag_engine_params *p);
int ag_engine_running(void);

int ag_engine_offer(struct ag_op *op);
void ag_engine_done(const struct ag_op *op, int result);

/* A recordable entry point whose call could not be recorded (op->reject says
 * why): held work is issued and the window ends, as at any flush point. */
void ag_engine_unrecorded(const struct ag_op *op);

/* Before and after a call with a policy in ag_call_policy (flush_points.h). */
void ag_engine_before(int entry, uintptr_t arg0);
void ag_engine_after(int entry, int result);

/* Issues all held work and ends the window (process exit, API flush). */
void ag_engine_flush(enum ag_flush_reason reason);

/* Drops every graph (their objects are destroyed through the backend). */
void ag_engine_drop_graphs(const char *why);

/* Writes the engine's part of the exit summary ("key value" lines). */
#include <stdio.h>
void ag_engine_summary(FILE *out, const char *prefix);

/* Test hook: forgets all state (after ag_engine_drop_graphs). */
void ag_engine_reset_for_tests(void);

#endif
