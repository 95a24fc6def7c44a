/* build_tune.c -- build: chunk plan tuning (AUTOGRAPH_CHUNK_TUNE), which cut into
 * chunks makes a window's replays fastest, measured in this process.
 *
 * A replay launches a template's chunks as they match.  Small chunks start the GPU
 * early; every chunk boundary costs the GPU time.  Which plan wins
 * depends on how fast this process holds ops back against how fast the GPU runs
 * them, and that differs from one program, GPU and process to the next.  A template
 * tries the candidate plans in turn: for one of two or more chunks, the configured
 * one, then bigger and fewer chunks (alike chunks twice and half as long for a paced
 * template whose chunks are alike); for a window the configured plan leaves in one
 * chunk, that one chunk, then a first chunk of AG_TUNE_SPLIT_FIRST ops with the rest
 * after it (a short window in one chunk gives the GPU nothing until its last op is
 * in: with the program's sync right after it, all of its GPU time comes after the
 * host's, where without graphs the two overlapped).  Each is timed over N replays,
 * by the host clock from the start of a replay that completed to the start of the
 * next one (the program's own loop, its sync included), the first AG_TUNE_SKIP
 * replays after a build left out.  Then the template is dropped and rebuilt with
 * the next candidate, after the usual warm-up.  When all were timed, the plan with
 * the shortest median period is kept for that window shape (the configured one
 * unless another's median is shorter by 0.5% and by twice the standard error of the
 * difference: a noisy program keeps it), for as long as the process runs: rebuilds
 * after an eviction or a drop use it without tuning again.  Candidates that cut this
 * template the same way as one before are not tried again.  Entries are kept by
 * window hash in a fixed table; a shape whose entry another takes over keeps the
 * plan it has and stops tuning.
 * AUTOGRAPH_CHUNK_TUNE=N tunes every template over N replays a candidate; =auto (the
 * default, AG_TUNE_AUTO) only the windows left in one chunk, over
 * AG_TUNE_AUTO_REPLAYS; =0 none.
 */
#include "engine_internal.h"
#include "log.h"
#include "timing.h"

#include <stdlib.h>
#include <string.h>

#define AG_TUNE_SKIP 2           /* replays after a build that are not timed */
#define AG_TUNE_LENS 64          /* chunk lengths compared between candidates */
#define AG_TUNE_SPLIT_FIRST 2    /* a one-chunk window's other candidate: its first chunk */

struct ag_tuning {
    uint64_t start_ns;           /* when the last replay started (0: none yet) */
    unsigned long replays_at;    /* t->replays then */
    int n;                       /* periods timed */
    int cap;                     /* periods to time (the entry's replays) */
    uint32_t period_ns[];        /* cap of them */
};

static uint64_t clock_ns(void)
{
    return ag_timing_now();
}

/* Not state: the clock, which the unit tests replace. */
uint64_t (*ag_tune_clock)(void) = clock_ns;

/* Candidate k: the configured plan, then 2x the first chunk (up to chunk_max)
 * growing 4x as fast, then the configured first chunk growing 2x as fast.  Chunks
 * alike (a paced template's while the launcher thread launches them: growth 1): the
 * configured length, then twice, then half as long.  A window the configured plan
 * leaves in one chunk (single): the configured plan, then a first chunk of
 * AG_TUNE_SPLIT_FIRST ops, then the configured plan again (a twin, never tried). */
static struct ag_plan candidate(int k, int alike, int single)
{
    struct ag_plan p = { ag_eng.p.chunk_first, alike ? 1 : ag_eng.p.chunk_growth };
    int twice = 2 * p.first <= ag_eng.p.chunk_max ? 2 * p.first : ag_eng.p.chunk_max;
    if (single) {
        if (k == 1 && p.first > AG_TUNE_SPLIT_FIRST)
            p.first = AG_TUNE_SPLIT_FIRST;
    } else if (alike) {
        if (k == 1)
            p.first = twice;
        else if (k == 2 && p.first > 1)
            p.first /= 2;
    } else if (k == 1) {
        p.first = twice;
        p.growth = p.growth <= 16 ? 4 * p.growth : 64;
    } else if (k == 2) {
        p.growth = p.growth <= 32 ? 2 * p.growth : 64;
    }
    return p;
}

