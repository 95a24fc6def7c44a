/* engine.c -- the coordinator: the engine's entry points and policy, when a window
 * ends, when it becomes a graph, when ops are held.
 *
 * There is an engine per context (engine_table.c), each guarded by its own lock: an
 * op goes to the engine of its context.  A flush point of one stream, event or
 * context ends the windows of the engines holding its work; any other ends them all,
 * one engine at a time.  A recordable op is appended to the window;
 * if a replay is running (or can start with it) match_replay.c decides whether it
 * is held; otherwise the caller issues it and the period detector looks at it.  At a
 * flush point the held ops are issued, and the window is compared with the one
 * before: seen AUTOGRAPH_WARMUP times in a row, it is built into a template.
 * Where nothing repeats, ops are recorded light (record_light.c).
 */
#include "engine_internal.h"
#include "report_introspect.h"
#include "engine_lock.h"
#include "timing.h"          /* ag_timing_now: the one monotonic clock */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ag_shared ag_sh;

/* Outside ag_eng: a flag every held launch reads, in the AG_HOT line (op.h). */
static AG_HOT int engine_running;

/* Takes ag_eng's lock for the replay's fast path, which only holds ops: the calling
 * thread's queued light ops go in first. */
void ag_engine_lock_replay(void)
{
    ag_lock_take(&ag_eng.lock);
    ag_light_drain();
    ag_skim_drain();
}

/* Takes the engine lock for anything: a chunk launch handed off is done first. */
void ag_engine_lock(void)
{
    ag_engine_lock_replay();
    ag_launch_collect();
}

/* A launch of another engine's is of another context: a call that depends on its
 * work is a flush point of that engine, or of all (ag_engine_before). */
void ag_launch_settle_slow(void)
{
    if (!ag_thread_hot.hook_depth &&  /* a hook runs under the lock, nothing out */
        __atomic_load_n(&ag_eng.launcher.state, __ATOMIC_ACQUIRE) != AG_LAUNCH_IDLE) {
        ag_engine_lock();
        ag_engine_unlock();
    }
}

void ag_engine_unlock(void)
{
    ag_lock_give(&ag_eng.lock);
}

unsigned ag_thread_id(void)
{
    unsigned *thread_id = &ag_thread_hot.thread_id;
    if (*thread_id == 0) {
        *thread_id = __atomic_add_fetch(&ag_sh.next_thread_id, 1, __ATOMIC_RELAXED);
        if (*thread_id > 1)           /* the light fast path is for one thread only */
            __atomic_store_n(&ag_light_gate, 0, __ATOMIC_RELAXED);
    }
    return *thread_id;
}

unsigned ag_threads_seen(void)
{
    return __atomic_load_n(&ag_sh.next_thread_id, __ATOMIC_RELAXED);
}

double ag_now_us(void)
{
    return (double)ag_timing_now() / 1e3;
}

/* An op arrives (full path, no replay running): the program's time since the last op
 * issued eagerly. */
static void note_arrival(struct ag_window *w)
{
    if (w->last_return_ns) {
        w->program_ns += ag_timing_now() - w->last_return_ns;
        w->program_gaps++;
        w->last_return_ns = 0;
    }
}

/* Engine 0 gets the parameters and the backend; the engines made later copy its. */
void ag_engine_setup(const struct ag_backend *backend, const struct ag_engine_params *p)
{
    struct ag_engine *e = ag_engine_at(0);
    ag_lock_take(&e->lock);
    if (!engine_running) {
        ag_flush_points_init();
        e->be = backend;
        e->p = *p;
        if (e->p.chunk_growth < 1)
            e->p.chunk_growth = 1;
        if (e->p.chunk_max < e->p.chunk_first)
            e->p.chunk_max = e->p.chunk_first;
        e->device = -1;
        ag_window_reset(&e->w);
        ag_dump_setup(p->dump_dir);
        __atomic_store_n(&engine_running, 1, __ATOMIC_RELEASE);
    }
    ag_lock_give(&e->lock);
}

/* 0 also inside a hook (engine_hooks.c): its CUDA calls go straight to the driver. */
int ag_engine_running(void)
{
    return __atomic_load_n(&engine_running, __ATOMIC_ACQUIRE) && !ag_thread_hot.hook_depth;
}

int ag_engine_takes_ops(void)
{
    return ag_engine_running() && !ag_engine_is_paused() &&
           __atomic_load_n(&ag_sh.app_capturing, __ATOMIC_RELAXED) == 0;
}

