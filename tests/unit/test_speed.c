/* test_speed.c -- the speed guard's decision (shim/match_speed.c, ag_speed_step),
 * driven with made-up times and counts: when a trial starts, how blocks alternate,
 * which verdict a trial reaches and when the next trial comes; when a program with
 * nothing to graph has recording paused, for how long, and what a quiet spell does.
 */
#include "check.h"
#include "match_speed.h"

#include <math.h>

#define MS 1000000ull

static uint64_t now, work;

/* A step with these counts, and no window ended: the idle watch never fires. */
static enum ag_speed_action step(struct ag_speed *g, uint64_t at, uint64_t w,
                                 uint64_t replays, uint64_t trouble)
{
    struct ag_speed_counts c = { .work = w, .replays = replays, .trouble = trouble };
    return ag_speed_step(g, at, &c);
}

/* A block of the program's run: `ops` ops at ns_per_op each, then a sync. */
static enum ag_speed_action block(struct ag_speed *g, double ns_per_op, uint64_t ops)
{
    now += (uint64_t)(ns_per_op * (double)ops);
    work += ops;
    return step(g, now, work, 100, 0);
}

/* A guard whose trial has just begun (its first ON block under way). */
static void start_trial(struct ag_speed *g)
{
    now = 1000 * MS;
    work = 0;
    ag_speed_init(g, 1000 * MS);
    CHECK(step(g, now, work, 1, 0) == AG_SPEED_STAY);   /* first replay seen */
    now += 1000 * MS;
    CHECK(step(g, now, work, 50, 0) == AG_SPEED_STAY);  /* the trial begins */
    CHECK(g->phase == AG_SPEED_ON && g->trials == 1);
}

/* Runs the trial's blocks (on, off, on, ...) of 20 ms or more each until a verdict:
 * the number of OFF blocks it took. */
static int run_trial(struct ag_speed *g, double on_ns, double off_ns)
{
    int offs = 0;
    for (int i = 0; i < 2 * AG_SPEED_PAIRS_MAX + 1; i++) {
        int on = g->phase == AG_SPEED_ON;
        enum ag_speed_action a = block(g, on ? on_ns : off_ns, 25 * MS / 10);
        if (on && (g->phase == AG_SPEED_KEPT || g->phase == AG_SPEED_PAUSED))
            return offs;
        CHECK(a == (on ? AG_SPEED_PAUSE : AG_SPEED_RESUME));
        offs += !on;
    }
    return -1;
}

static void test_waits_for_replays(void)
{
    struct ag_speed g;
    now = 5 * MS;
    ag_speed_init(&g, 1000 * MS);
    CHECK(step(&g, now, 10, 0, 0) == AG_SPEED_STAY && g.phase == AG_SPEED_WAIT);
    CHECK(g.next_ns == now + AG_SPEED_POLL_NS);
    CHECK(step(&g, now + 1, 10, 0, 0) == AG_SPEED_STAY);   /* not due yet */
    now += AG_SPEED_POLL_NS;
    CHECK(step(&g, now, 20, 3, 0) == AG_SPEED_STAY && g.first_replay_ns == now);
    now += 999 * MS;
    CHECK(step(&g, now, 30, 9, 0) == AG_SPEED_STAY && g.phase == AG_SPEED_WAIT);
    now += 2 * AG_SPEED_POLL_NS;
    CHECK(step(&g, now, 40, 9, 0) == AG_SPEED_STAY && g.phase == AG_SPEED_ON);
    CHECK(g.trials == 1 && g.block_work == 40 && g.next_ns == now + AG_SPEED_BLOCK_NS);
}

static void test_trouble_brings_the_trial_early(void)
{
    struct ag_speed g;
    now = 5 * MS;
    ag_speed_init(&g, 1000 * MS);
    CHECK(step(&g, now, 0, 1, 4) == AG_SPEED_STAY);
    now += 260 * MS;
    CHECK(step(&g, now, 0, 2, 4 + AG_SPEED_TROUBLE - 1) == AG_SPEED_STAY);
    CHECK(g.phase == AG_SPEED_WAIT);
    now += AG_SPEED_POLL_NS;
    CHECK(step(&g, now, 0, 2, 4 + AG_SPEED_TROUBLE) == AG_SPEED_STAY);
    CHECK(g.phase == AG_SPEED_ON);
}

