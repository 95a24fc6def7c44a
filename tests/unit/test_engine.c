/* test_engine.c -- the engine with a fake backend: order is kept, repeats become
 * graphs, changed args are patched, alternating args become variants, mismatches
 * and failures fall back to eager.
 *
 * The fake backend "executes" work by appending the arg value of each op to a log:
 * issue() appends one value, launch() appends the values its executable graph holds,
 * node by node, each with the stream it ran on.  Whatever the engine holds, builds or
 * patches, the log must equal the sequence of values (and streams) the program
 * submitted.  Launches go through the replay's fast path first, as the wrapper does.  The engine's sources are compiled for
 * this test without the CUDA include path (unit.mk), which proves they need none.
 */
#include "check.h"
#include "config.h"            /* enum ag_launch_thread */
#include "engine.h"
#include "engine_internal.h"   /* ag_eng: switches and counters of the skim test */
#include "entry_points.h"      /* AG_EP_ ids of flush points */

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOG 100000
static uint64_t submitted[MAX_LOG], executed[MAX_LOG];
static uintptr_t submitted_stream[MAX_LOG], executed_stream[MAX_LOG];
static int nsubmitted, nexecuted, builds, launches, patches, fail_launch_at = -1;

struct fake_graph { int n; uint64_t *args; unsigned char *slots; };

static uint64_t arg_of(const struct ag_op *op)
{
    uint64_t v = 0;
    memcpy(&v, op->args, op->args_len < 8 ? op->args_len : 8);
    return v;
}

static int fake_issue(const struct ag_op *op)
{
    executed_stream[nexecuted] = op->stream;
    executed[nexecuted++] = arg_of(op);
    return 0;
}

static int fake_build(const struct ag_op *ops, int n, int nslots, void **graph, void **nodes)
{
    struct fake_graph *g = calloc(1, sizeof *g);
    (void)nslots;
    g->n = n;
    g->args = calloc((size_t)n, sizeof *g->args);
    g->slots = calloc((size_t)n, 1);
    for (int i = 0; i < n; i++) {
        g->args[i] = arg_of(&ops[i]);
        g->slots[i] = ops[i].slot;
        nodes[i] = (void *)(intptr_t)(i + 1);
    }
    *graph = g;
    builds++;
    return 0;
}

static int fake_instantiate(void *graph, void **exec)
{
    struct fake_graph *g = graph, *e = calloc(1, sizeof *e);
    e->n = g->n;
    e->args = malloc((size_t)g->n * sizeof *e->args);
    memcpy(e->args, g->args, (size_t)g->n * sizeof *e->args);
    e->slots = malloc((size_t)g->n);
    memcpy(e->slots, g->slots, (size_t)g->n);
    *exec = e;
    return 0;
}

static int fake_patch(void *exec, void *node, const struct ag_op *op)
{
    struct fake_graph *e = exec;
    e->args[(intptr_t)node - 1] = arg_of(op);
    patches++;
    return 0;
}

/* Yields while `busy` says so, `tries` times at most: 1 when it stopped saying so. */
static int yield_while(int (*busy)(void), long tries)
{
    for (long i = 0; i < tries && busy(); i++)
        sched_yield();
    return !busy();
}

/* While set, a launch waits (up to ~2 s) for it to be cleared: a launch that is out
 * while the test thread goes on.  Set when the wait ran out. */
static int launch_gate, launch_gate_ran_out;

static int gate_closed(void)
{
    return __atomic_load_n(&launch_gate, __ATOMIC_ACQUIRE);
}

static void wait_at_gate(void)
{
    if (!yield_while(gate_closed, 2000000))
        launch_gate_ran_out = 1;
}

static int fake_launch(void *exec, uintptr_t ctx, const uintptr_t *streams, int nstreams)
{
    struct fake_graph *e = exec;
    CHECK(ctx == 1 || ctx == 2);     /* the ops' context, which built it */
    wait_at_gate();
    if (launches++ == fail_launch_at)
        return 999;
    for (int i = 0; i < e->n; i++) {
        CHECK(e->slots[i] < nstreams);
        executed_stream[nexecuted] = streams[e->slots[i]];
        executed[nexecuted++] = e->args[i];
    }
    return 0;
}

static void fake_release_graph(void *graph, void **nodes, int n)
{
    struct fake_graph *g = graph;
    (void)nodes, (void)n;
    free(g->args);
    free(g->slots);
    free(g);
}

static void fake_release_exec(void *exec)
{
    fake_release_graph(exec, NULL, 0);
}

static const struct ag_backend fake = {   /* no stream kinds, unloads, introspection */
    .issue = fake_issue, .build = fake_build, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec,
};

static int light_offers, full_after_light, queued_ops, fast_holds, fast_event_holds;
static const int fake_layout;      /* the one parameter layout: one 8-byte arg */

static void fill_arg(const struct ag_fast_kernel *k, const void *layout, unsigned char *dst)
{
    CHECK(layout == &fake_layout);
    memcpy(dst, k->params[0], 8);
}

/* The fake backend's view of a call is its 8 shape bytes. */
static int fake_matches(const struct ag_fast_kernel *k, const unsigned char *shape,
                        uint32_t shape_len, const void *layout, uint32_t args_len)
{
    return shape_len == 8 && layout == &fake_layout && args_len == 8 &&
           memcmp(shape, k->call, 8) == 0;
}

/* The context the program submits in (test_two_contexts: 2). */
static uintptr_t submit_ctx = 1;

/* The replay's fast path, as the wrapper tries it first: 1 when the launch was held. */
static int submit_fast(const unsigned char shape[8], uint64_t *arg, uintptr_t stream)
{
    void *params[1] = { arg };
    struct ag_fast_kernel k = {
        .stream = stream, .ctx = submit_ctx, .call = shape, .matches = fake_matches,
        .fill_args = fill_arg, .params = params,
    };
    if (!ag_replay_open() || !ag_engine_fast_kernel(&k))
        return 0;
    fast_holds++;
    return 1;
}

/* The program submits a kernel op on `stream`: function `fn`, one 8-byte arg.  As the
 * wrapper does, the op is recorded light when the engine hints so (no args, no
 * context), and again in full when the engine asks for it. */
static void submit_on(int fn, uint64_t arg, uintptr_t stream)
{
    unsigned char shape[8] = { (unsigned char)fn };
    struct ag_op op = {
        .kind = AG_OP_KERNEL, .stream = stream, .shape = shape, .shape_len = 8,
        .hash = ag_hash_bytes(7, shape, 8), .light = (unsigned char)ag_engine_light_hint(),
    };
    op.skim = op.hash;              /* as the recorders set it for a call skimmed by hash */
    int how;
    submitted_stream[nsubmitted] = stream;
    submitted[nsubmitted++] = arg;
    if (submit_fast(shape, &arg, stream))
        return;
    for (;;) {
        if (!op.light) {
            op.ctx = submit_ctx;
            op.layout = &fake_layout;
            op.args = (const unsigned char *)&arg;
            op.args_len = 8;
        }
        light_offers += op.light;
        if (op.light && ag_engine_light_push(&op)) {
            ag_launch_settle();                     /* as the wrapper, before the call */
            executed_stream[nexecuted] = stream;   /* queued: the call is made, no lock */
            executed[nexecuted++] = arg;
            queued_ops++;
            return;
        }
        how = ag_engine_offer(&op);
        if (how != AG_RECORD_FULL)
            break;
        CHECK(op.light);
        full_after_light++;
        op.light = 0;
    }
    if (how == AG_HELD)
        return;
    if (how == AG_EAGER && !op.light) {
        fake_issue(&op);
    } else {                  /* fake_issue needs the args a light op lacks; AG_PASS and */
        executed_stream[nexecuted] = stream;   /* AG_QUEUED: the wrapper makes the call */
        executed[nexecuted++] = arg;
    }
    if (how == AG_EAGER)
        ag_engine_done(&op, 0);
}

static void submit(int fn, uint64_t arg)
{
    submit_on(fn, arg, 0x1000);
}

static void sync_point(void)
{
    ag_engine_flush(AG_FLUSH_SYNC);
}

static int same_order(void)
{
    return nexecuted == nsubmitted &&
           memcmp(executed, submitted, (size_t)nsubmitted * sizeof *executed) == 0 &&
           memcmp(executed_stream, submitted_stream,
                  (size_t)nsubmitted * sizeof *executed_stream) == 0;
}

/* One sync-delimited window of n ops: functions first, first + 1, ..., args 0, 1, .... */
static void window_of(int first, int n)
{
    for (int k = 0; k < n; k++)
        submit(first + k, (uint64_t)k);
    sync_point();
}

static void reset(void)
{
    ag_engine_reset_for_tests();
    nsubmitted = nexecuted = builds = launches = patches = 0;
    light_offers = full_after_light = queued_ops = fast_holds = fast_event_holds = 0;
    fail_launch_at = -1;
}

/* Light recording: after 3 differing windows ops are recorded light; a repeat
 * brings full recording back and the graph comes one window later; a template's
 * first op is always asked for in full; a period seen light is found again in full. */