/* Opens or closes the light fast path's gate (record_light.c: ag_light_gate) after a
 * change of what it depends on, which spans the engine: light recording or skimming, a
 * replay, the program's own captures, a pause, a hook, a second thread, a second
 * engine (the light paths do not know an op's context: they are one engine's). */
void ag_light_gate_update(void)
{
    int open = ag_eng.light && ag_eng.r.t == NULL &&
               __atomic_load_n(&ag_sh.app_capturing, __ATOMIC_RELAXED) == 0 &&
               !ag_engine_is_paused() && !ag_thread_hot.hook_depth &&
               ag_threads_seen() <= 1 && ag_engines_count() <= 1;
    __atomic_store_n(&ag_light_gate, open ? 1 + (ag_eng.k.on != 0) : 0, __ATOMIC_RELAXED);
}

/* ---- windows ------------------------------------------------------------------- */

/* A stream whose work is implicitly ordered with the legacy stream's: the per-thread
 * default stream and created streams without the non-blocking flag.  A graph has
 * only explicit edges: such a stream shares a graph with the legacy stream only
 * where the backend turns the implicit order into edges (backend.h, legacy_edges). */
int ag_stream_syncs_with_legacy(uintptr_t s)
{
    if (s == AG_STREAM_PER_THREAD || ag_eng.be->stream_blocking == NULL)
        return 1;
    return ag_eng.be->stream_blocking(s);
}

/* The ops of [a, b) that are work a graph launch replaces: kernels, copies, memsets.
 * Event records and waits cost the driver little eagerly and become edges in a graph,
 * so a window of one kernel and its events is no cheaper replayed: they do not count
 * towards AUTOGRAPH_MIN_OPS.  Nor do host functions, which go to the GPU as they
 * would eagerly; *host_funcs gets their number. */
static size_t work_ops(const struct ag_window *w, size_t a, size_t b, size_t *host_funcs)
{
    size_t n = 0;
    *host_funcs = 0;
    for (size_t i = a; i < b; i++) {
        *host_funcs += w->ops[i].kind == AG_OP_HOST_FUNC;
        n += !ag_is_event_op(w->ops[i].kind) && w->ops[i].kind != AG_OP_HOST_FUNC;
    }
    return n;
}

/* Whether [a, b) has too little work for its graph launches: AUTOGRAPH_MIN_OPS, and,
 * since a chunk ends at each host function (build_collective.c), at least two ops of
 * work per host function, so that each chunk launch replaces two launches or more
 * on average.  JAX dispatching op by op puts a host function after each kernel and
 * its events: that stays eager. */
static int too_short(const struct ag_window *w, size_t a, size_t b)
{
    size_t host_funcs, work = work_ops(w, a, b, &host_funcs);
    return work < (size_t)ag_eng.p.min_ops || work < 2 * host_funcs;
}

/* Why window ops [a, b) cannot become a graph, beyond what the window noted. */
static enum ag_skip slice_check(const struct ag_window *w, size_t a, size_t b)
{
    int legacy = 0, others = 0, ptds = 0;
    uintptr_t seen[AG_MAX_SLOTS];
    int nseen = 0;
    if (w->ineligible != AG_SKIP_NONE)
        return w->ineligible;
    if (a < w->events_from)
        return AG_SKIP_EVENTS;
    if (a < w->full_from)
        return AG_SKIP_LIGHT;
    for (size_t i = a; i < b; i++) {
        uintptr_t s = w->ops[i].stream;
        int known = 0;
        for (int k = 0; k < nseen; k++)
            known |= seen[k] == s;
        if (known)
            continue;
        seen[nseen++] = s;
        legacy += s == AG_STREAM_LEGACY;
        ptds += s == AG_STREAM_PER_THREAD;
    }
    for (int k = 0; legacy && k < nseen; k++)
        others += seen[k] != AG_STREAM_LEGACY && ag_stream_syncs_with_legacy(seen[k]);
    if (legacy && others && !ag_eng.be->legacy_edges)
        return AG_SKIP_LEGACY_MIX;
    if (ptds && ag_threads_seen() > 1)
        return AG_SKIP_PTDS_THREADS;
    if (too_short(w, a, b))
        return AG_SKIP_SHORT;
    return AG_SKIP_NONE;
}