static void test_faster_graphs_are_kept(void)
{
    struct ag_speed g;
    start_trial(&g);
    CHECK(run_trial(&g, 1000, 1100) == AG_SPEED_PAIRS);
    CHECK(g.phase == AG_SPEED_KEPT && fabs(g.speedup - 1.1) < 1e-9);
    CHECK(g.next_ns == now + AG_SPEED_KEEP_NS && g.paused_verdicts == 0);
    /* the next trial: a block early is nothing, then a trial with graphing on */
    CHECK(step(&g, now + AG_SPEED_KEEP_NS - 1, work, 100, 0) == AG_SPEED_STAY);
    now += AG_SPEED_KEEP_NS;
    CHECK(step(&g, now, work, 100, 0) == AG_SPEED_STAY && g.phase == AG_SPEED_ON);
    CHECK(run_trial(&g, 1000, 1100) == AG_SPEED_PAIRS && g.phase == AG_SPEED_KEPT);
    CHECK(g.next_ns == now + 2 * AG_SPEED_KEEP_NS && g.trials == 2);   /* doubled */
}

/* Graphs far faster are kept after one paused block; far slower ones still take
 * AG_SPEED_PAIRS of them (a garbage collection in one ON block pauses nothing). */
static void test_clear_wins_are_quick(void)
{
    struct ag_speed g;
    start_trial(&g);
    CHECK(run_trial(&g, 1000, 1300) == 1 && g.phase == AG_SPEED_KEPT);
    CHECK(fabs(g.speedup - 1.3) < 1e-9);
    start_trial(&g);
    CHECK(run_trial(&g, 3000, 1000) == AG_SPEED_PAIRS && g.phase == AG_SPEED_PAUSED);
}

static void test_slower_graphs_are_paused(void)
{
    struct ag_speed g;
    uint64_t interval = AG_SPEED_PAUSE_NS;
    start_trial(&g);
    CHECK(run_trial(&g, 1500, 1000) == AG_SPEED_PAIRS);
    CHECK(g.phase == AG_SPEED_PAUSED && g.paused_verdicts == 1);
    CHECK(fabs(g.speedup - 1000.0 / 1500) < 1e-9);
    for (int i = 1; i <= AG_SPEED_LEVELS + 2; i++) {
        CHECK(g.next_ns == now + interval);
        now = g.next_ns;
        /* the pause's end: graphing resumes for the next trial's first ON block */
        CHECK(step(&g, now, work, 100, 0) == AG_SPEED_RESUME);
        CHECK(run_trial(&g, 1500, 1000) == AG_SPEED_PAIRS);
        if (i <= AG_SPEED_LEVELS)
            interval *= 2;           /* doubled up to 2^AG_SPEED_LEVELS times */
    }
    CHECK(g.next_ns == now + (AG_SPEED_PAUSE_NS << AG_SPEED_LEVELS));
    /* the program changes: graphing now wins, is kept, and its interval starts anew */
    now = g.next_ns;
    CHECK(step(&g, now, work, 100, 0) == AG_SPEED_RESUME);
    CHECK(run_trial(&g, 1000, 2000) == 1 && g.phase == AG_SPEED_KEPT);
    CHECK(g.next_ns == now + AG_SPEED_KEEP_NS);
}

static void test_unclear_trials_go_on(void)
{
    struct ag_speed g;
    start_trial(&g);
    CHECK(run_trial(&g, 1000, 1010) == AG_SPEED_PAIRS_MAX);
    CHECK(g.phase == AG_SPEED_KEPT);          /* not slower: kept */
    start_trial(&g);
    CHECK(run_trial(&g, 1010, 1000) == AG_SPEED_PAIRS_MAX);
    CHECK(g.phase == AG_SPEED_PAUSED);        /* slower, if a little: paused */
}

