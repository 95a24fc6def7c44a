/* match_speed.c -- match: the speed guard (match_speed.h says what it decides).
 *
 * A trial is blocks of the program's own run, ON, OFF, ON, OFF, ..., ON: graphing on,
 * then paused, each at least AG_SPEED_BLOCK_NS long and ending where the host has
 * just waited for the device (a synchronize returned, a query found the work done, a
 * copy into host memory came back: nothing is held then, and the block's work is
 * done).  A block's figure is its wall time over the ops the program
 * submitted in it (kernel launches, copies and memsets, counted at every call whether
 * held or not); an OFF block is compared with the mean of the ON blocks on either side
 * of it, which cancels a slow drift of the program's pace.  The median of those
 * ratios is the verdict.  Graphs far faster (1 + AG_SPEED_SURE) are kept after one
 * paused block: the usual case costs the least eager time.  Otherwise the trial has
 * AG_SPEED_PAIRS paused blocks at least (one odd block, a garbage collection say,
 * cannot pause graphing): at least 1 + AG_SPEED_CLEAR keeps graphing, under
 * 1 - AG_SPEED_CLEAR pauses it; in between the trial goes on, up to
 * AG_SPEED_PAIRS_MAX paused blocks, and then graphing stays only if not slower.
 *
 * The first trial comes once graphs have replayed for AUTOGRAPH_GUARD_MS, or for a
 * quarter of it if replays keep stopping meanwhile (AG_SPEED_TROUBLE).  In a job of
 * several ranks (match_speed_job.c) trials begin on a grid of the wall clock
 * (AG_SPEED_GRID_NS) and are shared, so that the ranks try the same steps eager
 * together; the next one is due an interval after the last began, which keeps ranks
 * whose trials took different numbers of blocks together.  A paused program runs as
 * under autograph_disable(): its calls go to the driver as made, unrecorded, and the
 * graphs are kept for the next trial.
 */
#include "match_speed.h"

#include "config.h"
#include "engine_internal.h"
#include "report_introspect.h"
#include "timing.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* ---- the decision ---------------------------------------------------------------- */

void ag_speed_init(struct ag_speed *g, uint64_t after_ns)
{
    *g = (struct ag_speed){ .phase = AG_SPEED_WAIT, .after_ns = after_ns };
}

void ag_speed_align(struct ag_speed *g, uint64_t grid_ns, uint64_t phase_ns)
{
    g->grid_ns = grid_ns;
    g->grid_phase_ns = grid_ns ? phase_ns % grid_ns : 0;
}

void ag_speed_share(struct ag_speed *g, struct ag_speed_job *job, uint64_t now)
{
    g->job = job;
    g->job_from = now;
}

uint64_t ag_speed_job_trial(const struct ag_speed *g)
{
    uint64_t t;
    if (g->job == NULL)
        return 0;
    t = __atomic_load_n(&g->job->trial_at, __ATOMIC_ACQUIRE);
    return t >= g->job_from && t > g->trial_ns ? t : 0;
}