static void skip_window(enum ag_skip why)
{
    ag_eng.s.skip[why]++;
    ag_explain_skip(&ag_eng.w, why);
}

/* How many times a window of this hash has been seen lately, this one included.
 * The table keeps the AG_RECENT_SIZE shapes seen last; the oldest makes room. */
static int seen_again(uint64_t hash)
{
    struct ag_recent *slot = &ag_eng.recent[0];
    uint32_t now = ++ag_eng.judged;
    for (int i = 0; i < AG_RECENT_SIZE; i++) {
        struct ag_recent *r = &ag_eng.recent[i];
        if (r->count && r->hash == hash) {
            slot = r;
            break;
        }
        if (r->count == 0 || (slot->count && now - r->last > now - slot->last))
            slot = r;
    }
    if (slot->count == 0 || slot->hash != hash) {
        slot->hash = hash;
        slot->count = 0;
    }
    slot->last = now;
    return (int)++slot->count;
}

/* A shape that becomes a graph starts its count again: if that graph is evicted or
 * dropped, the shape has to warm up again before it is rebuilt. */
static void forget_recent(uint64_t hash)
{
    for (int i = 0; i < AG_RECENT_SIZE; i++)
        if (ag_eng.recent[i].hash == hash)
            ag_eng.recent[i].count = 0;
}

/* ---- graphs the program's own destroys and unloads drop -------------------------- */

/* A program that unloads a module of a window's kernels after each sync (or destroys
 * its event where the backend cannot park event nodes: replay_events.c) would have
 * the window's graph built, dropped before its first replay and built again forever:
 * after AG_MAX_DROPS such drops the window stays eager.  A graph that replayed
 * before it went is not counted.  Counted in a small table by window hash (a
 * collision only restarts a count). */
void ag_note_program_drop(const struct ag_template *t)
{
    struct ag_drops *d = &ag_eng.drops[t->hash % AG_DROPS_SIZE];
    if (t->replays > 0)
        return;
    if (d->hash != t->hash) {
        d->hash = t->hash;
        d->n = 0;
    }
    d->n++;
}

static int dropped_often(uint64_t hash)
{
    const struct ag_drops *d = &ag_eng.drops[hash % AG_DROPS_SIZE];
    return d->hash == hash && d->n >= AG_MAX_DROPS;
}

/* Decides about a window that ended at a flush point (sync-delimited). */
static void judge_window(void)
{
    struct ag_window *w = &ag_eng.w;
    struct ag_template *known;
    enum ag_skip why;
    uint64_t before = ag_eng.last_hash;
    int varied = 0, attempts, seen, repeats, futile;

    if (!too_short(w, 0, w->n)) {
        /* a window too short to graph (an upload between steps) is no step's
         * predecessor: the successor rule looks through it */
        ag_successor_note(before, w->hash);
        if (w->hash != ag_eng.last_hash) {
            varied = ag_eng.last_hash != 0;
            ag_eng.last_hash = w->hash;
        }
    }
    HASH_FIND(hh, ag_eng.by_hash, &w->hash, sizeof w->hash, known);
    if (known && (!known->failed || known->build_attempts >= AG_BUILD_TRIES)) {
        ag_futile_next_judged(known->failed);
        ag_light_choose(1);
        if (!known->failed)
            ag_template_credit(known);
        else if (ag_futile_judged(w, AG_SKIP_BUILD_FAILED, before))
            ag_skim_futile();
        return;                      /* already a graph, or known not to build */
    }
    seen = seen_again(w->hash);
    repeats = known != NULL || seen > 1;
    ag_light_choose(repeats);
    if (repeats && w->full_from > 0)
        ag_futile_hold_off();        /* a light repeat: its next one recorded in full,
                                      * not skimmed after a futile window before it */
    attempts = known ? known->build_attempts : 0;
    if (known)
        ag_template_retire(known, "retrying the build");
    why = slice_check(w, 0, w->n);
    if (why == AG_SKIP_NONE && dropped_often(w->hash))
        why = AG_SKIP_DROPPED_OFTEN;
    futile = ag_futile_reason(why);  /* 0 for AG_SKIP_NONE */
    ag_futile_next_judged(futile);
    if (futile && seen > 1 && ag_futile_judged(w, why, before))
        ag_skim_futile();
    if (why == AG_SKIP_NONE && seen < ag_eng.p.warmup)
        why = varied ? AG_SKIP_SHAPE_VARIES : AG_SKIP_WARMUP;
    if (why == AG_SKIP_NONE && ag_backoff_active())
        why = AG_SKIP_BACKOFF;
    if (why != AG_SKIP_NONE) {
        skip_window(why);
        return;
    }
    forget_recent(w->hash);
    known = ag_template_build(w, 0, w->n, attempts);
    if (known && !known->failed)
        ag_template_credit(known);
}