/* The median: one wild block (the program did something else then) is outvoted. */
static void test_one_odd_block_is_outvoted(void)
{
    struct ag_speed g;
    start_trial(&g);
    CHECK(block(&g, 1000, 25000) == AG_SPEED_PAUSE);
    CHECK(block(&g, 900, 25000) == AG_SPEED_RESUME);    /* eager faster, once */
    CHECK(block(&g, 1000, 25000) == AG_SPEED_PAUSE);
    CHECK(block(&g, 1300, 25000) == AG_SPEED_RESUME);
    CHECK(block(&g, 1000, 25000) == AG_SPEED_PAUSE);
    CHECK(block(&g, 1300, 25000) == AG_SPEED_RESUME);
    CHECK(block(&g, 1000, 25000) == AG_SPEED_STAY);
    CHECK(g.phase == AG_SPEED_KEPT && fabs(g.speedup - 1.3) < 1e-9);
}

/* A block in which the program submitted nothing ends the trial without a verdict. */
static void test_a_block_without_work_is_no_trial(void)
{
    struct ag_speed g;
    start_trial(&g);
    CHECK(block(&g, 1000, 25000) == AG_SPEED_PAUSE && g.phase == AG_SPEED_OFF);
    now += 30 * MS;
    CHECK(step(&g, now, work, 100, 0) == AG_SPEED_RESUME);
    CHECK(g.phase == AG_SPEED_KEPT && g.trials == 0 && g.n_off == 0);
    CHECK(g.next_ns == now + AG_SPEED_KEEP_NS);
}

/* Windows with nothing made or replayed pause recording; each pause that finds
 * nothing again doubles, up to the cap; a template made begins the watch again. */
static void test_idle_programs_pause_recording(void)
{
    struct ag_speed g;
    struct ag_speed_counts c = { .work = 10 };
    uint64_t len = AG_SPEED_IDLE_NS;
    now = 5 * MS;
    ag_speed_init(&g, 1000 * MS);
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY && g.phase == AG_SPEED_WAIT);
    c.windows = AG_SPEED_IDLE_WINDOWS - 1;
    now += AG_SPEED_POLL_NS;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY);     /* one window short */
    c.windows++;
    now += AG_SPEED_POLL_NS;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_PAUSE && g.phase == AG_SPEED_IDLE);
    CHECK(g.next_ns == now + len && g.idle_pauses == 1);
    CHECK(ag_speed_step(&g, now + len - 1, &c) == AG_SPEED_STAY);
    for (int i = 1; i <= AG_SPEED_IDLE_LEVELS + 2; i++) {
        now += len;
        CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_RESUME && g.phase == AG_SPEED_WAIT);
        c.windows += AG_SPEED_IDLE_WINDOWS;   /* nothing again */
        now += AG_SPEED_POLL_NS;
        CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_PAUSE);
        len = AG_SPEED_IDLE_NS << (i < AG_SPEED_IDLE_LEVELS ? i : AG_SPEED_IDLE_LEVELS);
        CHECK(g.next_ns == now + len);        /* doubled, up to the cap */
    }
    now += len;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_RESUME);
    c.windows += 3 * AG_SPEED_IDLE_WINDOWS;
    c.templates++;                            /* a template made: no pause... */
    now += AG_SPEED_POLL_NS;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY && g.phase == AG_SPEED_WAIT);
    c.windows += AG_SPEED_IDLE_WINDOWS;       /* ...until nothing again, for a short one */
    now += AG_SPEED_POLL_NS;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_PAUSE && g.next_ns == now + AG_SPEED_IDLE_NS);
}

/* A step that comes long after it was due follows a quiet spell: the windows counted
 * before it are not held against the work after it, which the watch counts anew. */
