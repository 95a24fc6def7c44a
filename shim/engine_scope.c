/* engine_scope.c -- the coordinator's entry points that reach more than one engine.
 *
 * A flush point must issue what the engines hold before the call can observe it.  A
 * synchronize, query or destroy of one stream, event or context observes only the
 * work of the engines that hold work of it (flush_points.h, AG_POLICY_SCOPE_*):
 *   stream    the engines whose window has ops on that stream (or whose replay maps
 *             it); the legacy and per-thread streams are the calling thread's
 *             context's, so its engine;
 *   event     the engine that records it (engine_table.c; every engine when that is
 *             not known): a record is only ever held by its owner;
 *   context   the engine of that context.
 * Every other flush point (allocations, frees, module loads, unrecorded work such as
 * peer copies, host functions, process exit, autograph_flush) ends every engine's
 * window, one engine at a time, each visited under its own lock (never two at once).
 * So a thread per device keeps its windows while the other device's thread
 * synchronizes, and anything that may cross devices issues everything first.
 * What every engine must know happens in each: streams and events destroyed or made,
 * graphs dropped, modules unloaded, memory freed.
 */
#include "engine_internal.h"
#include "entry_points.h"

/* Runs fn(arg) in each engine, visited (engine_table.c); collect: a chunk launch
 * handed off is collected first (else fn must, where it needs to). */
typedef void engine_fn(const void *arg, struct ag_visit *v);

static void each_engine_as(engine_fn *fn, const void *arg, int collect)
{
    int n = ag_engines_count();
    for (int i = 0; i < n; i++) {
        struct ag_visit v;
        ag_engine_visit(ag_engine_at(i), &v, collect);
        fn(arg, &v);
        ag_engine_visit_end(&v);
    }
}

static void each_engine(engine_fn *fn, const void *arg)
{
    each_engine_as(fn, arg, 1);
}

/* ---- flush points --------------------------------------------------------------- */

struct call {
    int entry;
    unsigned policy;
    uintptr_t arg0, ctx;        /* ctx: the context the call is about, or 0: unknown */
    int owner;                  /* SCOPE_EVENT: the event's engine, or -1 */
    int observer;               /* the calling thread never submitted work */
    int *answer;                /* set to AG_ANSWER_NOT_READY: the call is answered */
};

static int window_names_stream(uintptr_t stream)
{
    const struct ag_window *w = &ag_eng.w;
    const struct ag_replay *r = &ag_eng.r;
    if (w->ineligible == AG_SKIP_STREAMS || ag_eng.k.ops)
        return 1;                    /* its streams were not all numbered, or skimmed */
    for (int s = 0; s < w->nslots; s++)
        if (w->slot_key[s] == stream)
            return 1;
    for (int s = 0; r->t && s < AG_MAX_SLOTS; s++)
        if ((r->slot_set & (1u << s)) && r->slot_key[s] == stream)
            return 1;
    return 0;
}

/* Whether the visited engine's window ends at call c. */
static int in_scope(const struct call *c)
{
    if (c->policy & AG_POLICY_SCOPE_STREAM) {
        if (c->arg0 == AG_STREAM_LEGACY || c->arg0 == AG_STREAM_PER_THREAD)
            return c->ctx == 0 || ag_engine_key(&ag_eng) == c->ctx ||
                   ag_engine_key(&ag_eng) == 0;
        return window_names_stream(c->arg0);
    }
    if (c->policy & AG_POLICY_SCOPE_EVENT)
        return c->owner < 0 || c->owner == ag_eng.index;
    if (c->policy & AG_POLICY_SCOPE_CONTEXT)
        return c->ctx == 0 || ag_engine_key(&ag_eng) == c->ctx ||
               ag_engine_key(&ag_eng) == 0;
    return 1;
}

/* Queries a replay holds back for observers: an observer (a thread that never
 * submitted work, as PyTorch's NCCL watchdog) that queries an event whose record a
 * replay holds is told "not ready", which is true (the record's work has not run), up
 * to this many times in one replay; past that the window ends (a thread that spins on
 * the query gets its answer). */
#define AG_OBSERVER_DEFERS 32

enum query_way { QUERY_ENDS_WINDOW, QUERY_PASSES, QUERY_NOT_READY };

/* An observer's query of a held record: "not ready" while the replay's budget lasts.
 * A replay is told from the next by the sum of windows, replays and stops, one of
 * which grows as each replay ends (a run with no sync is one window of many). */
static enum query_way observer_waits(void)
{
    struct ag_replay *r = &ag_eng.r;
    unsigned long replay = ag_eng.s.windows + ag_eng.s.replays + ag_eng.s.mismatches;
    if (r->defer_replay != replay) {
        r->defer_replay = replay;
        r->defers = 0;
    }
    if (r->defers >= AG_OBSERVER_DEFERS)
        return QUERY_ENDS_WINDOW;
    r->defers++;
    return QUERY_NOT_READY;
}

