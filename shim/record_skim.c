/* record_skim.c -- record, the cheapest way: skimming, where nothing has repeated
 * for a long while.
 *
 * After AUTOGRAPH_SKIM_AFTER more sync-delimited windows in a row that differed
 * while recorded light (record_light.c), a single-threaded program's ops are no
 * longer appended to the window at all: each one is folded into a fingerprint of
 * the window (a per-thread batch, folded under the lock every SKIM_BATCH ops and
 * before anything else the thread does in the engine).  A kernel launch is folded
 * from its call's arguments, without the shape hash, while no template exists
 * whose first op it could be (ag_light_starts is 0); otherwise from the shape hash
 * after the start filter said "no".
 *
 * Skimming stops (recording goes back to full; engine.c builds the graph a warm-up
 * later) when a skimmed window's fingerprint and op count equal one of the last
 * AG_SKIM_RECENT skimmed windows' (a cycle of shapes repeats too: an inference loop
 * whose batch size cycles through 8 values, futile uploads between its steps),
 * when an op takes the locked path (it could start a template, or is not
 * recordable light), and after SKIM_RUN_MAX ops with no window end (a program that
 * rarely synchronizes: light recording's period detector looks again).  Every
 * SKIM_PROBE-th skimmed window is recorded light instead, so that repeats inside
 * windows are still looked for.  Skimmed windows and ops are counted in the exit
 * summary; skimmed windows are never built.
 */
#include "engine_internal.h"

#define SKIM_BATCH   256
#define SKIM_PROBE   32
#define SKIM_RUN_MAX (1ul << 16)

/* The calling thread's batch is ag_thread_hot's skim_ops and skim_kernels (op.h):
 * ag_skim_drain reads it under every engine lock.  The fingerprint of the window being
 * skimmed (each engine's k.running) is folded by the one thread that skims (the light
 * gate is closed to every other, and to all while there are several engines), read
 * and reset under the engine lock. */
static uint64_t fold_running(uint64_t word)
{
    uint64_t f = ag_futile_fold(__atomic_load_n(&ag_eng.k.running, __ATOMIC_RELAXED), word);
    __atomic_store_n(&ag_eng.k.running, f, __ATOMIC_RELAXED);
    return f;
}

int ag_engine_skim(uint64_t word, int kernel)
{
    struct ag_thread_hot *th = &ag_thread_hot;
    if (ag_thread_id() != 1)
        return 0;
    fold_running(word);
    th->skim_ops++;
    th->skim_kernels += (unsigned)kernel;
    if (th->skim_ops == SKIM_BATCH) {
        ag_engine_lock();            /* counts the batch */
        ag_engine_unlock();
    }
    return 1;
}

/* Skimming started for futile shapes, and this window has more ops than any of
 * them: it is something else, recorded from its next op on, and in full after the
 * futile shape skimmed before it, next time (match_futile.c). */
static void outgrown(void)
{
    ag_futile_followed();
    ag_skim_stop("a skimmed window outgrew the futile shapes");
    ag_light_stop();
}

/* Engine lock held: a light op that came to the engine while skimming (the start
 * filter said "maybe", no template starts with it) is skimmed all the same, when no
 * op of the window was recorded. */
int ag_skim_take(const struct ag_op *op)
{
    if (!ag_eng.k.on || ag_eng.w.n || ag_thread_id() != 1)
        return 0;
    ag_eng.k.fingerprint = fold_running(op->skim);
    ag_eng.k.ops++;
    ag_eng.s.skimmed_ops++;
    ag_eng.s.launches_eager += op->kind == AG_OP_KERNEL;
    if (ag_eng.k.futile && ag_eng.k.ops > ag_eng.futile_max_ops)
        outgrown();
    return 1;
}