/* Whether plans a and b cut `nops` ops the same way. */
static int same_cut(int nops, struct ag_plan a, struct ag_plan b)
{
    int la[AG_TUNE_LENS], lb[AG_TUNE_LENS];
    int na = ag_plan_lengths(nops, a, la, AG_TUNE_LENS);
    int nb = ag_plan_lengths(nops, b, lb, AG_TUNE_LENS);
    int compared = na < AG_TUNE_LENS ? na : AG_TUNE_LENS;
    return na == nb && memcmp(la, lb, sizeof *la * (size_t)compared) == 0;
}

/* The first candidate from k on that cuts differently from every one before it;
 * the medians of those skipped are their twins'.  AG_TUNE_PLANS when none is left. */
static int next_distinct(struct ag_tune *e, int nops, int k)
{
    for (; k < AG_TUNE_PLANS; k++) {
        int twin = -1;
        for (int j = 0; j < k && twin < 0; j++)
            if (same_cut(nops, candidate(j, e->alike, e->single),
                         candidate(k, e->alike, e->single)))
                twin = j;
        if (twin < 0)
            return k;
        e->median_ns[k] = e->median_ns[twin];
        e->iqr_ns[k] = e->iqr_ns[twin];
    }
    return AG_TUNE_PLANS;
}

static struct ag_tune *entry_of(uint64_t hash)
{
    return &ag_eng.tunes[hash % AG_TUNE_SIZE];
}

/* Replays timed per candidate for a window the configured plan leaves in one chunk
 * (single) or cuts into several (0: not tuned). */
static int replays_for(int single)
{
    if (ag_eng.p.tune_replays == AG_TUNE_AUTO)
        return single ? AG_TUNE_AUTO_REPLAYS : 0;
    return ag_eng.p.tune_replays > 0 ? ag_eng.p.tune_replays : 0;
}

/* At build: the plan of template t, and whether its replays are timed. */
void ag_tune_choose(struct ag_template *t)
{
    struct ag_tune *e = entry_of(t->hash);
    int alike = t->paced && ag_launcher_available();
    struct ag_plan configured = candidate(0, alike, 0);
    int single = ag_plan_lengths(t->nops, configured, NULL, 0) == 1;
    int replays = replays_for(single);
    size_t size;

    t->plan = configured;
    if (replays == 0 || (single && same_cut(t->nops, configured, candidate(1, alike, 1))))
        return;                      /* off, or nothing to choose between */
    if (e->hash != t->hash || e->alike != alike || e->single != single) {
        memset(e, 0, sizeof *e);     /* a new shape, or newly paced */
        e->hash = t->hash;
        e->alike = (unsigned char)alike;
        e->single = (unsigned char)single;
        e->replays = (uint16_t)replays;
    }
    if (e->done) {
        t->plan = candidate(e->best, alike, single);
        return;
    }
    t->plan = candidate(e->stage, alike, single);
    size = sizeof *t->tuning + sizeof(uint32_t) * (size_t)e->replays;
    t->tuning = calloc(1, size);     /* out of memory: not timed */
    if (t->tuning)
        t->tuning->cap = e->replays;
}

/* Candidate k's figures from its periods v[0..n) (sorted in place): the median and
 * the interquartile range. */
static void summarize(struct ag_tune *e, int k, uint32_t *v, int n)
{
    for (int i = 1; i < n; i++)      /* insertion sort: n is small */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint32_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    e->median_ns[k] = v[n / 2];
    e->iqr_ns[k] = v[(3 * n) / 4] - v[n / 4];
}