static void test_light_recording(void)
{
    reset();
    for (int it = 0; it < 5; it++)            /* 5 differing windows: light from the 4th */
        window_of(100 + it * 10, 6);
    CHECK(light_offers == 2 * 6 && builds == 0 && queued_ops == 2 * 6);
    for (int it = 0; it < 6; it++) {          /* then one window repeating */
        for (int k = 0; k < 6; k++)
            submit(k, (uint64_t)k);
        sync_point();
        CHECK(builds == (it >= 2));            /* light, light (repeat: full), full: built */
    }
    CHECK(same_order() && launches == 3);

    for (int it = 0; it < 5; it++)            /* differing windows again: light again */
        window_of(200 + it * 10, 6);
    full_after_light = 0;
    for (int k = 0; k < 6; k++)                /* the template's first op: asked in full */
        submit(k, (uint64_t)k);
    sync_point();
    CHECK(full_after_light == 1 && launches == 4 && same_order());

    reset();
    for (int it = 0; it < 5; it++)            /* light, then no sync: a period */
        window_of(300 + it * 10, 6);
    for (int it = 0; it < 200; it++)
        for (int k = 0; k < 5; k++)
            submit(k, (uint64_t)k);
    sync_point();
    CHECK(same_order() && builds >= 1 && launches > 20);
}

/* Skimming: after 3 differing windows light, after 2 more skimmed (every op still
 * runs, in order); every 32nd skimmed window is recorded light; a skimmed window
 * that repeats brings full recording back and the graph a warm-up later; an op that
 * could start a template ends skimming, and its template replays. */
static void test_skimming(void)
{
    unsigned long light_before;
    reset();
    ag_eng.p.skim_after = 2;
    for (int it = 0; it < 5; it++)            /* full, full, full, light, light */
        window_of(400 + it * 10, 6);
    CHECK(ag_eng.s.skimmed_windows == 0 && ag_eng.s.light_windows == 2);
    light_before = ag_eng.s.light_windows;
    for (int it = 0; it < 40; it++)           /* skimmed, but for one light probe */
        window_of(1000 + it * 10, 6);
    CHECK(ag_eng.s.skimmed_windows == 39 && ag_eng.s.skimmed_ops == 39 * 6);
    CHECK(ag_eng.s.light_windows == light_before + 1 && builds == 0 && same_order());
    for (int it = 0; it < 6; it++) {          /* one window repeating (functions are one
                                               * byte: none of the 16 windows before has
                                               * these) */
        window_of(200, 6);
    }
    /* skimmed, skimmed (repeat: full), full, full: built, replayed twice */
    CHECK(ag_eng.s.skimmed_windows == 41 && builds == 1 && launches == 2 && same_order());
    for (int it = 0; it < 8; it++)            /* differing again: light, then skimmed */
        window_of(2000 + it * 10, 6);
    CHECK(ag_eng.s.skimmed_windows > 41);
    full_after_light = 0;
    window_of(200, 6);                         /* the template's first op ends skimming */
    CHECK(full_after_light == 1 && launches == 3 && same_order());
    ag_eng.p.skim_after = 0;
}

/* `steps` steps of test_same_start_windows: a window of 6 ops, a sync, a window of 8 ops,
 * a sync; both windows begin with op 80. */
static void same_start_steps(int steps)
{
    for (int it = 0; it < steps; it++) {
        for (int k = 0; k < 6; k++)
            submit(k == 0 ? 80 : 81 + k, (uint64_t)k);
        sync_point();
        for (int k = 0; k < 8; k++)
            submit(k == 0 ? 80 : 90 + k, (uint64_t)k);
        sync_point();
    }
}

/* Two windows of one step that begin with the same op (a layer norm after each
 * synchronous copy), in turn: each one's replay starts with its own template (the one
 * that came after the window before last time), so neither mismatches once built. */
static void test_same_start_windows(void)
{
    unsigned long mismatches;
    int built;
    reset();
    same_start_steps(6);
    CHECK(builds >= 2 && same_order());
    mismatches = ag_eng.s.mismatches;
    built = builds;
    launches = 0;
    same_start_steps(20);
    CHECK(ag_eng.s.mismatches == mismatches && builds == built && launches >= 40 &&
          same_order());
}

/* `steps` steps of test_futile: its futile window (ops 50 and 51, a sync) and, with
 * `graphable`, its graphable one after it (ops 60..65, a sync). */
static void futile_steps(int steps, int graphable)
{
    for (int it = 0; it < steps; it++) {
        submit(50, (uint64_t)it);
        submit(51, (uint64_t)it);
        sync_point();
        if (!graphable)
            continue;
        for (int k = 0; k < 6; k++)
            submit(60 + k, (uint64_t)(it * 10 + k));
        sync_point();
    }
}

/* A template whose replays keep stopping before its end (windows that only start
 * like it, each time otherwise) goes after AG_MISMATCH_RETIRE stops: no more ops are
 * held and issued back for nothing; every op runs, in order. */
static void test_mismatch_retire(void)
{
    reset();
    for (int it = 0; it < 3; it++)            /* built */
        window_of(120, 8);
    CHECK(builds == 2 && ag_eng.s.retired == 0);  /* two chunks */
    for (int it = 0; it < AG_MISMATCH_RETIRE + 4; it++) {
        for (int k = 0; k < 8; k++)           /* the same start, op 4 new each time */
            submit(k == 4 ? 140 + it : 120 + k, (uint64_t)k);
        sync_point();
    }
    CHECK(ag_eng.s.retired == 1 && ag_eng.s.mismatches == AG_MISMATCH_RETIRE);
    CHECK(builds == 2 && same_order());
}

/* Back-off (match_backoff.c): templates retired for their stops AG_BACKOFF_STRIKES
 * times in a row stop the making of templates for AG_BACKOFF_WINDOWS judged windows
 * (a window that repeats is not built: `skip backoff`); then it is built as before,
 * and order is kept throughout. */
static void back_off(void)
{
    for (int r = 0; r < AG_BACKOFF_STRIKES; r++) {
        for (int it = 0; it < 3; it++)        /* built */
            window_of(300 + 20 * r, 8);
        for (int it = 0; it < AG_MISMATCH_RETIRE + 2; it++) {
            for (int k = 0; k < 8; k++)       /* the same start, op 4 new each time */
                submit(k == 4 ? 400 + 40 * r + it : 300 + 20 * r + k, (uint64_t)k);
            sync_point();
        }
    }
    CHECK(ag_eng.s.retired == AG_BACKOFF_STRIKES && ag_eng.s.backoffs == 1);
}

static void test_backoff(void)
{
    int built;
    reset();
    back_off();
    built = builds;
    for (int it = 0; it < (int)AG_BACKOFF_WINDOWS / 2; it++) {
        for (int k = 0; k < 8; k++)           /* repeats, but no template is made */
            submit(600 + k, (uint64_t)(it * 8 + k));
        sync_point();
    }
    CHECK(builds == built && ag_eng.s.skip[AG_SKIP_BACKOFF] > 0 && same_order());
    for (int it = 0; it < (int)AG_BACKOFF_WINDOWS; it++) {
        for (int k = 0; k < 8; k++)           /* the interval is over: graphed */
            submit(600 + k, (uint64_t)(it * 8 + k));
        sync_point();
    }
    CHECK(builds > built && ag_eng.s.replays > 0 && ag_eng.s.backoffs == 1 && same_order());
}

/* Back-off, then a loop without a sync (a training loop after a warm-up whose windows
 * failed): its one window's ops pass the back-off's interval, and period detection
 * then cuts it into replayed iterations. */
static void test_backoff_long_window(void)
{
    reset();
    back_off();
    for (int it = 0; it < 1200; it++)     /* 64 spans of 64 ops: 512 iterations */
        for (int k = 0; k < 8; k++)
            submit(800 + k, (uint64_t)(it * 8 + k));
    sync_point();
    CHECK(ag_eng.s.period_cuts >= 1 && ag_eng.s.replays > 600 && same_order());
}

enum step_tail { TAIL_SAME, TAIL_VARIED, TAIL_LEGACY };

/* Steps without a sync: 4 identical layers of 4 ops, then 10 other ops: the same each
 * step, or in a pseudo-random order of 100 functions, or the same with one on the
 * legacy stream (a step that cannot be graphed whole).  Returns the ops graphed. */
static unsigned long layered_steps(int steps, enum step_tail tail)
{
    static uint32_t seed = 1;
    for (int it = 0; it < steps; it++) {
        for (int layer = 0; layer < 4; layer++)
            for (int k = 0; k < 4; k++)
                submit(900 + k, (uint64_t)(it * 26 + layer * 4 + k));
        for (int k = 16; k < 26; k++) {
            seed = seed * 1103515245u + 12345u;
            int fn = tail == TAIL_VARIED ? 1000 + (int)(seed >> 16) % 100 : 900 + k;
            submit_on(fn, (uint64_t)(it * 26 + k),
                      tail == TAIL_LEGACY && k == 20 ? AG_STREAM_LEGACY : 0x1000);
        }
    }
    sync_point();
    return ag_eng.s.launches_graphed;
}