/* What a query (c->entry, its first argument c->arg0) does to the visited engine's
 * window.  A query that can see nothing held passes: a query of an event or of a
 * created stream that no held op records or runs on.  With nothing held (no replay
 * under way: a chunk launch handed off was collected by the visit) every query sees
 * the driver's own state, but a query of an event that the window being recorded
 * records still ends it when the thread submits work: the replay of a template made
 * from that window would hold the record and stop at the query (PyTorch's
 * pinned-memory pool records an event as a step starts and queries it at the step's
 * first allocation), so the window ends where its replays will.  An observer's query
 * passes there (its timing is its own: a watchdog's would end windows at random
 * places) and is told "not ready" when a replay holds the record (observer_waits).
 * A window then ends at syncs, not where a program (or a watchdog thread) happened
 * to poll.  Queries of the default streams and elapsed times end the window while a
 * replay holds anything. */
static enum query_way query_way(const struct call *c)
{
    int event_query = c->entry == AG_EP_cuEventQuery && c->arg0 != 0;
    if (ag_eng.r.t == NULL)
        return !event_query || c->observer ||
               ag_window_link_back(&ag_eng.w, c->arg0) == 0 ? QUERY_PASSES
                                                            : QUERY_ENDS_WINDOW;
    if (event_query)
        return !ag_replay_holds(0, c->arg0) ? QUERY_PASSES
               : c->observer                ? observer_waits()
                                            : QUERY_ENDS_WINDOW;
    if (c->entry == AG_EP_cuStreamQuery || c->entry == AG_EP_cuStreamQuery_ptsz)
        return c->arg0 > AG_STREAM_PER_THREAD && !ag_replay_holds(c->arg0, 0)
                   ? QUERY_PASSES : QUERY_ENDS_WINDOW;
    return QUERY_ENDS_WINDOW;
}

/* A flush point's query in the visited engine: passed, answered or the window ended. */
static void query_in_engine(const struct call *c)
{
    switch (query_way(c)) {
    case QUERY_PASSES:
        ag_eng.s.queries_passed++;
        break;
    case QUERY_NOT_READY:
        ag_eng.s.queries_deferred++;
        *c->answer = AG_ANSWER_NOT_READY;
        break;
    case QUERY_ENDS_WINDOW:
        ag_engine_end_window(AG_FLUSH_QUERY);
        break;
    }
}

static void before_in_engine(const void *arg, struct ag_visit *v)
{
    const struct call *c = arg;
    unsigned reason = c->policy & AG_POLICY_REASON_MASK;
    if (reason && in_scope(c)) {
        ag_engine_visit_enter(v);
        if (reason == AG_FLUSH_QUERY)
            query_in_engine(c);
        else
            ag_engine_end_window((enum ag_flush_reason)reason);
    }
    if (c->policy & AG_POLICY_EVENT_GONE)
        ag_engine_event_gone(c->arg0);
    if (c->policy & AG_POLICY_STREAM_GONE)
        ag_stream_gone(c->arg0);
    if (c->policy & AG_POLICY_DROP_GRAPHS)
        ag_engine_drop_all("a function was reconfigured or a context destroyed");
    if (c->policy & AG_POLICY_UNLOAD) {
        ag_engine_visit_enter(v);    /* a module of another context: asked there */
        ag_engine_drop_unloaded(c->entry, c->arg0);
    }
}

int ag_engine_before(int entry, uintptr_t arg0, uintptr_t ctx, int observer)
{
    int answer = 0;
    struct call c = { entry, ag_call_policy[entry], arg0, ctx, -1, observer, &answer };
    if (!ag_engine_running())
        return 0;
    if (c.policy & AG_POLICY_SCOPE_EVENT)
        c.owner = ag_event_owner(arg0);
    each_engine(before_in_engine, &c);
    return answer;
}

static void end_in_engine(const void *arg, struct ag_visit *v)
{
    ag_engine_visit_enter(v);
    ag_engine_end_window(*(const enum ag_flush_reason *)arg);
}

void ag_engine_flush(enum ag_flush_reason reason)
{
    if (ag_engine_running())
        each_engine(end_in_engine, &reason);
}

/* An event record or wait that crosses engines (engine.c, match_replay.c): every
 * window ends, then the call goes to the driver unrecorded. */
void ag_engine_cross_context(const struct ag_op *op)
{
    enum ag_flush_reason reason = AG_FLUSH_CONTEXT;
    struct ag_engine *e = ag_engine_select(op->ctx);
    if (e) {
        ag_engine_lock();
        ag_eng.s.cross_context++;
        ag_explain(op->hash, -8, "%s an event of another context's engine: every "
                   "window ended, the call made at once",
                   op->kind == AG_OP_EVENT_WAIT ? "a wait on" : "a record of");
        ag_engine_unlock();
    }
    each_engine(end_in_engine, &reason);
}

/* ---- paused and quiet ----------------------------------------------------------- */

unsigned ag_quiet_epoch;                /* the pause's epoch found quiet (0: none) */
unsigned long ag_quiet_flush_points;

static void quiet_in_engine(const void *arg, struct ag_visit *v)
{
    int *quiet = (int *)arg;
    (void)v;
    *quiet = *quiet && ag_eng.r.t == NULL && ag_eng.w.n == 0 && ag_eng.k.ops == 0 &&
             !__atomic_load_n(&ag_eng.k.running, __ATOMIC_RELAXED);
}