/* The variance of candidate k's median (ns^2), estimated from its interquartile range
 * over the e->replays periods it was timed on: sigma ~ IQR / 1.349, the median's
 * standard error ~ 1.2533 sigma / sqrt(n). */
static double median_variance(const struct ag_tune *e, int k)
{
    double spread = 0.929 * e->iqr_ns[k];
    return spread * spread / e->replays;
}

/* Whether candidate k's median is shorter than the configured plan's by 0.5% and by
 * twice the standard error of the difference. */
static int clearly_faster(const struct ag_tune *e, int k)
{
    double gain = (double)e->median_ns[0] - e->median_ns[k];
    return gain > 0.005 * e->median_ns[0] &&
           gain * gain > 4 * (median_variance(e, 0) + median_variance(e, k));
}

/* The candidate kept: the shortest median of those clearly faster than the
 * configured plan, else the configured plan (0). */
static int best_of(const struct ag_tune *e)
{
    int best = 0;
    for (int k = 1; k < AG_TUNE_PLANS; k++)
        if (clearly_faster(e, k) && e->median_ns[k] < e->median_ns[best])
            best = k;
    return best;
}

static void drop_for(struct ag_template *t, const char *why)
{
    ag_eng.s.tune_rebuilds++;
    ag_template_retire(t, why);
}

/* All N periods of t's plan are in: its median is noted; then either the next
 * candidate is tried, or the best is chosen.  0 when t was dropped for a rebuild. */
static int stage_done(struct ag_template *t)
{
    struct ag_tune *e = entry_of(t->hash);
    int stage = e->stage;

    if (e->hash == t->hash && !e->done)
        summarize(e, stage, t->tuning->period_ns, t->tuning->n);
    free(t->tuning);
    t->tuning = NULL;
    if (e->hash != t->hash || e->done)
        return 1;                    /* its entry went to another shape: stop here */
    ag_log(AG_LOG_DEBUG, "graph %u: chunk plan %d x%d: median replay period %.1f us "
           "(IQR %.1f us)", t->id, t->plan.first, t->plan.growth,
           e->median_ns[stage] / 1e3, e->iqr_ns[stage] / 1e3);
    e->stage = (unsigned char)next_distinct(e, t->nops, stage + 1);
    if (e->stage < AG_TUNE_PLANS) {
        drop_for(t, "rebuilt with another chunk plan, to time it (AUTOGRAPH_CHUNK_TUNE)");
        return 0;
    }
    e->done = 1;
    e->best = (unsigned char)best_of(e);
    ag_eng.s.tuned++;
    ag_log(AG_LOG_DEBUG, "graph %u: keeps chunk plan %d x%d (median periods %.1f, %.1f, "
           "%.1f us)", t->id, candidate(e->best, e->alike, e->single).first,
           candidate(e->best, e->alike, e->single).growth,
           e->median_ns[0] / 1e3, e->median_ns[1] / 1e3, e->median_ns[2] / 1e3);
    if (e->best == stage)
        return 1;
    drop_for(t, "rebuilt with the chunk plan that timed best (AUTOGRAPH_CHUNK_TUNE)");
    return 0;
}

/* A replay of t is about to start: the period since the last one, if that one
 * completed, is timed. */
int ag_tune_replay_starts(struct ag_template *t)
{
    struct ag_tuning *g = t->tuning;
    uint64_t now;

    if (g == NULL)
        return 1;
    now = ag_tune_clock();
    if (g->start_ns && t->replays == g->replays_at + 1 && g->replays_at >= AG_TUNE_SKIP) {
        uint64_t period = now - g->start_ns;
        g->period_ns[g->n++] = period < UINT32_MAX ? (uint32_t)period : UINT32_MAX;
        if (g->n == g->cap)
            return stage_done(t);
    }
    g->start_ns = now;
    g->replays_at = t->replays;
    return 1;
}

void ag_tune_forget(void)
{
    memset(ag_eng.tunes, 0, sizeof ag_eng.tunes);
}