/* Period detection first cuts the layers, whose runs then break where the step goes
 * on: they are suspended, the step is cut and supersedes them.  Breaks at no period
 * suspend nothing; where the step cannot be cut, the layers' template replays again
 * after the probation. */
static void test_subperiods(void)
{
    reset();
    unsigned long graphed = layered_steps(300, TAIL_SAME);
    CHECK(ag_eng.s.subperiods >= 1 && ag_eng.s.superseded >= 1 && same_order());
    CHECK(graphed > 300 * 26 * 9 / 10);
    reset();
    graphed = layered_steps(300, TAIL_VARIED);
    CHECK(ag_eng.s.subperiods == 0 && graphed > 300 * 8 && same_order());
    reset();
    graphed = layered_steps(100, TAIL_LEGACY);
    CHECK(ag_eng.s.subperiods >= 1 && ag_eng.s.superseded == 0 && same_order());
    unsigned long before = graphed;
    graphed = layered_steps(100, TAIL_LEGACY);
    CHECK(graphed >= before + 100 * 8 && same_order());
}

/* A period's template whose first op comes again in a run without a sync, followed
 * by another op (a false start: its replay stops before launching anything, once a
 * period of 5 ops, too short to suspend it), leaves period detection as it was: the
 * run's period is still found and graphed. */
static void test_false_starts(void)
{
    reset();
    for (int it = 0; it < 40; it++)           /* X Y1..Y5, no sync: a period template */
        for (int k = 0; k < 6; k++)
            submit(1200 + k, (uint64_t)(it * 6 + k));
    CHECK(ag_eng.s.period_cuts == 1 && ag_eng.s.replays >= 15);
    unsigned long graphed = ag_eng.s.launches_graphed;
    for (int it = 0; it < 200; it++)          /* then Z1 Z2 X Z3 Z4 */
        for (int k = 0; k < 5; k++)
            submit(k == 2 ? 1200 : 1210 + k, (uint64_t)(1000 + it * 5 + k));
    sync_point();
    CHECK(same_order() && ag_eng.s.launches_graphed - graphed > 200 * 5 * 94 / 100);
                                          /* 890 when each false start reset it */
}

/* Back-off: replays stopped because their window ended early (a flush at varying
 * places, as a full staging ring makes) are no sign that templates are futile: strikes
 * after them do not back off. */
static void test_backoff_window_ends(void)
{
    reset();
    for (int it = 0; it < 3; it++)            /* built */
        window_of(700, 8);
    int warmup = ag_eng.p.warmup;
    ag_eng.p.warmup = 1000;                   /* the short windows get no template */
    for (int it = 0; it < 40; it++)           /* replays, each cut by a window's end */
        window_of(700, 2 + it % 5);
    CHECK(ag_eng.s.mismatches == AG_MISMATCH_RETIRE && ag_eng.s.retired == 1 && same_order());
    for (int r = 0; r < AG_BACKOFF_STRIKES; r++)
        ag_backoff_strike();                  /* as more such retirements would */
    CHECK(ag_eng.s.backoffs == 0 && !ag_backoff_active());
    ag_eng.p.warmup = warmup;
}

/* Futile shapes (match_futile.c): a window too short to graph that keeps repeating is
 * judged 3 times, then skimmed (every op still runs, in order), recorded and judged
 * again every AG_FUTILE_RECHECK skimmed repeats; a graphable window interleaved with
 * futile ones is still recorded, built and replayed, and the futile ones after it are
 * skimmed; a changed program is graphed; a long window without a sync after futile
 * ones stops their skimming and is graphed by period detection. */
static void test_futile(void)
{
    unsigned long full_before;
    reset();
    ag_eng.p.skim_after = 8;
    futile_steps(100, 0);
    CHECK(ag_eng.s.futile_shapes == 1 && ag_eng.s.futile_windows == 96);
    CHECK(ag_eng.s.skip[AG_SKIP_SHORT] == 4 && builds == 0 && same_order());
    full_before = ag_eng.s.skip[AG_SKIP_SHORT];
    futile_steps(AG_FUTILE_RECHECK + 10, 0);
    CHECK(ag_eng.s.skip[AG_SKIP_SHORT] == full_before + 1 && same_order());
    futile_steps(40, 1); /* futile A, graphable B, in turn */
    CHECK(builds == 1 && launches > 20 && same_order());
    full_before = ag_eng.s.futile_windows;
    futile_steps(10, 1);
    CHECK(ag_eng.s.futile_windows >= full_before + 9 && same_order());
    for (int it = 0; it < 6; it++)            /* the program changes: graphed */
        window_of(70, 5);
    CHECK(builds == 2 && same_order());
    reset();                                  /* short futile windows, then a long */
    futile_steps(10, 0);                      /* one without a sync: it outgrows them, */
    CHECK(ag_eng.s.futile_windows > 0);       /* is recorded, and period detection */
    for (int it = 0; it < 200; it++)          /* graphs it */
        for (int k = 0; k < 5; k++)
            submit(90 + k, (uint64_t)(it * 5 + k));
    sync_point();
    CHECK(builds >= 1 && launches > 20 && same_order());
    ag_eng.p.skim_after = 0;
}

/* A step shape that no template starts with, after a futile window (one step in eight
 * of an inference loop whose batch sizes cycle), was skimmed at every sighting: the
 * skim went on past the futile window and stopped only when the step outgrew it, at
 * its end.  The futile shape is now followed: the window after it is recorded in full,
 * so the rare shape warms up and is built too. */
static void test_futile_followed(void)
{
    reset();
    ag_eng.p.skim_after = 8;
    for (int it = 0; it < 80; it++) {
        int first = it % 8 == 0 ? 80 : 60;    /* the rare step: other ops throughout */
        submit(50, (uint64_t)it);             /* the futile upload */
        sync_point();
        for (int k = 0; k < 6; k++)
            submit(first + k, (uint64_t)(it * 10 + k));
        sync_point();
    }
    CHECK(builds == 2 && ag_eng.s.futile_windows > 0 && same_order());
    ag_eng.p.skim_after = 0;
}

/* A futile upload after a step whose shape cycles through four: skimming starts
 * after each of them, not only after the one seen before the upload last time. */
static void test_futile_cycle(void)
{
    reset();
    ag_eng.p.skim_after = 8;
    for (int it = 0; it < 160; it++) {
        submit(50, (uint64_t)it);             /* the futile upload */
        sync_point();
        for (int k = 0; k < 6; k++)
            submit(60 + 10 * (it % 4) + k, (uint64_t)(it * 10 + k));
        sync_point();
    }
    fprintf(stderr, "# futile cycle: %lu of 160 uploads skimmed\n",
            (unsigned long)ag_eng.s.futile_windows);
    CHECK(builds == 4 && ag_eng.s.futile_windows >= 140 && same_order());
    ag_eng.p.skim_after = 0;
}

/* Freeing memory a graph points into keeps the graph (kept_freed_memory counts it);
 * its next replay patches the nodes whose args changed (the window on new memory) and
 * launches nothing that still points into the freed memory. */
static void test_memory_freed(void)
{
    int patched;
    reset();
    for (int it = 0; it < 4; it++) {          /* window A points at 0x10000 (op 2) */
        for (int k = 0; k < 6; k++)
            submit(k, k == 2 ? 0x10000 + 8 * (uint64_t)k : (uint64_t)k);
        sync_point();
    }
    for (int it = 0; it < 4; it++)            /* window B does not */
        window_of(50, 6);
    CHECK(builds == 2);
    ag_engine_memory_freed(0x20000, 64);        /* nobody points there */
    CHECK(builds == 2 && launches == 2 * 2 * 1 && ag_eng.s.freed_kept == 0);
    ag_engine_memory_freed(0x10000, 64);        /* A's interior pointer 0x10010 */
    CHECK(ag_eng.s.freed_kept == 1);
    launches = 0;
    window_of(50, 6);                           /* B still replays */
    CHECK(launches == 1);
    patched = patches;
    for (int it = 0; it < 4; it++) {          /* A on new memory: replayed, patched */
        for (int k = 0; k < 6; k++)
            submit(k, k == 2 ? 0x90000 + 8 * (uint64_t)k : (uint64_t)k);
        sync_point();
    }
    CHECK(builds == 2 && launches == 5 && patches > patched && same_order());
}

/* ---- event destroys inside a window --------------------------------------------------- */

static int destroyed_at[64];         /* nexecuted when each event was destroyed */
static uintptr_t destroyed_event[64];
static int ndestroyed;

static void note_destroy(uintptr_t event)
{
    destroyed_event[ndestroyed] = event;
    destroyed_at[ndestroyed++] = nexecuted;
}

static int fake_set_event(void *exec, void *node, uintptr_t event)
{
    if (exec)                        /* parked: the next replay patches it */
        ((struct fake_graph *)exec)->args[(intptr_t)node - 1] = event;
    return 0;
}

static int fake_destroy_event(uintptr_t event)
{
    note_destroy(event);
    return 0;
}