/* After a flush point's slow path while paused: whether every engine now holds
 * nothing (the visits collect any chunk launch out).  An epoch that moved meanwhile
 * is not marked: the pause changed, and a later flush point looks again. */
void ag_engine_note_quiet(void)
{
    unsigned epoch = __atomic_load_n(&ag_pause_epoch, __ATOMIC_ACQUIRE);
    int quiet = 1;
    if (!ag_engine_is_paused() || __atomic_load_n(&ag_quiet_epoch, __ATOMIC_RELAXED) == epoch)
        return;
    each_engine(quiet_in_engine, &quiet);
    if (quiet && !__atomic_load_n(&ag_launch_state, __ATOMIC_ACQUIRE))
        __atomic_store_n(&ag_quiet_epoch, epoch, __ATOMIC_RELEASE);
}

/* ---- what every engine must know ------------------------------------------------ */

void ag_engine_after(int entry, int result)
{
    unsigned policy = ag_call_policy[entry];
    if (!ag_engine_running())
        return;
    if ((policy & AG_POLICY_CAPTURE_BEGIN) && result == 0) {
        __atomic_add_fetch(&ag_sh.app_capturing, 1, __ATOMIC_RELAXED);
        ag_engine_lock();
        ag_eng.s.skip[AG_SKIP_APP_CAPTURE]++;
        ag_engine_unlock();
    }
    if (policy & AG_POLICY_CAPTURE_END) {
        int n = __atomic_load_n(&ag_sh.app_capturing, __ATOMIC_RELAXED);
        while (n > 0 && !__atomic_compare_exchange_n(&ag_sh.app_capturing, &n, n - 1, 0,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    }
    ag_engine_lock();
    ag_light_gate_update();
    ag_engine_unlock();
}

static void drop_in_engine(const void *why, struct ag_visit *v)
{
    (void)v;
    ag_engine_drop_all(why);
}

void ag_engine_drop_graphs(const char *why)
{
    if (ag_engine_running())
        each_engine(drop_in_engine, why);
}

static void stream_in_engine(const void *stream, struct ag_visit *v)
{
    (void)v;
    ag_stream_alive(*(const uintptr_t *)stream);
}

void ag_engine_stream_created(uintptr_t stream)
{
    int any = 0, n = ag_engines_count();
    if (!ag_engine_running())
        return;
    for (int i = 0; i < n; i++)      /* read unlocked: nothing dead, nothing to do */
        any |= __atomic_load_n(&ag_engine_at(i)->dead_streams.count, __ATOMIC_RELAXED);
    if (any)
        each_engine(stream_in_engine, &stream);
}

struct freed { uintptr_t base; size_t size; };

static void freed_in_engine(const void *arg, struct ag_visit *v)
{
    const struct freed *f = arg;
    (void)v;
    ag_engine_count_freed(f->base, f->size);
}

/* A graph pointing into memory being freed is kept: a replay gathers the program's
 * arguments and patches every node whose bytes differ from those its executable holds
 * before launching it, so it never launches with the freed pointer unless the program
 * passes that pointer again (its memory allocated anew, or a dead pointer eager
 * launches would get too).  An alloc-and-free loop then keeps its graphs. */
void ag_engine_memory_freed(uintptr_t base, size_t size)
{
    struct freed f = { base, size };
    if (ag_engine_running())
        each_engine(freed_in_engine, &f);
}

int ag_engine_holds_graphs(void)
{
    return ag_engine_running() && ag_templates_held() != 0;
}

/* ---- events made and destroyed (replay_events.c does each engine's part) ---------- */

static void event_made_in_engine(const void *event, struct ag_visit *v)
{
    (void)v;
    ag_events_made(*(const uintptr_t *)event);
}

void ag_engine_event_created(uintptr_t event)
{
    int any = 0, n = ag_engines_count();
    if (!ag_engine_running())
        return;
    for (int i = 0; i < n; i++)      /* read unlocked: nothing dead, nothing to do */
        any |= __atomic_load_n(&ag_engine_at(i)->ev.count, __ATOMIC_RELAXED) != 0;
    if (any)                         /* a chunk launch out reads no dead handle */
        each_engine_as(event_made_in_engine, &event, 0);
}

struct destroy { uintptr_t event; int how; };

static void destroy_in_engine(const void *arg, struct ag_visit *v)
{
    struct destroy *d = (struct destroy *)arg;
    (void)v;
    int how = ag_events_destroying(d->event);
    if (how > d->how)                /* held by one, a flush point for one: the flush */
        d->how = how;
}

/* Each engine forgets the event, or holds its destroy if its held ops name it (only
 * its owner can); a flush point if one must. */
int ag_engine_event_destroying(uintptr_t event)
{
    struct destroy d = { event, AG_DESTROY_NOW };
    if (!ag_engine_running())
        return AG_DESTROY_FLUSH;
    each_engine_as(destroy_in_engine, &d, 0);
    return d.how;
}