static void test_quiet_spell_begins_the_watch_again(void)
{
    struct ag_speed g;
    struct ag_speed_counts c = { .work = 10 };
    now = 5 * MS;
    ag_speed_init(&g, 1000 * MS);
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY);
    c.windows = AG_SPEED_IDLE_WINDOWS - 1;    /* one short, then the program sleeps */
    now += AG_SPEED_POLL_NS;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY);
    c.windows++;
    now += AG_SPEED_POLL_NS + AG_SPEED_IDLE_NS + 1;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY && g.phase == AG_SPEED_WAIT);
    c.windows += AG_SPEED_IDLE_WINDOWS - 1;   /* after it, idle windows count from 0 */
    now += AG_SPEED_POLL_NS;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY);
    c.windows++;
    now += AG_SPEED_POLL_NS + AG_SPEED_IDLE_NS;   /* late, but not by more than that */
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_PAUSE && g.idle_pauses == 1);
}

/* A program busy with windows between rare synchronizations is not quiet: its late
 * steps still find it idle. */
static void test_rare_syncs_are_not_a_quiet_spell(void)
{
    struct ag_speed g;
    struct ag_speed_counts c = { .work = 10 };
    uint64_t gap = 4 * AG_SPEED_IDLE_NS;
    now = 5 * MS;
    ag_speed_init(&g, 1000 * MS);
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY);
    c.windows += 4 * AG_SPEED_IDLE_WINDOWS;   /* the rate an idle pause is worth */
    now += gap;
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_PAUSE && g.idle_pauses == 1);
    now += AG_SPEED_IDLE_NS;                  /* resumed, then busy and late again */
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_RESUME);
    c.windows += 4 * AG_SPEED_IDLE_WINDOWS - 1;
    now += gap;                               /* one window short of that rate: quiet */
    CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY && g.idle_pauses == 1);
}

/* Replays keep the watch quiet; a trial then comes as without it. */
static void test_replays_are_not_idle(void)
{
    struct ag_speed g;
    struct ag_speed_counts c = { .work = 10 };
    now = 5 * MS;
    ag_speed_init(&g, 1000 * MS);
    for (int i = 0; i < 400; i++) {
        c.windows += AG_SPEED_IDLE_WINDOWS / 2;
        c.replays += 1;
        c.work += 100;
        now += AG_SPEED_POLL_NS;
        CHECK(ag_speed_step(&g, now, &c) == AG_SPEED_STAY);
        if (g.phase != AG_SPEED_WAIT)
            break;
    }
    CHECK(g.phase == AG_SPEED_ON && g.idle_pauses == 0);
}

/* On a grid, the first trial waits for the grid's next point after its due time, and
 * the next trial is due an interval after the last began, on the grid again. */
static void test_trials_are_on_the_grid(void)
{
    struct ag_speed g;
    uint64_t grid = AG_SPEED_GRID_NS, phase = 70 * MS, due;
    now = 5 * MS;
    ag_speed_init(&g, 1000 * MS);
    ag_speed_align(&g, grid, phase);
    CHECK(step(&g, now, 0, 1, 0) == AG_SPEED_STAY && g.first_replay_ns == now);
    due = now + 1000 * MS;
    due += (grid - (due + phase) % grid) % grid;     /* the grid point after it */
    CHECK(due > now + 1000 * MS && (due + phase) % grid == 0);
    now += 1000 * MS + AG_SPEED_POLL_NS;
    CHECK(step(&g, now, 0, 9, 0) == AG_SPEED_STAY && g.phase == AG_SPEED_WAIT);
    now = due;
    CHECK(step(&g, now, 0, 9, 0) == AG_SPEED_STAY && g.phase == AG_SPEED_ON);
    CHECK(g.trial_ns == due);
    work = 0;
    for (int i = 0; i < AG_SPEED_PAIRS; i++) {      /* short blocks: 25 ms */
        CHECK(block(&g, 1000, 25000) == AG_SPEED_PAUSE);
        CHECK(block(&g, 1100, 25000) == AG_SPEED_RESUME);
    }
    CHECK(block(&g, 1000, 25000) == AG_SPEED_STAY && g.phase == AG_SPEED_KEPT);
    CHECK(g.next_ns == due + AG_SPEED_KEEP_NS);     /* from the trial's start */
    /* a trial longer than its interval: the next one an interval after the verdict */
    ag_speed_align(&g, grid, 0);
    now += 10 * AG_SPEED_KEEP_NS;
    g.trial_ns = now - 2 * AG_SPEED_KEEP_NS;
    g.phase = AG_SPEED_ON;
    g.n_on = g.n_off = 0;
    g.last_verdict = AG_SPEED_WAIT;
    g.block_ns = g.next_ns = now;
    g.block_work = work;
    for (int i = 0; i < AG_SPEED_PAIRS; i++) {
        block(&g, 1000, 25000);
        block(&g, 1100, 25000);
    }
    block(&g, 1000, 25000);
    CHECK(g.phase == AG_SPEED_KEPT && g.next_ns >= now + AG_SPEED_KEEP_NS);
    CHECK(g.next_ns < now + AG_SPEED_KEEP_NS + grid && g.next_ns % grid == 0);
}