static const struct ag_backend fake_events = {
    .issue = fake_issue, .build = fake_build, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec, .set_event = fake_set_event,
    .destroy_event = fake_destroy_event,
};

/* The program records or waits for `event` on `stream` (the log gets the handle). */
static void submit_event_op(int kind, uintptr_t event, uintptr_t stream)
{
    static const unsigned char shape[2][8] = { { 0xee }, { 0xef } };
    uint64_t handle = event;
    const unsigned char *sh = shape[kind == AG_OP_EVENT_WAIT];
    struct ag_op op = {
        .kind = (unsigned char)kind, .stream = stream, .ctx = 1, .event = event,
        .shape = sh, .shape_len = 8, .args = (const unsigned char *)&handle,
        .args_len = 8, .hash = ag_hash_bytes((uint64_t)kind, sh, 8),
    };
    op.skim = op.hash;
    submitted_stream[nsubmitted] = op.stream;
    submitted[nsubmitted++] = handle;
    if (ag_replay_open() && ag_engine_fast_event(&(struct ag_fast_event){
            .kind = kind, .stream = stream, .ctx = 1, .event = event, .shape = sh,
            .shape_len = 8 })) {
        fast_event_holds++;         /* the replay's fast path, as the wrapper tries it */
        return;
    }
    if (ag_engine_offer(&op) == AG_EAGER) {
        fake_issue(&op);
        ag_engine_done(&op, 0);
    }
}

/* The program destroys `event`: made now (logged here) unless the engine holds it. */
static int destroy(uintptr_t event)
{
    int how = ag_engine_event_destroying(event);
    if (how != AG_DESTROY_HELD)
        note_destroy(event);
    return how;
}

/* An event made anew every step and destroyed just after its record, in the middle of
 * the window: the window goes on (one a step, graphed).  Eagerly the destroy is made
 * at once (after 2 values of the step's 9); while the replay holds the record, it is
 * held and made as soon as its chunk (the first first_chunk ops) is launched, never
 * later. */
static void test_event_destroys(const struct ag_backend *events_backend, int first_chunk)
{
    const struct ag_backend *was = ag_eng.be;
    int held = 0;
    reset();
    ndestroyed = 0;
    CHECK(destroy(0x7000) == AG_DESTROY_FLUSH);   /* no destroy_event: a flush point */
    ag_eng.be = events_backend;
    ndestroyed = 0;
    for (int it = 0; it < 8; it++) {
        uintptr_t event = 0x70000 + 16 * (uintptr_t)it;
        submit(1, 1);
        submit_event_op(AG_OP_EVENT_RECORD, event, 0x1000);
        held += destroy(event) == AG_DESTROY_HELD;
        for (int k = 2; k <= 8; k++)
            submit(k, (uint64_t)k);
        sync_point();
    }
    CHECK(same_order());
    CHECK(builds == 2 && launches == 2 * 6);      /* chunks of 4 + 5, from the third */
    CHECK(held == 6 && ag_eng.s.destroys_held == 6 && ag_eng.s.destroys_in_window == 8);
    CHECK(ag_eng.s.windows == 8 && ag_eng.s.flush[AG_FLUSH_LIFETIME] == 0);
    CHECK(ndestroyed == 8);
    for (int it = 0; it < 8 && it < ndestroyed; it++) {
        CHECK(destroyed_event[it] == 0x70000 + 16 * (uintptr_t)it);
        CHECK(destroyed_at[it] == 9 * it + (it < 2 ? 2 : first_chunk));
    }
    ag_eng.be = was;
}

/* AUTOGRAPH_MIN_OPS counts kernels, copies and memsets, not event records and waits:
 * a window of one kernel and four event ops (JAX's op-by-op dispatch) is too short,
 * while one of four kernels and the same events becomes a graph (chunks of 4 + 4). */
static void test_events_not_counted(void)
{
    const uintptr_t a = 0x1000, b = 0x2000, e1 = 0x7500, e2 = 0x7600;
    const struct ag_backend *was = ag_eng.be;
    reset();
    ag_eng.be = &fake_events;
    for (int kernels = 1; kernels <= 4; kernels += 3)
        for (int it = 0; it < 6; it++) {
            submit_on(1, (uint64_t)it, a);
            submit_event_op(AG_OP_EVENT_RECORD, e1, a);
            submit_event_op(AG_OP_EVENT_WAIT, e1, b);
            submit_event_op(AG_OP_EVENT_RECORD, e2, b);
            submit_event_op(AG_OP_EVENT_WAIT, e2, a);
            for (int k = 1; k < kernels; k++)
                submit_on(10 + k, (uint64_t)k, a);
            sync_point();
            if (kernels == 1)
                CHECK(builds == 0 && ag_eng.s.skip[AG_SKIP_SHORT] == (unsigned long)it + 1);
        }
    CHECK(ag_eng.s.templates == 1 && builds == 2 && launches > 0 && same_order());
    ag_eng.be = was;
}

/* A run without a sync whose events are new every iteration (PyTorch's pools hand
 * them out): past AG_EVMAP_SIZE events the map drops its older records, and period
 * detection still cuts the run (the whole window is not graphed: it lost links). */
static void test_event_pool(void)
{
    const uintptr_t a = 0x1000, b = 0x2000;
    const struct ag_backend *was = ag_eng.be;
    reset();
    ag_eng.be = &fake_events;
    for (int it = 0; it < 600; it++) {
        uintptr_t e = 0x100000 + (uintptr_t)it * 16;
        submit_on(1, (uint64_t)it, a);
        submit_event_op(AG_OP_EVENT_RECORD, e, a);
        submit_event_op(AG_OP_EVENT_WAIT, e, b);
        submit_on(2, (uint64_t)it, b);
        submit_event_op(AG_OP_EVENT_RECORD, e + 8, b);
        submit_event_op(AG_OP_EVENT_WAIT, e + 8, a);
        submit_on(3, (uint64_t)it, a);
    }
    sync_point();
    CHECK(ag_eng.s.period_cuts >= 1 && ag_eng.s.launches_graphed > 600 * 3 / 2 &&
          same_order());
    ag_eng.be = was;
}

/* The links of the event waits the backend was given to build, in build order. */
static int wait_links[64], nwait_links;

static int fake_build_links(const struct ag_op *ops, int n, int nslots, void **graph,
                            void **nodes)
{
    for (int i = 0; i < n; i++)
        if (ops[i].kind == AG_OP_EVENT_WAIT && nwait_links < 64)
            wait_links[nwait_links++] = ops[i].link;
    return fake_build(ops, n, nslots, graph, nodes);
}

static const struct ag_backend fake_links = {
    .issue = fake_issue, .build = fake_build_links, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec,
};

/* A wait whose record is in an earlier chunk: on the record's stream it needs nothing
 * (AG_LINK_IMPLIED), on another stream the graph must wait for the program's event
 * (AG_LINK_EXTERNAL): the chunks' launches order nothing across streams.  In the
 * record's chunk, the wait links to it there.  Chunks of 4 + 8. */
static void test_cross_chunk_waits(void)
{
    const struct ag_backend *was = ag_eng.be;
    const uintptr_t a = 0x1000, b = 0x2000, event = 0x7100;
    reset();
    ag_eng.be = &fake_links;
    ag_eng.p.cut_anywhere = 1;       /* chunks of 4 + 8 across independent streams */
    nwait_links = 0;
    for (int it = 0; it < 6; it++) {
        submit_on(1, 1, a);
        submit_event_op(AG_OP_EVENT_RECORD, event, a);
        submit_event_op(AG_OP_EVENT_WAIT, event, b);    /* chunk 1, linked there */
        submit_on(2, 2, a);
        submit_event_op(AG_OP_EVENT_WAIT, event, b);    /* chunk 2, another stream */
        submit_event_op(AG_OP_EVENT_WAIT, event, a);    /* chunk 2, the record's */
        for (int k = 3; k < 9; k++)
            submit_on(k, (uint64_t)k, k % 2 ? a : b);
        sync_point();
    }
    CHECK(same_order());
    CHECK(builds == 2 && launches == 2 * 4);
    CHECK(nwait_links == 3);
    CHECK(wait_links[0] == 1);                      /* the record is op 1 of chunk 1 */
    CHECK(wait_links[1] == AG_LINK_EXTERNAL && wait_links[2] == AG_LINK_IMPLIED);
    CHECK(fast_event_holds == 4 * 4);               /* replays 3 to 6: all but op 0 */
    CHECK(ag_eng.s.held_fast_events == 4 * 4);
    ag_eng.be = was;
    ag_eng.p.cut_anywhere = 0;
}

/* The replay's fast path holds an event op only where the full path would: a wait on
 * the other of two events recorded (another link), a record of an event destroyed
 * since (its handle dead) and a wait on another stream go the full path, which finds
 * the mismatch and issues the held ops, in order. */