/* The length of the sync-delimited windows lately: the longest, decaying by 1/16 a
 * window.  A period inside a window no longer than twice that is the program's own
 * structure (the layers of a step that ends in a sync), better graphed with the whole
 * window than cut (look_for_period). */
static void note_window_length(size_t n)
{
    uint32_t decayed = ag_eng.long_window - ag_eng.long_window / 16;
    ag_eng.long_window = n > decayed ? (uint32_t)(n < UINT32_MAX ? n : UINT32_MAX) : decayed;
}

/* Ends the window: held ops are issued; a sync-delimited window is judged. */
void ag_engine_end_window(enum ag_flush_reason reason)
{
    if (ag_eng.r.t)
        ag_replay_window_ended(reason);
    ag_skim_window_end(reason, ag_eng.w.n == 0);
    ag_subperiod_window_end();
    if (ag_eng.w.n == 0)
        return;
    ag_eng.s.windows++;
    ag_eng.s.light_windows += ag_eng.w.full_from > 0;
    ag_eng.s.flush[reason]++;
    if (reason != AG_FLUSH_NONE) {
        note_window_length(ag_eng.w.n);
        judge_window();
        if (ag_futile_window_end(ag_eng.w.hash))
            ag_skim_futile();
    }
    ag_window_reset(&ag_eng.w);
}

/* A window whose replays never end it (a decode loop that never synchronizes) would
 * keep every op it held: past AG_WINDOW_MAX ops, the end of a replay ends it, as a
 * period cut does, once the replay's last chunk is out (its launch reads the window). */
void ag_window_bound(void)
{
    if (ag_eng.w.n < AG_WINDOW_MAX || ag_eng.r.t != NULL)
        return;
    ag_launch_collect();
    if (ag_eng.r.t == NULL)
        ag_engine_end_window(AG_FLUSH_NONE);
}

/* After an eager op: a period found in a long run becomes a template, and the window
 * is cut there so that the next op can start replaying it. */
static void look_for_period(void)
{
    struct ag_window *w = &ag_eng.w;
    size_t start;
    int len, floor = ag_subperiod_floor();

    if (ag_backoff_active()) {
        ag_backoff_window_grew(w);   /* no template now; a long window passes time */
        return;
    }
    if (w->n <= 2 * (size_t)ag_eng.long_window)
        return;                      /* a step's own structure */
    len = ag_window_period(w, &start);
    if (len <= floor)
        return;                      /* none, or a part of a longer one (suspended) */
    if (start < w->full_from) {      /* seen light: record in full, look again */
        ag_light_stop();
        w->period_base = w->n;
        return;
    }
    if (slice_check(w, start, w->n) != AG_SKIP_NONE) {
        w->period_base = w->n;       /* look again in what follows */
        return;
    }
    struct ag_template *t = ag_template_build(w, start, w->n, 0);
    if (t) {
        t->from_period = 1;
        ag_subperiod_cut(t);
    }
    ag_eng.s.period_cuts++;
    ag_engine_end_window(AG_FLUSH_NONE);
}

/* ---- entry points -------------------------------------------------------------- */

/* Whether op may be the replay's next op: then, like a fast-path kernel, it is held
 * while a chunk launch handed off is still out (an event record or wait between two
 * chunks need not wait for the launch before it); it is collected first if op goes
 * anywhere else (ag_replay_offer's mismatch, or an eager op). */
static int replay_may_hold(const struct ag_op *op)
{
    return ag_eng.r.t && !op->light && op->ctx == ag_eng.w.ctx;
}

/* Whether op, an event record or wait, crosses engines (engine_table.c): then the
 * caller ends every window and makes the call unrecorded. */
static int crosses_engines(const struct ag_op *op)
{
    if (!ag_is_event_op(op->kind) || ag_engines_count() <= 1)
        return 0;
    return ag_event_crosses(op->kind, op->event, op->kind == AG_OP_EVENT_WAIT ?
                            ag_window_link_back(&ag_eng.w, op->event) : 0);
}