/* Two ranks of a data-parallel job, in lockstep: a step takes as long as the slower
 * rank's (eager 10 ms, graphed 9 ms), and each syncs every sync_every steps, rank 1
 * skew ns after rank 0 (their syncs wait for the same collective: a skew far below a
 * step; a grid point between the two would still part them by a step).  Rank 1's
 * first replay comes late_steps after rank 0's.  Returns the steps in which one rank
 * ran eager and the other graphed, over 60 s, once both replay; each rank's trials and
 * kept verdicts in trials[], kept[]. */
struct lockstep {
    uint64_t grid, skew;
    int late_steps, sync_every, share;
    unsigned long trials[2], kept[2];
};

static int job_in_lockstep(struct lockstep *j)
{
    struct ag_speed g[2];
    struct ag_speed_job shared = { .trial_at = 3 * MS };   /* stale: another job's */
    int on[2] = { 1, 1 }, apart = 0;
    uint64_t t = 5 * MS, w = 0;
    for (int r = 0; r < 2; r++) {
        ag_speed_init(&g[r], 1000 * MS);
        ag_speed_align(&g[r], j->grid, 0);
        if (j->share)
            ag_speed_share(&g[r], &shared, t);
    }
    for (int k = 0; t < 60000 * MS; k++) {
        t += on[0] && on[1] ? 9 * MS : 10 * MS;
        w += 600;
        apart += on[0] != on[1] && k > j->late_steps;
        if ((k + 1) % j->sync_every)
            continue;
        for (int r = 0; r < 2; r++) {
            uint64_t replays = k >= (r ? j->late_steps : 0) ? 1 + (uint64_t)k : 0;
            enum ag_speed_action a = step(&g[r], t + (r ? j->skew : 0), w, replays, 0);
            if (a != AG_SPEED_STAY)
                on[r] = a == AG_SPEED_RESUME;
        }
    }
    for (int r = 0; r < 2; r++) {
        j->kept[r] = g[r].trials - g[r].paused_verdicts;
        j->trials[r] = g[r].trials;
    }
    return apart;
}

static void test_ranks_try_the_same_steps(void)
{
    struct lockstep j = { .grid = AG_SPEED_GRID_NS, .skew = 50000, .late_steps = 7,
                          .sync_every = 1 };
    CHECK(job_in_lockstep(&j) == 0);
    CHECK(j.trials[0] == j.trials[1] && j.trials[0] >= 4 && j.kept[0] == j.trials[0]);
    CHECK(j.kept[1] == j.trials[1]);
    /* without the grid, rank 1's trials come 7 steps after rank 0's */
    j.grid = 0;
    CHECK(job_in_lockstep(&j) > 0);
    /* rank 1 replays 0.3 s later, syncs every 25 steps: first trials a grid point
     * apart, unless the job shares them */
    j = (struct lockstep){ .grid = AG_SPEED_GRID_NS, .skew = 50000, .late_steps = 30,
                           .sync_every = 25 };
    CHECK(job_in_lockstep(&j) > 0);
    j.share = 1;
    CHECK(job_in_lockstep(&j) == 0);
    CHECK(j.trials[0] == j.trials[1] && j.trials[0] >= 3 && j.kept[0] == j.trials[0]);
    /* shared, without the grid, and skewed by a whole millisecond */
    j.grid = 0;
    j.skew = MS;
    CHECK(job_in_lockstep(&j) == 0);
    CHECK(j.trials[0] == j.trials[1] && j.kept[1] == j.trials[1]);
}