static void test_fast_event_mismatches(void)
{
    const uintptr_t a = 0x1000, b = 0x2000, e1 = 0x7200, e2 = 0x7300, e3 = 0x7400;
    const struct ag_backend *was = ag_eng.be;
    int seen = 0;
    reset();
    ag_eng.be = &fake_events;
    for (int it = 0; it < 12; it++) {
        int odd = it == 5, dead = it == 8, moved = it == 10;
        if (dead)
            CHECK(destroy(e3) == AG_DESTROY_NOW);   /* between windows: made at once */
        submit_on(1, 1, a);
        submit_event_op(AG_OP_EVENT_RECORD, e1, a);
        submit_event_op(AG_OP_EVENT_RECORD, e2, a);
        submit_event_op(AG_OP_EVENT_WAIT, odd ? e2 : e1, moved ? a : b);
        submit_on(2, 2, b);
        submit_event_op(AG_OP_EVENT_RECORD, e3, b);
        submit_on(3, 3, a);
        submit_on(4, 4, b);                 /* four kernels: long enough to graph */
        sync_point();
        if (dead)
            ag_engine_event_created(e3);    /* live again for the next step */
        CHECK(ag_eng.s.mismatches == (unsigned long)(odd + dead + moved + seen));
        seen += odd + dead + moved;
    }
    CHECK(same_order());
    CHECK(ag_eng.s.mismatches == 3 && fast_event_holds > 0);
    ag_eng.be = was;
}

/* Chunk plan tuning (AUTOGRAPH_CHUNK_TUNE): each candidate plan is timed over N
 * replays by the engine's clock, which here advances by a cost per window that the
 * test sets from the chunks launched in it; the plan with the shortest median is
 * kept, and every window still runs in order. */
static uint64_t fake_now;
static uint64_t fake_clock(void)
{
    return fake_now;
}

/* Runs `windows` windows of `ops` ops, each costing base + per_chunk x the chunks it
 * launched (per_chunk < 0: the more chunks, the cheaper), plus noise up to +-`noise`.
 * Returns the launches of its last 10 windows. */
static long noise;
static int run_timed(int windows, int ops, long base, long per_chunk)
{
    static uint64_t lcg = 12345;
    int tail = 0;
    for (int it = 0; it < windows; it++) {
        int before = launches;
        for (int k = 0; k < ops; k++)
            submit(k, (uint64_t)k);
        sync_point();
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        fake_now += (uint64_t)(base + per_chunk * (launches - before) +
                               (noise ? (long)(lcg >> 33) % (2 * noise + 1) - noise : 0));
        if (it >= windows - 10)
            tail += launches - before;
    }
    return tail;
}

/* Tuning on (5 replays a plan), timed by the test's clock; off, the real clock back. */
static uint64_t (*clock_before_tuning)(void);
static void tuning_on(void)
{
    clock_before_tuning = ag_tune_clock;
    ag_tune_clock = fake_clock;
    ag_eng.p.tune_replays = 5;
}

static void tuning_off(void)
{
    ag_eng.p.tune_replays = 0;
    ag_tune_clock = clock_before_tuning;
}

static void test_chunk_tuning(void)
{
    tuning_on();

    /* 40 ops: plans 4 x2 (4+8+16+12), 8 x8 (8+16+16), 4 x4 (4+16+16+4); fewer chunks
     * are cheaper here: 8 x8 is kept, after 3 rebuilds (2 to try, 1 to keep). */
    reset();
    CHECK(run_timed(60, 40, 100000, 1000) == 10 * 3);
    CHECK(ag_eng.s.tuned == 1 && ag_eng.s.tune_rebuilds == 3 && same_order());

    /* More chunks cheaper: the configured plan is kept. */
    reset();
    CHECK(run_timed(60, 40, 100000, -1000) == 10 * 4);
    CHECK(ag_eng.s.tuned == 1 && ag_eng.s.tune_rebuilds == 3 && same_order());
    CHECK(builds == 4 + 3 + 4 + 4);          /* chunks of each plan built, in order */

    /* No plan 0.5% faster: the configured plan is kept. */
    reset();
    CHECK(run_timed(60, 40, 1000000, 0) == 10 * 4);
    CHECK(ag_eng.s.tuned == 1 && same_order());

    /* A 1% gain in +-10% noise is not taken for one: the configured plan is kept. */
    reset();
    noise = 10000;
    CHECK(run_timed(60, 40, 100000, 1000) == 10 * 4);
    CHECK(ag_eng.s.tuned == 1 && same_order());
    noise = 0;

    /* One chunk under the configured plan (4 x2 leaves 6 ops in one): it is timed
     * against a first chunk of 2 (2+4).  More chunks dearer: the one chunk is kept,
     * after 2 rebuilds (1 to try, 1 to go back); cheaper: the split is kept. */
    reset();
    CHECK(run_timed(30, 6, 1000, 1000) == 10);
    CHECK(ag_eng.s.tuned == 1 && ag_eng.s.tune_rebuilds == 2 && same_order());
    reset();
    CHECK(run_timed(30, 6, 10000, -1000) == 10 * 2);
    CHECK(ag_eng.s.tuned == 1 && ag_eng.s.tune_rebuilds == 1 && same_order());

    /* Nothing to split: 3 ops (made a graph with min_ops 3) cut after 2 leave a rest
     * shorter than the first chunk, which joins it: one chunk either way. */
    ag_eng.p.min_ops = 3;
    reset();
    CHECK(run_timed(30, 3, 1000, 1000) == 10);
    CHECK(ag_eng.s.tuned == 0 && ag_eng.s.tune_rebuilds == 0 && same_order());
    ag_eng.p.min_ops = 4;

    /* auto (the default): only the windows left in one chunk are tuned, each candidate
     * over AG_TUNE_AUTO_REPLAYS replays. */
    ag_eng.p.tune_replays = AG_TUNE_AUTO;
    reset();
    CHECK(run_timed(60, 40, 100000, 1000) == 10 * 4);
    CHECK(ag_eng.s.tuned == 0 && ag_eng.s.tune_rebuilds == 0 && same_order());
    reset();
    CHECK(run_timed(4 * (AG_TUNE_AUTO_REPLAYS + 8), 6, 10000, -1000) == 10 * 2);
    CHECK(ag_eng.s.tuned == 1 && ag_eng.s.tune_rebuilds == 1 && same_order());
    ag_eng.p.tune_replays = 5;

    /* The choice outlives the graph: rebuilt after a reset of the graphs, it has the
     * chosen plan at once, without tuning again. */
    reset();
    run_timed(60, 40, 100000, 1000);
    ag_engine_drop_graphs("test");
    builds = 0;
    CHECK(run_timed(12, 40, 100000, 1000) == 10 * 3);
    CHECK(builds == 3 && ag_eng.s.tune_rebuilds == 3 && same_order());

    tuning_off();
}

/* Streams: a replay may map the template's streams onto others (all of a slot's ops
 * on the same new stream), but an op on a stream other than the one its slot already
 * maps to stops the replay, on the fast path too. */
static void test_streams(void)
{
    const uintptr_t a = 0x1000, b = 0x2000, c = 0x3000;
    reset();
    for (int it = 0; it < 6; it++) {
        for (int k = 0; k < 8; k++)
            submit_on(k, (uint64_t)(it * 100 + k), k % 2 ? b : a);
        sync_point();
    }
    CHECK(same_order());
    /* two independent streams in turn: no cut adds no order, so one chunk */
    CHECK(builds == 1 && launches == 4 && fast_holds > 0);

    for (int k = 0; k < 8; k++)                 /* slot b on c throughout: a replay */
        submit_on(k, (uint64_t)(700 + k), k % 2 ? c : a);
    sync_point();
    CHECK(same_order());
    CHECK(launches == 5);

    for (int k = 0; k < 8; k++)                 /* op 3 on c, op 1 on b: no replay */
        submit_on(k, (uint64_t)(800 + k), k == 3 ? c : k % 2 ? b : a);
    sync_point();
    CHECK(same_order());
    CHECK(launches == 5 && ag_eng.s.mismatches == 1);
}

/* The engine's main cases: order, graphs, patches, variants, mismatches, a failed
 * launch, period detection, light recording, windows in a cycle. */