int ag_engine_offer(struct ag_op *op)
{
    struct ag_wop *o;

    if (!ag_engine_running())
        return AG_PASS;
    (void)ag_thread_id();            /* counts the threads (per-thread default stream) */
    if (ag_engine_select(op->ctx) == NULL) {  /* a context beyond the table's: its ops */
        ag_engine_flush(AG_FLUSH_CONTEXT);     /* may depend on any engine's held work */
        return AG_PASS;
    }
    ag_engine_lock_replay();
    if (!replay_may_hold(op))
        ag_launch_collect();
    if (__atomic_load_n(&ag_sh.app_capturing, __ATOMIC_RELAXED) || ag_engine_is_paused()) {
        ag_engine_unlock();
        return AG_PASS;
    }
    if (crosses_engines(op)) {
        ag_engine_unlock();
        ag_engine_cross_context(op);
        return AG_PASS;
    }
    if (op->light && !ag_light_wants_full(op) && ag_skim_take(op)) {
        ag_engine_unlock();
        return AG_QUEUED;            /* a false hit of the start filter: still skimmed */
    }
    ag_skim_stop("an op took the recording path");
    if (op->light && ag_light_wants_full(op)) {
        ag_engine_unlock();
        return AG_RECORD_FULL;
    }
    if (op->light)
        ag_eng.s.light_ops++;
    if (op->ctx == 0)
        op->ctx = ag_engine_key(&ag_eng);   /* none given: the thread's engine's */
    if (ag_eng.w.n && op->ctx != ag_eng.w.ctx && ag_eng.r.t)
        ag_replay_mismatch("an op of another context");
    if (ag_eng.w.n && !op->light && ag_eng.w.ctx && op->ctx != ag_eng.w.ctx)
        ag_engine_end_window(AG_FLUSH_CONTEXT);
    if (ag_eng.p.chunk_slow_ns && ag_eng.r.t == NULL)
        note_arrival(&ag_eng.w);     /* while replaying, no clock is read */
    if (ag_eng.r.t == NULL)
        ag_replay_try_start(NULL, op);
    ag_subperiod_next_op();
    o = ag_window_append(&ag_eng.w, op);
    if (o && op->kind == AG_OP_EVENT_RECORD)
        ag_event_owner_note(op->event);
    if (o == NULL) {                 /* out of memory: stop graphing this window */
        ag_launch_collect();
        ag_engine_end_window(AG_FLUSH_UNRECORDED);
        op->slot = 0xff;
        return AG_EAGER;
    }
    if (ag_eng.r.t && ag_replay_offer(op) == AG_HELD) {
        ag_engine_unlock();
        return AG_HELD;
    }
    ag_launch_collect();             /* before op reaches the driver */
    return AG_EAGER;                 /* lock stays held until ag_engine_done */
}

static void note_failed_op(void)
{
    if (ag_eng.w.ineligible == AG_SKIP_NONE)
        ag_eng.w.ineligible = AG_SKIP_FAILED_OP;
}

/* After an op was issued eagerly (it is the window's last op). */
static void after_eager(const struct ag_op *op, int result)
{
    if (op->slot == 0xff)
        return;                      /* not in the window */
    if (op->kind == AG_OP_KERNEL)
        ag_eng.s.launches_eager++;
    if (result != 0) {
        note_failed_op();
    } else if (ag_eng.r.t == NULL) {
        look_for_period();
    }
    if (ag_eng.w.n >= AG_WINDOW_MAX && ag_eng.r.t == NULL)
        ag_engine_end_window(AG_FLUSH_UNRECORDED);
}

void ag_engine_done(const struct ag_op *op, int result)
{
    after_eager(op, result);
    if (ag_eng.p.chunk_slow_ns && op->slot != 0xff)
        ag_eng.w.last_return_ns = ag_timing_now();
    ag_engine_unlock();
}

void ag_engine_take_light(const struct ag_op *op)
{
    if (op->kind == AG_OP_EVENT_RECORD)
        ag_event_owner_note(op->event);
    if (ag_window_append(&ag_eng.w, op) == NULL) {
        ag_engine_end_window(AG_FLUSH_UNRECORDED);
        return;
    }
    ag_eng.s.light_ops++;
    after_eager(op, 0);
}

void ag_engine_light_failed(void)
{
    ag_engine_lock();
    note_failed_op();
    ag_engine_unlock();
}

