/* match_futile.c -- match: window shapes the engine has learnt it cannot graph.
 *
 * A window that repeats but cannot become a graph (too short, ended by a call the
 * engine cannot record, more streams or events than a graph takes, a build that
 * keeps failing...) would be recorded in full every time, for nothing: the program
 * pays the recorder and gains no graph.  After AG_FUTILE_AFTER judgements of one
 * shape for such a reason, the shape is *futile*: its skim fingerprint (the one
 * record_skim.c computes, which full recording computes too) is kept, and from the
 * next window on the engine skims (record_skim.c).  A skimmed window with a futile
 * shape's fingerprint and op count keeps skimming where any other repeat would
 * bring full recording back, so a loop of futile windows costs what skimming costs.
 *
 * Nothing stays futile for ever: every AG_FUTILE_RECHECK skimmed repeats of a shape,
 * one is let through to be recorded and judged again (the program may have changed,
 * a reason may have gone), and the table keeps the AG_FUTILE_SIZE shapes seen last.
 * A skimmed repeat of any other shape stops skimming as before and holds futile
 * re-entry off for AG_FUTILE_HOLD_OFF judged windows, so that a graphable window
 * interleaved with futile ones is recorded in full long enough to warm up.
 * Where a futile shape followed a window lately (one of the AG_FUTILE_BEFORE
 * shapes last seen before it), skimming starts right after that window (a graphed
 * step followed by a futile tail skims the tail, whichever of its shapes it took).
 * Skimming started for futile shapes stops as soon as a window outgrows all of them
 * (the program's setup had short windows, its loop is long): that window is recorded.
 * The futile shape skimmed before such a window is *followed*: after its skimmed
 * window the next one is recorded in full.  Otherwise a step shape that no template
 * starts with, coming after a futile upload (the one batch size of eight whose
 * kernels differ), would be skimmed at every sighting and never warm up.  Where the
 * window so recorded is futile too, the shape is no longer followed.
 */
#include "engine_internal.h"

/* The fingerprint fold of record_skim.c: one word per op, in order. */
uint64_t ag_futile_fold(uint64_t fingerprint, uint64_t word)
{
    return (fingerprint ^ word) * 0xff51afd7ed558ccdull;
}

/* Whether a skip reason says that the shape itself cannot be graphed, however often
 * it repeats (not: warming up, varying, recorded light, a failed op). */
int ag_futile_reason(enum ag_skip why)
{
    switch (why) {
    case AG_SKIP_SHORT: case AG_SKIP_PTDS_THREADS: case AG_SKIP_LEGACY_MIX:
    case AG_SKIP_STREAMS: case AG_SKIP_EVENTS: case AG_SKIP_CONTEXT:
    case AG_SKIP_BUILD_FAILED: case AG_SKIP_TOO_LONG: case AG_SKIP_DROPPED_OFTEN:
        return 1;
    default:
        return 0;
    }
}

static struct ag_futile *find(uint64_t hash)
{
    for (int i = 0; i < AG_FUTILE_SIZE; i++)
        if (ag_eng.futile[i].hash == hash && hash != 0)
            return &ag_eng.futile[i];
    return NULL;
}

static int came_after(const struct ag_futile *f, uint64_t hash)
{
    for (int i = 0; i < AG_FUTILE_BEFORE; i++)
        if (f->before[i] == hash)
            return 1;
    return 0;
}

static void note_before(struct ag_futile *f, uint64_t before)
{
    if (before == 0 || came_after(f, before))
        return;
    f->before[f->before_next] = before;
    f->before_next = (f->before_next + 1) % AG_FUTILE_BEFORE;
}

static struct ag_futile *slot_for(uint64_t hash)
{
    struct ag_futile *f = find(hash), *oldest = &ag_eng.futile[0];
    if (f)
        return f;
    for (int i = 0; i < AG_FUTILE_SIZE; i++) {
        f = &ag_eng.futile[i];
        if (f->hash == 0)
            return f;
        if (f->last < oldest->last)
            oldest = f;
    }
    return oldest;
}

/* Whether skimming may start for futile shapes now; the most ops of one, in
 * ag_eng.futile_max_ops (record_skim.c stops such skimming past it). */