static void core_cases(void)
{
    reset();
    /* Identical windows of 40 ops: graphs from the third on, in chunks 4+8+16+12. */
    for (int it = 0; it < 10; it++) {
        for (int k = 0; k < 40; k++)
            submit(k, (uint64_t)k);
        sync_point();
    }
    CHECK(same_order());
    CHECK(builds == 4);
    CHECK(launches == 8 * 4);

    /* An argument that changes every iteration is patched, never rebuilt. */
    reset();
    for (int it = 0; it < 10; it++) {
        for (int k = 0; k < 6; k++)
            submit(k, k == 3 ? 1000 + (uint64_t)it : (uint64_t)k);
        sync_point();
    }
    CHECK(same_order());
    CHECK(builds == 1 && launches == 8 && patches == 8);

    /* Alternating (ping-pong) args become a second variant: no patch in steady state.
     * The graph was built with the odd args: the first even replay patches 6 nodes, the
     * next odd one patches them back and asks for a variant (variants are picked as a
     * chunk is fired, off the program's thread, and made at the chunk's next launch),
     * which the next even replay patches once. */
    reset();
    for (int it = 0; it < 20; it++) {
        for (int k = 0; k < 6; k++)
            submit(k, (uint64_t)(k * 10 + it % 2));
        sync_point();
    }
    CHECK(same_order());
    CHECK(launches == 18 && patches == 3 * 6);   /* three patched replays, then none */

    /* Alternating args and one fresh arg every iteration (a host pointer, a counter):
     * the alternating nodes still get a variant each; only the fresh one is patched
     * in steady state (a whole-set rule would never see a set again and patch all). */
    reset();
    for (int it = 0; it < 20; it++) {
        for (int k = 0; k < 6; k++)
            submit(k, k == 5 ? 5000 + (uint64_t)it : (uint64_t)(k * 10 + it % 2));
        sync_point();
    }
    CHECK(same_order());
    CHECK(launches == 18 && patches <= 3 * 5 + 18);
    CHECK(patches >= 18);                    /* the fresh node, at every replay */

    /* A window that diverges in its middle: held ops go out eagerly, in order. */
    reset();
    for (int it = 0; it < 12; it++) {
        for (int k = 0; k < 12; k++)
            submit(it % 4 == 3 && k == 7 ? 9 : k, (uint64_t)(it * 100 + k));
        sync_point();
    }
    CHECK(same_order());

    /* A graph launch that fails: the chunk is issued eagerly and the graph dropped. */
    reset();
    fail_launch_at = 1;
    for (int it = 0; it < 6; it++) {
        for (int k = 0; k < 10; k++)
            submit(k, (uint64_t)k);
        sync_point();
    }
    CHECK(same_order());

    /* No sync at all: period detection cuts the repeating run into a template. */
    reset();
    for (int it = 0; it < 200; it++)
        for (int k = 0; k < 5; k++)
            submit(k, (uint64_t)k);
    sync_point();
    CHECK(same_order());
    CHECK(builds >= 1 && launches > 20);

    /* Windows that never repeat are never held. */
    reset();
    for (int it = 0; it < 50; it++) {
        for (int k = 0; k <= it % 7 + 3; k++)
            submit(k + it, (uint64_t)k);
        sync_point();
    }
    CHECK(same_order());
    CHECK(builds == 0 && launches == 0);
    CHECK(light_offers > 0);                 /* recorded light after 3 differing windows */

    /* Windows that come back in a cycle (a step split by syncs: A B C A B C ...) never
     * repeat in a row, yet each one becomes a graph once seen twice (the warm-up). */
    reset();
    for (int it = 0; it < 6; it++)
        for (int w = 0; w < 3; w++) {
            for (int k = 0; k < 6; k++)
                submit(100 * w + k, (uint64_t)(it * 10 + k));
            sync_point();
        }
    CHECK(same_order());
    /* A was seen light in its second cycle (3 windows differed before): it is built
     * a cycle later than B and C, so 3 + 4 + 4 replays. */
    CHECK(builds == 3 && launches == 3 + 4 + 4);
    CHECK(fast_holds > 0);               /* the replay's fast path was taken */
}

/* AUTOGRAPH_LAUNCH_THREAD: the same cases with chunks handed to the launcher thread,
 * which patches and launches them (the fake backend's log is appended from it).  The
 * log must come out the same: a hand-off waits for the launch before it, everything
 * else of the engine collects it first, a failed one is issued eagerly in order. */
static int context_sets;
static uintptr_t context_set;

static int fake_use_context(uintptr_t ctx)
{
    context_set = ctx;
    context_sets++;
    return 0;
}

static const struct ag_backend fake_threaded = {
    .issue = fake_issue, .build = fake_build, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec, .use_context = fake_use_context,
};

static const struct ag_backend fake_events_threaded = {
    .issue = fake_issue, .build = fake_build, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec, .set_event = fake_set_event,
    .destroy_event = fake_destroy_event, .use_context = fake_use_context,
};

static int launch_state(void)
{
    return __atomic_load_n(&ag_eng.launcher.state, __ATOMIC_ACQUIRE);
}

static int launch_out(void)
{
    return launch_state() == AG_LAUNCH_QUEUED || launch_state() == AG_LAUNCH_RUNNING;
}

static int launch_not_running(void)
{
    return launch_state() != AG_LAUNCH_RUNNING;
}

/* Gives the launcher time to make the launch handed off (up to ~10 s). */
static void let_launcher_run(void)
{
    yield_while(launch_out, 10000000);
}

/* Windows of 40 ops, each op's arg fresh every 3rd window (patches); the launcher
 * given time after every op, or not (launches taken back too). */
static void launcher_windows(int wait, int fail_at)
{
    reset();
    fail_launch_at = fail_at;
    for (int it = 0; it < 10; it++) {
        for (int k = 0; k < 40; k++) {
            submit(k, it % 3 == 2 && k % 5 == 0 ? 100000 + (uint64_t)it : (uint64_t)k);
            if (wait)
                let_launcher_run();
        }
        sync_point();
    }
    CHECK(same_order());
}

/* AUTOGRAPH_CHUNK_TUNE on a paced window whose chunks are alike (launched by the
 * launcher): the candidates are 4 (10 chunks of 40 ops), 8 (5) and 2 (20); fewer
 * chunks are cheaper here, so 8 is kept, after 3 rebuilds. */
static void test_alike_tuning(void)
{
    tuning_on();
    reset();
    CHECK(run_timed(80, 40, 100000, 1000) == 10 * 5);
    CHECK(ag_eng.s.tuned == 1 && ag_eng.s.tune_rebuilds == 3 && same_order());
    CHECK(builds == 10 + 5 + 20 + 5);        /* each candidate's chunks, then 8's */
    tuning_off();
}

/* Waits (up to ~2 s) for the launcher to be making the launch handed off. */
static int launch_running(void)
{
    return yield_while(launch_not_running, 2000000);
}

/* While a chunk launch is out (held at the gate), the program goes on without
 * waiting for it: an event record that is the replay's next op is held (as a kernel
 * is), and the destroy of an event that only the chunk out names is held until that
 * launch is collected, then made. */
static void test_held_past_launch(void)
{
    const struct ag_backend *was = ag_eng.be;
    unsigned long taken_back = 0;
    int held = 0, window_ops = 0;
    ag_eng.be = &fake_events_threaded;
    reset();
    ndestroyed = 0;
    for (int it = 0; it < 6; it++) {
        int last_window = it == 5;
        for (int k = 0; k < 3; k++)
            submit(k, (uint64_t)k);
        submit_event_op(AG_OP_EVENT_RECORD, 0xe1, 0x1000);   /* chunk 0's last op */
        if (last_window) {
            window_ops = nexecuted;
            CHECK(launch_running());
            taken_back = ag_eng.s.launches_taken_back;
        }
        submit_event_op(AG_OP_EVENT_RECORD, 0xe2, 0x1000);   /* chunk 1's first */
        if (last_window) {
            CHECK(ag_launch_pending());      /* the record did not wait for it */
            held = destroy(0xe1) == AG_DESTROY_HELD;
            CHECK(held && ag_launch_pending() && ndestroyed == 0);
            CHECK(ag_eng.s.launches_taken_back == taken_back);
            __atomic_store_n(&launch_gate, 0, __ATOMIC_RELEASE);
        }
        for (int k = 4; k < 7; k++)
            submit(k, (uint64_t)k);
        sync_point();
        if (it == 4)                 /* replayed once: the gate is closed for the next */
            __atomic_store_n(&launch_gate, 1, __ATOMIC_RELEASE);
    }
    CHECK(!launch_gate_ran_out && builds == 2 && same_order());
    CHECK(ndestroyed == 1 && destroyed_event[0] == 0xe1 &&
          destroyed_at[0] >= window_ops + 4);   /* after chunk 0 went out */
    ag_eng.be = was;
}

static void *second_submitter(void *arg)
{
    (void)arg;
    (void)ag_thread_id();            /* as a thread's first offer does */
    return NULL;
}

/* AUTOGRAPH_LAUNCH_THREAD=auto (the default): the launcher while only one thread of
 * the program has offered work; once another has, the chunks are launched by the
 * program's threads, in plans not alike (build_tune.c).  The thread count is put back
 * after, for the tests that follow. */
static void test_launcher_auto(void)
{
    pthread_t second;
    unsigned seen;
    ag_eng.p.launch_thread = AG_LAUNCH_THREAD_AUTO;
    launcher_windows(1, -1);
    seen = ag_threads_seen();
    CHECK(seen == 1 && ag_launcher_available());
    CHECK(ag_eng.s.launches_threaded == 80 && ag_eng.s.launches_taken_back == 0);
    CHECK(pthread_create(&second, NULL, second_submitter, NULL) == 0 &&
          pthread_join(second, NULL) == 0);
    CHECK(ag_threads_seen() == 2 && !ag_launcher_available());
    launcher_windows(1, -1);
    CHECK(ag_eng.s.launches_threaded == 0 && ag_eng.s.launches_taken_back == 0);
    CHECK(ag_eng.s.replays > 0 && ag_eng.s.chunk_launches > 0);
    CHECK(ag_eng.s.chunk_launches < 80);   /* not alike: fewer, longer chunks */
    ag_eng.p.launch_thread = AG_LAUNCH_THREAD_ON;   /* forced on, several threads or not */
    CHECK(ag_launcher_available());
    __atomic_store_n(&ag_sh.next_thread_id, seen, __ATOMIC_RELAXED);
}