/* A call its recorder could not record: the op's engine counts it and tells why; then
 * every engine's window ends (engine_scope.c): an unrecorded call may read or wait on
 * any context's work.  A host function that is not recorded (AUTOGRAPH_HOST_FUNCS=0)
 * is a flush point of its own (host_func), neither counted nor told. */
void ag_engine_unrecorded(const struct ag_op *op)
{
    if (!ag_engine_running())
        return;
    if (op->kind == AG_OP_HOST_FUNC) {
        ag_engine_flush(AG_FLUSH_HOSTFN);
        return;
    }
    if (ag_engine_select(op->ctx) != NULL) {
        ag_engine_lock();
        ag_eng.s.unrecorded++;
        if (ag_eng.w.n || ag_eng.r.t)
            ag_explain(op->hash, -4, "window ended by a call that cannot be graphed: %s",
                       op->reject ? op->reject : "?");
        ag_engine_unlock();
    }
    ag_engine_flush(AG_FLUSH_UNRECORDED);
}

void ag_engine_drop_all(const char *why)
{
    struct ag_template *t, *tmp;
    struct ag_start *s, *stmp;
    ag_replay_abort(ag_eng.r.t ? why : NULL);
    HASH_ITER(hh, ag_eng.by_hash, t, tmp)
        ag_template_retire(t, why);
    HASH_ITER(hh, ag_eng.by_start, s, stmp) {
        HASH_DEL(ag_eng.by_start, s);
        free(s);
    }
    ag_eng.last_hash = 0;
    memset(ag_eng.recent, 0, sizeof ag_eng.recent);
    memset(ag_eng.successors, 0, sizeof ag_eng.successors);
    ag_light_forget_starts();
    ag_light_stop();
}

/* ---- modules the program unloads ------------------------------------------------ */

/* Retires every built template for which uses(t, arg) holds (ending its replay
 * first if one is running).  Returns how many. */
static int templates_retire_if(int (*uses)(struct ag_template *t, const void *arg),
                               const void *arg, const char *why)
{
    struct ag_template *t, *tmp;
    int retired = 0;
    HASH_ITER(hh, ag_eng.by_hash, t, tmp) {
        if (t->failed || !uses(t, arg))
            continue;
        if (t == ag_eng.r.t)
            ag_replay_abort(why);
        ag_template_retire(t, why);
        retired++;
    }
    return retired;
}

struct unload { int entry; uintptr_t handle; };

/* Whether kernel op i of t, with the args of one of its graphs (which name the
 * function a replay patched in), goes with the unload (or the backend cannot tell). */
static int op_uses_unloaded(struct ag_template *t, int i, const unsigned char *args,
                            const struct unload *u)
{
    struct ag_op view;
    ag_template_op_view(t, i, args ? args + t->ops[i].args_off : NULL, &view);
    return ag_eng.be->kernel_unloaded == NULL ||
           ag_eng.be->kernel_unloaded(&view, u->entry, u->handle) != 0;
}

/* Whether a kernel of t goes with the unload: as built (its shape names the function
 * its graph was built with) or as a variant of a chunk holds it, patched. */
static int kernels_use_unloaded(struct ag_template *t, const struct unload *u)
{
    for (int i = 0; i < t->nops; i++)
        if (t->ops[i].kind == AG_OP_KERNEL && op_uses_unloaded(t, i, NULL, u))
            return 1;
    for (int c = 0; c < t->nchunks; c++) {
        const struct ag_chunk *ch = &t->chunks[c];
        for (int v = 0; v < ch->nvariants; v++)
            for (int i = ch->begin; i < ch->end; i++)
                if (t->ops[i].kind == AG_OP_KERNEL &&
                    op_uses_unloaded(t, i, ch->variants[v].args, u))
                    return 1;
    }
    return 0;
}

static int template_uses_unloaded(struct ag_template *t, const void *arg)
{
    if (!kernels_use_unloaded(t, arg))
        return 0;
    ag_note_program_drop(t);
    return 1;
}

/* A call of `entry` unloads module or library `handle`: drops the graphs with a kernel
 * of it (and those the backend cannot tell about).  Returns how many. */
int ag_engine_drop_unloaded(int entry, uintptr_t handle)
{
    struct unload u = { entry, handle };
    return templates_retire_if(template_uses_unloaded, &u,
                               "a module or library of its kernels was unloaded");
}

