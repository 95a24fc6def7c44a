/* match_subperiod.c -- match: period templates that are parts of a longer period.
 *
 * Period detection (record_window.c) cuts the shortest period that repeats, and a
 * training step without a sync repeats at two scales: its identical layers, and the
 * step.  The layers' repeat is seen first (two layers, not two steps), so the template
 * cut is a layer or two.  Its replays run the layers and then end where the step goes
 * on differently (its run "breaks": a replay stops before its end, not at a flush
 * point, or runs to its end and the window's next op starts no replay of it again),
 * and each replay resets period detection, which then never sees two whole steps of
 * eager ops: the step, the period worth graphing, is never cut.
 *
 * The breaks tell: where they come at a longer period P (of the last
 * AG_SUBPERIOD_RING, AG_SUBPERIOD_APART breaks of one template at one of its ops, P
 * ops apart, P longer than the template and no longer than detection looks; the
 * window's last P ops the P before them), every
 * template of a period shorter than P is suspended: no replay starts with it, and
 * period detection cuts no template of its length or shorter (the floor), for a
 * probation of AG_SUBPERIOD_LOOK * P eager ops (detection needs 2 * P, and up to P
 * more to cut where the period's rarest op starts).
 * If detection cuts a longer template meanwhile, the suspended ones shorter than it go
 * (superseded).  If not, they come back when the probation ends, for good.  Breaks at
 * no period (a decode loop with an odd token now and then) suspend nothing.
 */
#include "engine_internal.h"

/* The op count since the engine started, at the window's current end. */
static uint64_t ops_now(void)
{
    return ag_eng.subperiod.ops_before + ag_eng.w.n;
}

/* How many breaks the ring holds. */
static unsigned breaks_kept(void)
{
    unsigned n = ag_eng.subperiod.nbreaks;
    return n < AG_SUBPERIOD_RING ? n : AG_SUBPERIOD_RING;
}

/* Whether a break at x of the same kind (tag) is remembered. */
static int remembered(uint64_t x, uint64_t tag)
{
    const struct ag_subperiod *sp = &ag_eng.subperiod;
    for (unsigned k = 0; k < breaks_kept(); k++)
        if (sp->breaks[k].at == x && sp->breaks[k].tag == tag)
            return 1;
    return 0;
}

/* The period P (longer than `shortest`, at most AG_PERIOD_MAX) at which the breaks
 * remembered and one at x make AG_SUBPERIOD_APART breaks of one kind P ops apart;
 * 0: none. */
static uint64_t breaks_period(uint64_t x, uint64_t tag, int shortest)
{
    const struct ag_subperiod *sp = &ag_eng.subperiod;
    for (unsigned k = 0; k < breaks_kept(); k++) {
        uint64_t p = x - sp->breaks[k].at, y = x;
        int apart = 1;
        if (sp->breaks[k].tag != tag || sp->breaks[k].at >= x || p <= (uint64_t)shortest ||
            p > AG_PERIOD_MAX)
            continue;
        while (apart < AG_SUBPERIOD_APART && y >= p && remembered(y - p, tag)) {
            y -= p;
            apart++;
        }
        if (apart == AG_SUBPERIOD_APART)
            return p;
    }
    return 0;
}

/* Whether the window's last p ops are the p before them, op for op: a period the
 * breaks show by chance (a decode loop's odd tokens at positions a hash picks) is
 * none that detection would find. */
static int window_repeats(uint64_t p)
{
    const struct ag_window *w = &ag_eng.w;
    if (w->n < 2 * p)
        return 0;
    for (size_t i = w->n - (size_t)p; i < w->n; i++)
        if (w->ops[i].key != w->ops[i - p].key)
            return 0;
    return 1;
}

/* Suspends the period templates shorter than p (a period the breaks show). */
static void suspend_parts_of(uint64_t p)
{
    struct ag_subperiod *sp = &ag_eng.subperiod;
    struct ag_template *t, *tmp;
    HASH_ITER(hh, ag_eng.by_hash, t, tmp) {
        if (!t->from_period || t->confirmed || t->suspended || (uint64_t)t->nops >= p)
            continue;
        t->suspended = 1;
        if (t->nops > sp->floor)
            sp->floor = t->nops;
        ag_eng.s.subperiods++;
        ag_explain(t->hash, -9, "graph %u (%d ops), cut from a period: its runs break "
                   "every %llu ops, a longer period of which it looks a part; suspended "
                   "while that one is looked for", t->id, t->nops, (unsigned long long)p);
    }
    sp->until = sp->clock + AG_SUBPERIOD_LOOK * p;
}

/* A run of template t broke at the window's current end, at its op `pos` (its length:
 * it ran to its end). */
static void run_broke(const struct ag_template *t, int pos)
{
    struct ag_subperiod *sp = &ag_eng.subperiod;
    uint64_t x = ops_now(), tag = (uint64_t)t->id << 32 | (uint32_t)pos, p;
    if (!t->from_period || t->confirmed)
        return;
    if (sp->nbreaks && sp->breaks[(sp->nbreaks - 1) % AG_SUBPERIOD_RING].at == x)
        return;                      /* a stop, then the next op: one break */
    p = breaks_period(x, tag, t->nops);
    sp->breaks[sp->nbreaks++ % AG_SUBPERIOD_RING] = (struct ag_break){ x, tag };
    if (p && window_repeats(p))
        suspend_parts_of(p);
}

void ag_subperiod_replayed(struct ag_template *t)
{
    ag_eng.subperiod.done = t->from_period ? t : NULL;
}

void ag_subperiod_next_op(void)
{
    struct ag_template *t = ag_eng.subperiod.done;
    if (t == NULL)
        return;
    ag_eng.subperiod.done = NULL;
    if (ag_eng.r.t != t)
        run_broke(t, t->nops);
}

void ag_subperiod_stopped(struct ag_template *t)
{
    run_broke(t, ag_eng.r.pos);
}

void ag_subperiod_window_end(void)
{
    ag_eng.subperiod.done = NULL;    /* a run that ends with its window is whole */
    ag_eng.subperiod.ops_before += ag_eng.w.n;
}

void ag_subperiod_forget(const struct ag_template *t)
{
    if (ag_eng.subperiod.done == t)
        ag_eng.subperiod.done = NULL;
}

/* Ends the probation: the suspended templates come back, never to be suspended. */
static void probation_over(void)
{
    struct ag_template *t, *tmp;
    HASH_ITER(hh, ag_eng.by_hash, t, tmp) {
        if (!t->suspended)
            continue;
        t->suspended = 0;
        t->confirmed = 1;
        ag_explain(t->hash, -10, "graph %u (%d ops): no longer period was found; it "
                   "replays again", t->id, t->nops);
    }
    ag_eng.subperiod.floor = 0;
}

int ag_subperiod_floor(void)
{
    struct ag_subperiod *sp = &ag_eng.subperiod;
    if (sp->floor == 0)
        return 0;
    if (++sp->clock < sp->until)
        return sp->floor;
    probation_over();
    return 0;
}

void ag_subperiod_cut(const struct ag_template *longer)
{
    struct ag_template *t, *tmp;
    char why[96];
    if (ag_eng.subperiod.floor == 0)
        return;                      /* no probation: nothing is suspended */
    snprintf(why, sizeof why, "a part of graph %u (%d ops), a longer period",
             longer->id, longer->nops);
    HASH_ITER(hh, ag_eng.by_hash, t, tmp)
        if (t->suspended && t->nops < longer->nops && t != longer) {
            ag_eng.s.superseded++;
            ag_template_retire(t, why);
        }
}