/* The launcher sleeps (futex): it reads no switch until its next launch, whose
 * hand-off orders the test thread's writes before its reads. */
static int launcher_awake(void)
{
    return !__atomic_load_n(&ag_eng.launcher.sleeping, __ATOMIC_SEQ_CST);
}

/* AUTOGRAPH_LAUNCH_POLL_US: between launches the launcher naps and looks, with any
 * number of CPUs; the program's thread hands off without a wake-up call, and every
 * launch is made, by the launcher or taken back, in order.  The switches change only
 * while the launcher sleeps. */
static void test_launcher_napping(void)
{
    int spin = ag_eng.p.launch_spin_ns;
    CHECK(yield_while(launcher_awake, 10000000));
    ag_eng.p.launch_spin_ns = 5 * 1000 * 1000;
    ag_eng.p.launch_poll_ns = 20 * 1000;
    launcher_windows(1, -1);
    CHECK(ag_eng.s.launches_threaded == 80 && ag_eng.s.launches_taken_back == 0);
    launcher_windows(0, -1);
    CHECK(ag_eng.s.launches_threaded + ag_eng.s.launches_taken_back == 80);
    CHECK(yield_while(launcher_awake, 10000000));   /* its naps over, it sleeps */
    ag_eng.p.launch_poll_ns = 0;
    ag_eng.p.launch_spin_ns = spin;
}

static void test_launcher(void)
{
    const struct ag_backend *was = ag_eng.be;
    int slow_ns = ag_eng.p.chunk_slow_ns;
    ag_eng.be = &fake_threaded;
    ag_eng.p.launch_thread = AG_LAUNCH_THREAD_ON;
    launcher_windows(1, -1);         /* windows of a fast program keep their launches */
    CHECK(ag_eng.s.launches_threaded == 0 && ag_eng.s.launches_taken_back == 0);
    ag_eng.p.chunk_slow_ns = 1;      /* every window is of a slow program: paced */

    launcher_windows(1, -1);         /* paced, launched there: 10 chunks of 4 */
    CHECK(builds == 10 && launches == 8 * 10);
    CHECK(ag_eng.s.launches_threaded == 80 && ag_eng.s.launches_taken_back == 0);
    CHECK(context_sets == 1 && context_set == 1);   /* the ops' context, once */
    launcher_windows(0, -1);
    CHECK(ag_eng.s.launches_threaded + ag_eng.s.launches_taken_back == 80);
    launcher_windows(1, 5);          /* fails on the launcher, collected later */
    CHECK(ag_eng.s.chunk_launches < (unsigned long)launches);
    launcher_windows(0, 9);
    test_alike_tuning();
    ag_eng.p.chunk_first = 10;       /* core_cases' 40-op window in 4 chunks, as there */
    core_cases();
    ag_eng.p.chunk_first = 4;
    test_event_destroys(&fake_events_threaded, 4);   /* paced, alike: 4 + 5, cut from
                                                     * the first op */
    test_held_past_launch();
    test_launcher_napping();
    test_launcher_auto();

    ag_eng.p.launch_thread = AG_LAUNCH_THREAD_OFF;
    ag_eng.p.chunk_slow_ns = slow_ns;
    ag_eng.be = was;
}

/* Collectives: the fake backend calls a kernel op of function COLLECTIVE one (as
 * NCCL's kernels are).  A collective waits on the GPU for other processes, so it must
 * never be held past its own call: when its submit returns it has been executed,
 * with everything before it.  A chunk ends right after it, whatever the chunk plan
 * (growing, paced, cut across streams) says. */
#define COLLECTIVE 77
static int late_collectives;     /* collectives whose submit returned before they ran */

static int fake_waits_for_peers(const struct ag_op *op)
{
    CHECK(op->kind == AG_OP_KERNEL && op->shape_len == 8);
    return op->shape[0] == COLLECTIVE;
}

static const struct ag_backend fake_peers = {
    .issue = fake_issue, .build = fake_build, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec, .waits_for_peers = fake_waits_for_peers,
};

static const struct ag_backend fake_peers_threaded = {
    .issue = fake_issue, .build = fake_build, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec, .use_context = fake_use_context,
    .waits_for_peers = fake_waits_for_peers,
};

static void submit_collective_on(uint64_t arg, uintptr_t stream)
{
    submit_on(COLLECTIVE, arg, stream);
    late_collectives += nexecuted != nsubmitted || executed[nexecuted - 1] != arg;
}

/* The one template of `nops` ops (NULL when there is none, or several). */
static struct ag_template *template_of(int nops)
{
    struct ag_template *t, *tmp, *found = NULL;
    int n = 0;
    HASH_ITER(hh, ag_eng.by_hash, t, tmp)
        if (!t->failed && t->nops == nops) {
            found = t;
            n++;
        }
    return n == 1 ? found : NULL;
}

/* Whether t is cut into chunks ending at ends[0..n) (the last at t->nops), the one
 * ending at `after` (0: none) marked as ending with a collective. */
static int chunks_end_at(const struct ag_template *t, const int *ends, int n, int after)
{
    if (t == NULL || t->nchunks != n)
        return 0;
    for (int c = 0; c < n; c++)
        if (t->chunks[c].end != ends[c] || t->chunks[c].collective != (ends[c] == after))
            return 0;
    return 1;
}

/* A step of test_late_rematch: a window of 4 ops (functions 150..153), a sync, then a
 * window of functions 0..13 and then, `longer` or not, 200..209 or 14..19, a sync. */
static void late_step(int longer, uint64_t arg)
{
    for (int k = 0; k < 4; k++)
        submit(150 + k, arg);
    sync_point();
    for (int k = 0; k < (longer ? 24 : 20); k++)
        submit(k < 14 ? k : longer ? 186 + k : k, arg + (uint64_t)k);
    sync_point();
}

/* Two step shapes that part at op 14, past two chunks (4 + 8: the third begins at op
 * 12 in both), after the same window: a replay started with the other one's template
 * moves to its own there, the two chunks before launched, and goes on graphed. */
static void test_late_rematch(void)
{
    static const int shapes[] = { 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1 };
    unsigned long mismatches;
    reset();
    for (int it = 0; it < 6; it++)
        late_step(it >= 3, (uint64_t)it);
    CHECK(template_of(20) != NULL && template_of(24) != NULL && same_order());
    CHECK(template_of(24)->nchunks == 3 && template_of(24)->chunks[2].begin == 12);
    mismatches = ag_eng.s.mismatches;
    launches = 0;
    for (int it = 0; it < 16; it++)
        late_step(shapes[it], (uint64_t)(100 + it));
    CHECK(ag_eng.s.mismatches == mismatches && ag_eng.s.rematches >= 1 && same_order());
    CHECK(launches == 16 * (1 + 3));  /* every chunk of every window graphed */
}

/* Windows of 10 ops on one stream, a collective at op 5: the plan's 4 + 6 becomes
 * 4 + 2 + 4.  `windows` of them with a sync after each, or (0) 200 without one: cut
 * by period detection. */
static void collective_windows(int windows)
{
    int synced = windows > 0;
    for (int it = 0; it < (synced ? windows : 200); it++) {
        for (int k = 0; k < 10; k++)
            if (k == 5)
                submit_collective_on(1000 + (uint64_t)it, 0x1000);
            else
                submit(k, (uint64_t)k);
        if (synced)
            sync_point();
    }
    sync_point();
}

static void test_collective_one_stream(void)
{
    const struct ag_backend *was = ag_eng.be;
    static const int ends[] = { 4, 6, 10 };

    /* the rule off (a backend that knows no collective): the collective is held */
    reset();
    late_collectives = 0;
    collective_windows(8);
    CHECK(same_order() && builds == 2 && late_collectives == 6);

    reset();
    ag_eng.be = &fake_peers;
    late_collectives = 0;
    collective_windows(8);
    CHECK(same_order() && builds == 3 && launches == 6 * 3 && late_collectives == 0);
    CHECK(chunks_end_at(template_of(10), ends, 3, 6));
    CHECK(ag_eng.s.collective_cuts == 1 && ag_eng.s.replays == 6);

    reset();                         /* cut by period detection */
    late_collectives = 0;
    collective_windows(0);
    CHECK(same_order() && ag_eng.s.period_cuts >= 1 && ag_eng.s.replays > 100);
    CHECK(late_collectives == 0 && ag_eng.s.collective_cuts >= 1);
    CHECK(chunks_end_at(template_of(10), ends, 3, 6));
    ag_eng.be = was;
}

/* On two streams the plan's cuts move to where they add no order (build_cuts.c); a
 * cut after a collective stays where it is, whatever order it adds, and a plan's cut
 * that must move may move onto it. */