/* A job's trial: announced ahead by the first rank due, joined by a rank that has
 * replayed, not by one that has not; an announcement from before this guard began is
 * another job's. */
static void test_a_job_shares_its_trials(void)
{
    struct ag_speed a, b;
    struct ag_speed_job job = { .trial_at = 500 * MS };
    now = 1000 * MS;
    ag_speed_init(&a, 1000 * MS);
    ag_speed_init(&b, 1000 * MS);
    ag_speed_share(&a, &job, now);
    ag_speed_share(&b, &job, now);
    CHECK(ag_speed_job_trial(&a) == 0);                 /* stale */
    CHECK(step(&a, now, 0, 1, 0) == AG_SPEED_STAY && a.first_replay_ns == now);
    CHECK(step(&b, now, 0, 0, 0) == AG_SPEED_STAY && b.first_replay_ns == 0);
    now += 1000 * MS;
    CHECK(step(&a, now, 10, 5, 0) == AG_SPEED_STAY && a.phase == AG_SPEED_WAIT);
    CHECK(job.trial_at == now + AG_SPEED_LEAD_NS && a.next_ns == job.trial_at);
    CHECK(ag_speed_job_trial(&b) == job.trial_at);
    now += AG_SPEED_POLL_NS;
    CHECK(step(&b, now, 10, 0, 0) == AG_SPEED_STAY && b.phase == AG_SPEED_WAIT);
    now = job.trial_at;
    CHECK(step(&a, now, 20, 5, 0) == AG_SPEED_STAY && a.phase == AG_SPEED_ON);
    CHECK(a.trial_ns == now && ag_speed_job_trial(&a) == 0);
    CHECK(step(&b, now, 20, 0, 0) == AG_SPEED_STAY);    /* no replay: not joined */
    CHECK(b.phase == AG_SPEED_WAIT && b.trials == 0);
    /* b replays, and is due later on its own: it joins the job's next trial */
    CHECK(step(&b, now + AG_SPEED_POLL_NS, 20, 3, 0) == AG_SPEED_STAY && b.first_replay_ns);
    __atomic_store_n(&job.trial_at, now + 100 * MS, __ATOMIC_RELEASE);
    CHECK(step(&b, now + 100 * MS - 1, 30, 3, 0) == AG_SPEED_STAY && b.phase == AG_SPEED_WAIT);
    CHECK(step(&b, now + 100 * MS, 30, 3, 0) == AG_SPEED_STAY && b.phase == AG_SPEED_ON);
    CHECK(b.trial_ns == now + 100 * MS && b.trials == 1);
}

int main(void)
{
    test_idle_programs_pause_recording();
    test_quiet_spell_begins_the_watch_again();
    test_rare_syncs_are_not_a_quiet_spell();
    test_replays_are_not_idle();
    test_waits_for_replays();
    test_trouble_brings_the_trial_early();
    test_faster_graphs_are_kept();
    test_slower_graphs_are_paused();
    test_clear_wins_are_quick();
    test_unclear_trials_go_on();
    test_one_odd_block_is_outvoted();
    test_a_block_without_work_is_no_trial();
    test_trials_are_on_the_grid();
    test_ranks_try_the_same_steps();
    test_a_job_shares_its_trials();
    return check_finish("test_speed");
}