/* The first time at or after t on the guard's grid. */
static uint64_t on_grid(const struct ag_speed *g, uint64_t t)
{
    if (g->grid_ns == 0)
        return t;
    return t + (g->grid_ns - (t + g->grid_phase_ns) % g->grid_ns) % g->grid_ns;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median over the paused blocks of eager time per op over graphed time per op
 * (the mean of the ON blocks either side). */
static double trial_speedup(const struct ag_speed *g)
{
    double r[AG_SPEED_PAIRS_MAX];
    for (int i = 0; i < g->n_off; i++)
        r[i] = g->off[i] / ((g->on[i] + g->on[i + 1]) / 2);
    qsort(r, (size_t)g->n_off, sizeof r[0], compare_doubles);
    return g->n_off % 2 ? r[g->n_off / 2] : (r[g->n_off / 2 - 1] + r[g->n_off / 2]) / 2;
}

static void begin_block(struct ag_speed *g, enum ag_speed_phase phase, uint64_t now,
                        uint64_t work)
{
    g->phase = phase;
    g->block_ns = now;
    g->block_work = work;
    g->next_ns = now + AG_SPEED_BLOCK_NS;
}

static enum ag_speed_action begin_trial(struct ag_speed *g, uint64_t now, uint64_t work)
{
    int was_paused = g->phase == AG_SPEED_PAUSED;
    g->n_on = g->n_off = 0;
    g->trials++;
    g->trial_ns = now;
    begin_block(g, AG_SPEED_ON, now, work);
    return was_paused ? AG_SPEED_RESUME : AG_SPEED_STAY;
}

/* This guard is due for a trial (its own schedule, or the job's): alone, it begins
 * now; in a job, at the job's pending trial, announced now if none is. */
static enum ag_speed_action trial_due(struct ag_speed *g, uint64_t now, uint64_t work)
{
    uint64_t t = ag_speed_job_trial(g), pending;
    if (g->job && t == 0) {
        uint64_t seen = __atomic_load_n(&g->job->trial_at, __ATOMIC_ACQUIRE);
        t = on_grid(g, now + AG_SPEED_LEAD_NS);
        /* another rank's announcement won the race: that one is the job's */
        if (!__atomic_compare_exchange_n(&g->job->trial_at, &seen, t, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE) && (pending = ag_speed_job_trial(g)))
            t = pending;
    }
    if (g->job == NULL || now >= t)
        return begin_trial(g, now, work);
    g->next_ns = t;
    return AG_SPEED_STAY;
}

/* A verdict: graphing kept or paused until the next trial, an interval after this
 * one began (after the verdict, if the trial took longer), on the grid; the interval
 * doubles while the verdicts agree. */
static enum ag_speed_action verdict(struct ag_speed *g, enum ag_speed_phase phase,
                                    uint64_t now)
{
    uint64_t base = phase == AG_SPEED_KEPT ? AG_SPEED_KEEP_NS : AG_SPEED_PAUSE_NS, next;
    if (g->last_verdict != phase)
        g->level = 0;
    else if (g->level < AG_SPEED_LEVELS)
        g->level++;
    g->last_verdict = phase;
    g->phase = phase;
    next = g->trial_ns + (base << g->level);
    g->next_ns = on_grid(g, next > now ? next : now + (base << g->level));
    g->paused_verdicts += phase == AG_SPEED_PAUSED;
    return phase == AG_SPEED_PAUSED ? AG_SPEED_PAUSE : AG_SPEED_STAY;
}

/* An ON block ended: the trial's verdict when it is clear, else another OFF block. */
static enum ag_speed_action after_on_block(struct ag_speed *g, uint64_t now, uint64_t work)
{
    if (g->n_off > 0)
        g->speedup = trial_speedup(g);
    if (g->n_off > 0 && g->speedup >= 1 + AG_SPEED_SURE)
        return verdict(g, AG_SPEED_KEPT, now);
    if (g->n_off >= AG_SPEED_PAIRS) {
        if (g->speedup >= 1 + AG_SPEED_CLEAR ||
            (g->n_off >= AG_SPEED_PAIRS_MAX && g->speedup >= 1))
            return verdict(g, AG_SPEED_KEPT, now);
        if (g->speedup < 1 - AG_SPEED_CLEAR || g->n_off >= AG_SPEED_PAIRS_MAX)
            return verdict(g, AG_SPEED_PAUSED, now);
    }
    begin_block(g, AG_SPEED_OFF, now, work);
    return AG_SPEED_PAUSE;
}

/* Whether the engine has had nothing to graph for AG_SPEED_IDLE_WINDOWS windows: no
 * template made, replayed or stopped since the idle watch began (any of those
 * begins it again, and makes the next idle pause a short one). */
static int idle(struct ag_speed *g, const struct ag_speed_counts *c)
{
    const struct ag_speed_counts *f = &g->idle_from;
    if (c->replays != f->replays || c->trouble != f->trouble ||
        c->templates != f->templates || c->windows < f->windows) {
        g->idle_level = 0;
        g->idle_from = *c;
        return 0;
    }
    return c->windows - f->windows >= AG_SPEED_IDLE_WINDOWS;
}

static enum ag_speed_action idle_pause(struct ag_speed *g, uint64_t now)
{
    g->phase = AG_SPEED_IDLE;
    g->next_ns = now + (AG_SPEED_IDLE_NS << g->idle_level);
    g->idle_level += g->idle_level < AG_SPEED_IDLE_LEVELS;
    g->idle_pauses++;
    return AG_SPEED_PAUSE;
}

/* Whether the program was quiet since the last step (a sleep, I/O, a long wait for
 * the GPU): this step comes more than AG_SPEED_IDLE_NS after it was due, and fewer
 * windows ended since the last step than an idle pause would be worth (the watch's
 * AG_SPEED_IDLE_WINDOWS per AG_SPEED_IDLE_NS).  The windows counted before such a
 * spell say nothing of the work after it, so the watch begins again rather than pause
 * that work; a program busy with windows between rare synchronizations is not quiet. */
static int quiet_spell(const struct ag_speed *g, uint64_t now, const struct ag_speed_counts *c)
{
    uint64_t windows = c->windows >= g->step_windows ? c->windows - g->step_windows : 0;
    return now - g->next_ns > AG_SPEED_IDLE_NS &&
           windows * AG_SPEED_IDLE_NS < AG_SPEED_IDLE_WINDOWS * (now - g->step_ns);
}

static enum ag_speed_action wait_step(struct ag_speed *g, uint64_t now,
                                      const struct ag_speed_counts *c)
{
    if (quiet_spell(g, now, c))
        g->idle_from = *c;
    g->step_ns = now;
    g->step_windows = c->windows;
    g->next_ns = now + AG_SPEED_POLL_NS;
    if (idle(g, c))
        return idle_pause(g, now);
    if (c->replays == 0)
        return AG_SPEED_STAY;
    if (g->first_replay_ns == 0) {
        g->first_replay_ns = now;
        g->trouble_at_first = c->trouble;
        return AG_SPEED_STAY;
    }
    if (now >= on_grid(g, g->first_replay_ns + g->after_ns) ||
        (now >= on_grid(g, g->first_replay_ns + g->after_ns / 4) &&
         c->trouble - g->trouble_at_first >= AG_SPEED_TROUBLE) ||
        ag_speed_job_trial(g))
        return trial_due(g, now, c->work);
    return AG_SPEED_STAY;
}

/* An idle pause is over: recording resumes, and the watch counts windows anew. */
static enum ag_speed_action idle_over(struct ag_speed *g, uint64_t now,
                                      const struct ag_speed_counts *c)
{
    g->phase = AG_SPEED_WAIT;
    g->next_ns = now + AG_SPEED_POLL_NS;
    g->idle_from = *c;
    g->step_ns = now;
    g->step_windows = c->windows;
    return AG_SPEED_RESUME;
}

enum ag_speed_action ag_speed_step(struct ag_speed *g, uint64_t now,
                                   const struct ag_speed_counts *c)
{
    uint64_t work = c->work, job_trial = ag_speed_job_trial(g);
    double per_op;
    /* another rank announced the job's trial: join it (graphs must have replayed) */
    if (job_trial && job_trial < g->next_ns &&
        (g->phase == AG_SPEED_KEPT || g->phase == AG_SPEED_PAUSED ||
         (g->phase == AG_SPEED_WAIT && g->first_replay_ns)))
        g->next_ns = job_trial;
    if (now < g->next_ns)
        return AG_SPEED_STAY;
    switch (g->phase) {
    case AG_SPEED_WAIT:
        return wait_step(g, now, c);
    case AG_SPEED_IDLE:
        return idle_over(g, now, c);
    case AG_SPEED_KEPT:
    case AG_SPEED_PAUSED:
        return trial_due(g, now, work);
    case AG_SPEED_ON:
    case AG_SPEED_OFF:
        break;
    }
    if (work <= g->block_work) {         /* no op submitted: nothing to compare */
        g->trials--;                     /* not a trial after all */
        g->n_on = g->n_off = 0;
        g->phase = g->last_verdict == AG_SPEED_PAUSED ? AG_SPEED_PAUSED : AG_SPEED_KEPT;
        g->next_ns = now + AG_SPEED_KEEP_NS;
        return g->phase == AG_SPEED_PAUSED ? AG_SPEED_PAUSE : AG_SPEED_RESUME;
    }
    per_op = (double)(now - g->block_ns) / (double)(work - g->block_work);
    if (g->phase == AG_SPEED_OFF) {
        g->off[g->n_off++] = per_op;
        begin_block(g, AG_SPEED_ON, now, work);
        return AG_SPEED_RESUME;
    }
    g->on[g->n_on++] = per_op;
    return after_on_block(g, now, work);
}

/* ---- the shim's guard ------------------------------------------------------------- */

static struct ag_speed guard;
static pthread_mutex_t guard_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint64_t guard_due = UINT64_MAX;  /* guard.next_ns, read unlocked; MAX: no guard */
static unsigned long paused_launches;    /* launches made while it had graphing paused */
static unsigned long paused_from;        /* the launch count when it paused */
static ag_speed_count_fn *count_work;
static uint64_t guard_trial_seen;        /* the last trial begun (or job_from), read unlocked */

/* Whether the guard has graphing paused (its bit of the engine's pause flags). */
static int guard_paused(void)
{
    return (__atomic_load_n(&ag_engine_paused, __ATOMIC_RELAXED) & AG_PAUSE_GUARD) != 0;
}

/* A child forked while another thread of the parent held the mutex (a data loader's
 * worker, say) would find it held for ever, and hang in its exit summary. */
static void forget_in_child(void)
{
    pthread_mutex_init(&guard_mutex, NULL);
}

/* The wall clock less the monotonic one: the guard's grid is laid on the wall clock,
 * which the ranks of a job on several hosts share too (as closely as their clocks
 * agree), and measured on the monotonic one, which no clock step disturbs. */
static uint64_t wall_clock_offset(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - ag_timing_now();
}

void ag_speed_setup(int after_ms, ag_speed_count_fn *count, struct ag_speed_job *job)
{
    if (after_ms <= 0)
        return;
    pthread_atfork(NULL, NULL, forget_in_child);
    count_work = count;
    ag_speed_init(&guard, (uint64_t)after_ms * 1000000u);
    if (job) {                           /* alone, a trial comes when it is due */
        ag_speed_align(&guard, AG_SPEED_GRID_NS, wall_clock_offset());
        ag_speed_share(&guard, job, ag_timing_now());
    }
    __atomic_store_n(&guard_trial_seen, guard.job_from, __ATOMIC_RELAXED);
    __atomic_store_n(&guard_due, 0, __ATOMIC_RELAXED);
}

/* Every engine's replays (to the end, and stopped before it), windows and templates. */
static void count_engines(struct ag_speed_counts *c)
{
    int n = ag_engines_count();
    c->replays = c->trouble = c->windows = c->templates = 0;
    for (int i = 0; i < n; i++) {
        struct ag_engine *e = ag_engine_at(i);
        ag_lock_take(&e->lock);
        c->replays += e->s.replays;
        c->trouble += e->s.mismatches;
        c->windows += e->s.windows;
        c->templates += e->s.templates;
        ag_lock_give(&e->lock);
    }
}

/* Whether the guard's decisions are told: AUTOGRAPH_EXPLAIN or AUTOGRAPH_LOG=info. */
static int telling(void)
{
    return ag_config()->explain || ag_log_enabled(AG_LOG_INFO);
}

/* One line per verdict. */
static void say_verdict(const struct ag_speed *g, uint64_t now)
{
    if (!telling())
        return;
    ag_log_topic("explain: ", "speed guard: eager work took %.3fx the time of graphed work "
                 "(median of %d paused blocks): graphing %s, next trial in %.0f s",
                 g->speedup, g->n_off, g->phase == AG_SPEED_PAUSED ? "paused" : "kept",
                 (double)(g->next_ns - now) / 1e9);
}

static void apply(enum ag_speed_action a, unsigned long launches)
{
    int taken, pause = a == AG_SPEED_PAUSE;
    if (a == AG_SPEED_STAY || pause == guard_paused())
        return;                          /* nothing to change */
    if (pause)
        paused_from = launches;
    else
        paused_launches += launches - paused_from;
    taken = ag_introspect_lock();
    ag_introspect_pause(AG_PAUSE_GUARD, pause);
    ag_introspect_unlock(taken);
}

/* One line per idle pause. */
static void say_idle(const struct ag_speed *g, uint64_t now)
{
    if (!telling())
        return;
    ag_log_topic("explain: ", "speed guard: nothing made, replayed or stopped in %d "
                 "windows: recording paused for %.2f s", AG_SPEED_IDLE_WINDOWS,
                 (double)(g->next_ns - now) / 1e9);
}

static void guard_step(uint64_t now)
{
    struct ag_speed_counts c = { 0 };
    unsigned long launches;
    uint64_t seen = guard.job_from;
    enum ag_speed_phase before = guard.phase;
    enum ag_speed_action a;
    if (pthread_mutex_trylock(&guard_mutex) != 0)
        return;                          /* another thread is at it */
    count_work(&c.work, &launches);
    if (guard.phase == AG_SPEED_WAIT || guard.phase == AG_SPEED_IDLE)
        count_engines(&c);
    a = ag_speed_step(&guard, now, &c);
    if (guard.phase != before && (guard.phase == AG_SPEED_KEPT ||
                                  guard.phase == AG_SPEED_PAUSED) && guard.n_off > 0)
        say_verdict(&guard, now);
    if (guard.phase != before && guard.phase == AG_SPEED_IDLE)
        say_idle(&guard, now);
    apply(a, launches);
    __atomic_store_n(&guard_due, guard.next_ns, __ATOMIC_RELAXED);
    /* waiting or idle, it steps at its own polls, and joins the job's trial there */
    if (guard.job && (guard.phase == AG_SPEED_WAIT || guard.phase == AG_SPEED_IDLE))
        seen = __atomic_load_n(&guard.job->trial_at, __ATOMIC_ACQUIRE);
    __atomic_store_n(&guard_trial_seen, seen > guard.trial_ns ? seen : guard.trial_ns,
                     __ATOMIC_RELAXED);
    pthread_mutex_unlock(&guard_mutex);
}

/* Whether another rank of the job announced a trial that is due now (guard.job is
 * set once, at setup, and may be read without the mutex). */
static int job_trial_due(uint64_t now)
{
    uint64_t t;
    if (guard.job == NULL)
        return 0;
    t = __atomic_load_n(&guard.job->trial_at, __ATOMIC_ACQUIRE);
    return now >= t && t > __atomic_load_n(&guard_trial_seen, __ATOMIC_RELAXED);
}

void ag_speed_sync(void)
{
    uint64_t now;
    if (__atomic_load_n(&guard_due, __ATOMIC_RELAXED) == UINT64_MAX ||
        ag_thread_hot.hook_depth)
        return;
    now = ag_timing_now();
    if (now >= __atomic_load_n(&guard_due, __ATOMIC_RELAXED) || job_trial_due(now))
        guard_step(now);
}

unsigned long ag_speed_launches_paused(void)
{
    uint64_t work;
    unsigned long launches, n;
    pthread_mutex_lock(&guard_mutex);
    n = paused_launches;
    if (guard_paused()) {
        count_work(&work, &launches);
        n += launches - paused_from;
    }
    pthread_mutex_unlock(&guard_mutex);
    return n;
}

void ag_speed_summary(FILE *out, const char *prefix, unsigned long launches_paused)
{
    static const char *const phase_name[] = { "waiting", "trial_on", "trial_paused", "kept",
                                              "paused", "idle" };
    struct ag_speed g;
    pthread_mutex_lock(&guard_mutex);
    g = guard;
    pthread_mutex_unlock(&guard_mutex);
    if (__atomic_load_n(&guard_due, __ATOMIC_RELAXED) == UINT64_MAX) {
        fprintf(out, "%sguard off\n", prefix);
        return;
    }
    fprintf(out, "%sguard %s\n", prefix, phase_name[g.phase]);
    fprintf(out, "%sguard_trials %lu\n", prefix, g.trials);
    fprintf(out, "%sguard_paused_verdicts %lu\n", prefix, g.paused_verdicts);
    fprintf(out, "%sguard_speedup %.3f\n", prefix, g.speedup);
    fprintf(out, "%sguard_idle_pauses %lu\n", prefix, g.idle_pauses);
    fprintf(out, "%sguard_launches_paused %lu\n", prefix, launches_paused);
}