static void test_collective_streams(void)
{
    const struct ag_backend *was = ag_eng.be;
    const uintptr_t a = 0x1000, b = 0x2000, e1 = 0x7500, e2 = 0x7600;
    static const int fork_join[] = { 5, 12 }, alternating[] = { 6, 8 };
    reset();
    ag_eng.be = &fake_peers;
    late_collectives = 0;
    for (int it = 0; it < 8; it++) {       /* b's branch ends with the collective */
        submit_on(0, 0, a);
        submit_event_op(AG_OP_EVENT_RECORD, e1, a);
        submit_event_op(AG_OP_EVENT_WAIT, e1, b);
        submit_on(1, 1, b);
        submit_collective_on(2000 + (uint64_t)it, b);   /* plan's cut before it: moved */
        submit_on(2, 2, a);
        submit_on(3, 3, a);
        submit_on(4, 4, b);
        submit_event_op(AG_OP_EVENT_RECORD, e2, b);
        submit_event_op(AG_OP_EVENT_WAIT, e2, a);
        submit_on(5, 5, a);
        submit_on(6, 6, a);
        sync_point();
    }
    CHECK(same_order() && late_collectives == 0 && ag_eng.s.replays == 6);
    CHECK(chunks_end_at(template_of(12), fork_join, 2, 5));

    reset();                               /* two independent streams in turn */
    late_collectives = 0;
    for (int it = 0; it < 8; it++) {
        for (int k = 0; k < 8; k++)
            if (k == 5)
                submit_collective_on(3000 + (uint64_t)it, b);
            else
                submit_on(k, (uint64_t)k, k % 2 ? b : a);
        sync_point();
    }
    CHECK(same_order() && late_collectives == 0 && ag_eng.s.replays == 6);
    CHECK(chunks_end_at(template_of(8), alternating, 2, 6));
    CHECK(ag_eng.s.collective_cuts == 1);
    ag_eng.be = was;
}

/* Paced (alike chunks, launched by the launcher thread): the chunk ending with the
 * collective is launched by the program's thread, at the collective's call; the
 * others still go to the launcher. */
static void test_collective_paced(void)
{
    const struct ag_backend *was = ag_eng.be;
    int slow_ns = ag_eng.p.chunk_slow_ns;
    static const int ends[] = { 4, 6, 10 };
    ag_eng.be = &fake_peers_threaded;
    ag_eng.p.launch_thread = AG_LAUNCH_THREAD_ON;
    ag_eng.p.chunk_slow_ns = 1;
    reset();
    late_collectives = 0;
    for (int it = 0; it < 8; it++) {
        for (int k = 0; k < 10; k++) {
            if (k == 5)
                submit_collective_on(4000 + (uint64_t)it, 0x1000);
            else
                submit(k, (uint64_t)k);
            let_launcher_run();
        }
        sync_point();
    }
    CHECK(same_order() && late_collectives == 0 && ag_eng.s.paced >= 1);
    CHECK(chunks_end_at(template_of(10), ends, 3, 6));   /* the plan's 4 + 6, the 6 cut
                                                          * after the collective */
    CHECK(ag_eng.s.launches_threaded + ag_eng.s.launches_taken_back == 6 * 2);
    ag_eng.p.launch_thread = AG_LAUNCH_THREAD_OFF;
    ag_eng.p.chunk_slow_ns = slow_ns;
    ag_eng.be = was;
}

/* Whether the ops on `stream` were executed in the order submitted (each context's
 * engine keeps its own order; two engines' ops may interleave otherwise). */
static int same_order_on(uintptr_t stream)
{
    int e = 0;
    for (int i = 0; i < nsubmitted; i++) {
        if (submitted_stream[i] != stream)
            continue;
        while (e < nexecuted && executed_stream[e] != stream)
            e++;
        if (e == nexecuted || executed[e] != submitted[i])
            return 0;
        e++;
    }
    for (; e < nexecuted; e++)
        if (executed_stream[e] == stream)
            return 0;                /* executed more than submitted */
    return 1;
}

/* An event query of a record the window makes.  A thread that submits work ends the
 * window there, recorded or replayed (a replay would stop at it).  An observer (a
 * thread that never submitted work, as a watchdog) passes while the window is
 * recorded, and while a replay holds the record is told "not ready", 32 times in a
 * replay; its 33rd query ends the window. */
static void test_observer_queries(void)
{
    const uintptr_t ev = 0xe5;
    unsigned long ended, templates, replays, deferred;
    reset();
    ended = ag_eng.s.flush[AG_FLUSH_QUERY];
    templates = ag_eng.s.templates;
    replays = ag_eng.s.replays;
    deferred = ag_eng.s.queries_deferred;
    submit(1, 1);
    submit_event_op(AG_OP_EVENT_RECORD, ev, 0x1000);
    CHECK(ag_eng.r.t == NULL);
    CHECK(ag_engine_before(AG_EP_cuEventQuery, ev, 0, 1) == 0 && ag_eng.w.n == 2);
    CHECK(ag_engine_before(AG_EP_cuEventQuery, ev, 0, 0) == 0 && ag_eng.w.n == 0);
    CHECK(ag_eng.s.flush[AG_FLUSH_QUERY] == ++ended);
    for (int it = 0; it < 8; it++) {
        submit(1, 1);
        submit_event_op(AG_OP_EVENT_RECORD, ev, 0x1000);
        for (int k = 2; k <= 8; k++)
            submit(k, (uint64_t)k);
        sync_point();
    }
    CHECK(ag_eng.s.templates > templates && ag_eng.s.replays >= replays + 4);
    for (int round = 0; round < 2; round++) {
        submit(1, 1);
        submit_event_op(AG_OP_EVENT_RECORD, ev, 0x1000);
        CHECK(ag_eng.r.t != NULL && ag_replay_holds(0, ev));
        for (int q = 0; q < 32; q++)
            CHECK(ag_engine_before(AG_EP_cuEventQuery, ev, 0, 1) == AG_ANSWER_NOT_READY);
        CHECK(ag_eng.r.t != NULL && ag_eng.s.flush[AG_FLUSH_QUERY] == ended);
        /* the 33rd observer query, or the first of a submitting thread, ends it */
        CHECK(ag_engine_before(AG_EP_cuEventQuery, ev, 0, round == 0) == 0);
        CHECK(ag_eng.r.t == NULL && ag_eng.s.flush[AG_FLUSH_QUERY] == ++ended);
        for (int k = 2; k <= 8; k++)
            submit(k, (uint64_t)k);
        sync_point();
    }
    CHECK(ag_eng.s.queries_deferred == deferred + 64 && same_order());
}

/* Two contexts in turn, one thread (a program switching devices every step): each
 * context's engine keeps its own window, so both steps repeat and are graphed, and
 * each replays (held ops of one engine while the other takes its own). */
static void test_two_contexts(void)
{
    struct ag_engine *one = ag_engine_lookup(1), *two;
    reset();
    for (int it = 0; it < 8; it++) {
        submit_ctx = 1;
        for (int k = 0; k < 6; k++)
            submit_on(k, (uint64_t)(k + it % 2), 0x1000);
        submit_ctx = 2;
        for (int k = 0; k < 6; k++)
            submit_on(50 + k, (uint64_t)k, 0x2000);
        sync_point();
    }
    submit_ctx = 1;
    two = ag_engine_lookup(2);
    CHECK(one != NULL && two != NULL && one != two && ag_engines_count() == 2);
    CHECK(builds == 2 && same_order_on(0x1000) && same_order_on(0x2000));
    CHECK(one->s.replays >= 5 && two->s.replays >= 5 && one->s.templates == 1 &&
          two->s.templates == 1);
    /* a flush point of one context's stream ends that engine's window only */
    submit_ctx = 2;
    submit_on(50, 0, 0x2000);
    submit_ctx = 1;
    ag_engine_before(AG_EP_cuStreamSynchronize, 0x1000, 0, 0);
    CHECK(two->w.n == 1 && two->r.t != NULL);
    ag_engine_before(AG_EP_cuStreamSynchronize, 0x2000, 0, 0);
    CHECK(two->w.n == 0 && two->r.t == NULL && same_order_on(0x2000));
}

int main(void)
{
    struct ag_engine_params p = { .warmup = 2, .min_ops = 4, .chunk_first = 4,
                                  .chunk_growth = 2, .chunk_max = 16, .max_variants = 4,
                                  .period_min = 8,
                                  .light_after = 3 };
    ag_engine_setup(&fake, &p);
    core_cases();
    test_streams();
    test_light_recording();
    test_skimming();
    test_futile();
    test_futile_followed();
    test_futile_cycle();
    test_events_not_counted();
    test_event_pool();
    test_mismatch_retire();
    test_backoff();
    test_backoff_window_ends();
    test_backoff_long_window();
    test_subperiods();
    test_false_starts();
    test_same_start_windows();
    test_late_rematch();
    test_memory_freed();
    test_chunk_tuning();
    test_event_destroys(&fake_events, 4);
    test_cross_chunk_waits();
    test_fast_event_mismatches();
    test_launcher();
    test_collective_one_stream();
    test_collective_streams();
    test_collective_paced();
    test_two_contexts();
    test_observer_queries();
    return check_finish("test_engine");
}