/* ---- events the program destroys ------------------------------------------------ */

/* Whether t must go for the destroyed event *arg: its nodes naming it could not be
 * parked (counted as the program's drop). */
static int template_loses_event(struct ag_template *t, const void *arg)
{
    if (ag_events_park(t, *(const uintptr_t *)arg) == 0)
        return 0;
    ag_note_program_drop(t);
    return 1;
}

/* `event` is gone for the engine (its destroy is made now, or was held and is made
 * now: replay_events.c): the window's ops that name it forget it, and every graph
 * naming it has those nodes parked on a placeholder or, where that fails, goes. */
void ag_engine_event_gone(uintptr_t event)
{
    ag_event_owner_forget(event);
    ag_window_forget_event(&ag_eng.w, event);
    ag_events_mark_dead(event);
    templates_retire_if(template_loses_event, &event,
                        "an event it records or waits on was destroyed");
}

/* ---- chunk launches that failed --------------------------------------------------- */

/* A chunk launch that failed on the launcher (replay_launcher.c collects it): its ops go
 * out eagerly, before any op after them, then the replay (if it is still under way)
 * and the graph end. */
void ag_engine_launch_failed(const struct ag_launch *job)
{
    char msg[96];
    snprintf(msg, sizeof msg, "launching chunk %d failed (error %d)",
             (int)(job->c - job->t->chunks), job->rc);
    ag_issue_ops(job->win_from, job->win_to);
    if (ag_eng.r.t == job->t) {
        ag_replay_abort(msg);        /* its held ops, after those */
    } else {                         /* the replay had ended with this chunk */
        job->t->mismatches++;
        ag_eng.s.mismatches++;
        ag_explain(job->t->hash, -3, "graph %u (%d ops): replay stopped at op %d: %s; "
                   "the held ops were issued eagerly", job->t->id, job->t->nops,
                   job->c->end, msg);
    }
    ag_template_retire(job->t, "its launch or patch failed");
}

/* ---- destroyed streams: a replay never maps one (the driver must see the call) -- */

void ag_stream_gone(uintptr_t stream)
{
    struct ag_dead_streams *d = &ag_eng.dead_streams;
    d->ring[d->next] = stream;
    d->next = (d->next + 1) % AG_DEAD_STREAMS;
    if (d->count < AG_DEAD_STREAMS)      /* read unlocked by ag_engine_stream_created */
        __atomic_store_n(&d->count, d->count + 1, __ATOMIC_RELAXED);
}

int ag_stream_is_dead(uintptr_t stream)
{
    const struct ag_dead_streams *d = &ag_eng.dead_streams;
    for (int i = 0; i < d->count; i++)
        if (d->ring[i] == stream)
            return 1;
    return 0;
}

/* The program made a stream with this handle: no longer a dead one here. */
void ag_stream_alive(uintptr_t stream)
{
    struct ag_dead_streams *d = &ag_eng.dead_streams;
    for (int i = 0; i < d->count; i++)
        if (d->ring[i] == stream)
            d->ring[i] = 0;              /* the handle is a live stream again */
}

/* Memory [base, base + size) is being freed: the graphs pointing into it are kept
 * (engine_scope.c tells why); counted. */
void ag_engine_count_freed(uintptr_t base, size_t size)
{
    int kept = ag_templates_count_pointing_into(base, base + (size ? size : 1));
    ag_eng.s.freed_kept += (unsigned long)kept;
    if (kept)
        ag_explain(0, -7, "memory graphs point into is being freed (0x%llx, %zu bytes): "
                   "graphs kept, their next replays patch those nodes",
                   (unsigned long long)base, size);
}

void ag_engine_reset_for_tests(void)
{
    ag_engine_lock();
    ag_engine_drop_all("reset");
    ag_events_forget_all();
    ag_tune_forget();
    ag_futile_forget();
    ag_window_reset(&ag_eng.w);
    memset(&ag_eng.s, 0, sizeof ag_eng.s);
    ag_sh.app_capturing = 0;
    memset(&ag_eng.k, 0, sizeof ag_eng.k);
    memset(&ag_eng.backoff, 0, sizeof ag_eng.backoff);
    memset(&ag_eng.subperiod, 0, sizeof ag_eng.subperiod);
    ag_eng.long_window = 0;
    ag_light_gate_update();
    ag_engine_unlock();
}