static int may_skim(void)
{
    uint32_t most = 0;
    if (ag_eng.p.skim_after <= 0 || ag_eng.p.light_after <= 0 || ag_eng.futile_hold_off)
        return 0;
    for (int i = 0; i < AG_FUTILE_SIZE; i++)
        if (ag_eng.futile[i].judged >= AG_FUTILE_AFTER && ag_eng.futile[i].ops > most)
            most = ag_eng.futile[i].ops;
    ag_eng.futile_max_ops = most;
    return 1;
}

int ag_futile_judged(const struct ag_window *w, enum ag_skip why, uint64_t before)
{
    struct ag_futile *f;
    if (w->full_from != 0 || !w->fingerprint_valid)
        return 0;
    f = slot_for(w->hash);
    if (f->hash != w->hash) {
        *f = (struct ag_futile){ .hash = w->hash };
    }
    f->fingerprint = w->fingerprint;
    f->ops = (uint32_t)w->n;
    note_before(f, before);
    f->last = ag_eng.judged;
    f->skimmed = 0;
    if (f->judged < AG_FUTILE_AFTER && ++f->judged == AG_FUTILE_AFTER) {
        ag_eng.s.futile_shapes++;
        ag_explain(w->hash, -6, "window of %zu ops cannot be graphed (%s) and keeps coming "
                   "back: skimming it from now on", w->n, ag_skip_name(why));
    }
    if (f->judged < AG_FUTILE_AFTER || f->followed || !may_skim())
        return 0;
    ag_eng.k.last_futile = (unsigned)(f - ag_eng.futile) + 1;
    return 1;
}

int ag_futile_window_end(uint64_t hash)
{
    if (ag_eng.futile_hold_off)
        ag_eng.futile_hold_off--;
    if (ag_eng.s.futile_shapes == 0 || hash == 0)
        return 0;                    /* none yet, or no window: nothing to look up */
    for (int i = 0; i < AG_FUTILE_SIZE; i++) {
        const struct ag_futile *f = &ag_eng.futile[i];
        if (f->judged >= AG_FUTILE_AFTER && came_after(f, hash)) {
            ag_eng.k.last_futile = 0;    /* skimming starts before the futile shape */
            return may_skim();
        }
    }
    return 0;
}

int ag_futile_skimmed(uint64_t fingerprint, unsigned long ops)
{
    for (int i = 0; i < AG_FUTILE_SIZE; i++) {
        struct ag_futile *f = &ag_eng.futile[i];
        if (f->judged < AG_FUTILE_AFTER || f->fingerprint != fingerprint || f->ops != ops)
            continue;
        f->last = ag_eng.judged;
        if (++f->skimmed >= AG_FUTILE_RECHECK) {
            f->skimmed = 0;
            return -1;               /* the next one recorded and judged again */
        }
        ag_eng.s.futile_windows++;
        ag_eng.k.last_futile = (unsigned)i + 1;
        if (f->followed) {
            ag_eng.k.record_after = (unsigned)i + 1;
            return 2;
        }
        return 1;
    }
    return 0;
}

void ag_futile_followed(void)
{
    struct ag_futile *f;
    if (ag_eng.k.last_futile == 0)
        return;
    f = &ag_eng.futile[ag_eng.k.last_futile - 1];
    if (!f->followed && f->judged >= AG_FUTILE_AFTER)
        ag_explain(f->hash, -11, "a longer window follows the futile window of %u ops: "
                   "the window after it is recorded in full", f->ops);
    f->followed = 1;
}

void ag_futile_next_judged(int futile_reason)
{
    unsigned after = ag_eng.k.record_after;
    ag_eng.k.record_after = 0;
    if (after && futile_reason)
        ag_eng.futile[after - 1].followed = 0;
}

void ag_futile_hold_off(void)
{
    ag_eng.futile_hold_off = AG_FUTILE_HOLD_OFF;
}

void ag_futile_forget(void)
{
    memset(ag_eng.futile, 0, sizeof ag_eng.futile);
    ag_eng.futile_hold_off = 0;
}