/* Engine lock held (ag_engine_lock): the calling thread's batch is counted. */
void ag_skim_drain(void)
{
    struct ag_skim *k = &ag_eng.k;
    struct ag_thread_hot *th = &ag_thread_hot;
    if (th->skim_ops == 0)
        return;
    k->fingerprint = __atomic_load_n(&k->running, __ATOMIC_RELAXED);
    k->ops += th->skim_ops;
    ag_eng.s.skimmed_ops += th->skim_ops;
    ag_eng.s.launches_eager += th->skim_kernels;
    th->skim_ops = th->skim_kernels = 0;
    if (k->ops >= SKIM_RUN_MAX)
        ag_skim_stop("no window ended in a long run of skimmed ops");
    else if (k->futile && k->ops > ag_eng.futile_max_ops)
        outgrown();
}

/* After a light window that differed (record_light.c): skim from the next op? */
void ag_skim_choose(void)
{
    int after = ag_eng.p.skim_after;
    if (after <= 0 || ag_eng.k.on || ag_eng.varied_streak < ag_eng.p.light_after + after)
        return;
    ag_eng.k.on = 1;
    ag_light_gate_update();
    if (ag_eng.k.streak)
        return;                      /* back from a probe */
    ag_explain(0, -5, "%d windows in a row differed: skimming (ops are only fingerprinted) "
               "until something repeats", ag_eng.varied_streak);
}

/* Engine lock held: a futile shape (match_futile.c) may come next: skim from the
 * next op, until a window outgrows the futile shapes. */
void ag_skim_futile(void)
{
    __atomic_store_n(&ag_eng.light, 1, __ATOMIC_RELAXED);
    if (!ag_eng.k.on)
        ag_eng.k.futile = 1;         /* not skimming for variety already */
    ag_eng.k.on = 1;
    ag_eng.k.streak = 1;
    ag_light_gate_update();
}

/* Engine lock held. */
void ag_skim_stop(const char *why)
{
    if (!ag_eng.k.on)
        return;
    ag_eng.k.on = 0;
    ag_eng.k.streak = 0;
    ag_eng.k.futile = 0;
    ag_eng.k.last_futile = 0;
    ag_light_gate_update();
    ag_explain(0, -5, "skimming stopped: %s", why);
}

/* Whether the skimmed window's fingerprint and op count are one of the last ones'. */
static int seen_lately(const struct ag_skim *k)
{
    for (int i = 0; i < AG_SKIM_RECENT; i++)
        if (k->recent_ops[i] == k->ops && k->recent_fingerprint[i] == k->fingerprint)
            return 1;
    return 0;
}

/* A window ended (engine.c): its skimmed ops, if any, are compared with the last
 * skimmed windows' at a flush point.  alone: no op of it was recorded.  A window of a
 * futile shape (match_futile.c) keeps skimming and is not "the one before": a
 * graphable window interleaved with futile ones is still seen to repeat. */
void ag_skim_window_end(enum ag_flush_reason reason, int alone)
{
    struct ag_skim *k = &ag_eng.k;
    int judge = reason != AG_FLUSH_NONE, repeated, futile;
    __atomic_store_n(&k->running, 0, __ATOMIC_RELAXED);
    if (k->ops == 0)
        return;
    ag_eng.s.skimmed_windows++;
    if (alone) {
        ag_eng.s.windows++;
        ag_eng.s.flush[reason]++;
    }
    futile = judge && alone && k->on ? ag_futile_skimmed(k->fingerprint, k->ops) : 0;
    if (futile) {
        k->fingerprint = 0;
        k->ops = 0;
        if (futile < 0) {
            ag_skim_stop("a futile window is judged again");
            ag_light_stop();
        } else if (futile == 2) {
            ag_skim_stop("a longer window follows this futile one: recording it in full");
            ag_light_stop();
        }
        return;
    }
    repeated = judge && seen_lately(k);
    if (judge) {
        k->recent_fingerprint[k->recent_next] = k->fingerprint;
        k->recent_ops[k->recent_next] = k->ops;
        k->recent_next = (k->recent_next + 1) % AG_SKIM_RECENT;
    }
    k->fingerprint = 0;
    k->ops = 0;
    if (repeated) {
        ag_skim_stop("a skimmed window repeated a recent one: recording in full");
        ag_light_stop();
        ag_futile_hold_off();
    } else if (k->on && ++k->streak % SKIM_PROBE == 0) {
        k->on = 0;                   /* one light window: repeats inside windows */
        k->futile = 0;
        ag_light_gate_update();
    }
}
