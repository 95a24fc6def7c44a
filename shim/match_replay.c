/* match_replay.c -- match: holding ops back while they match a template.
 *
 * When an op arrives and no replay is running, the longest template whose first op
 * has the same hash is tried.  While ops keep matching (same hash and shape, streams
 * mapped consistently onto the template's slots, event waits linked to the same
 * record), they are held back and their args gathered; when the last op of a chunk
 * has matched, the chunk is launched as a graph.  On a mismatch the replay moves to
 * another template with the same ops so far that takes the op, where it can (rematch);
 * else the held ops are issued eagerly in their order and the program goes on
 * eagerly: nothing is lost or reordered.  A kernel launch, event record or stream
 * wait that is the template's next op can come by a shorter way
 * (ag_engine_fast_kernel, ag_engine_fast_event): the recorder neither hashes it nor
 * copies it twice.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Outside ag_eng: a flag every held launch reads, in the AG_HOT line (op.h): the
 * engines with a replay under way. */
AG_HOT int ag_replay_gate;

/* Sets the replay under way (NULL: none).  Read unlocked by the light hint and, as
 * ag_replay_gate, by the recorder's fast path. */
static void set_replay(struct ag_template *t)
{
    struct ag_template *was = ag_eng.r.t;
    __atomic_store_n(&ag_eng.r.t, t, __ATOMIC_RELAXED);
    if ((was == NULL) != (t == NULL))
        __atomic_add_fetch(&ag_replay_gate, t ? 1 : -1, __ATOMIC_RELAXED);
    ag_light_gate_update();
}

/* Issues window ops [from, to) in order: all of them, or only those held. */
static void issue_ops(size_t from, size_t to, int only_held)
{
    for (size_t i = from; i < to; i++) {
        struct ag_wop *o = &ag_eng.w.ops[i];
        struct ag_op view;
        int rc;
        if (only_held && !o->held)
            continue;
        ag_window_view(&ag_eng.w, i, &view);
        rc = ag_eng.be->issue(&view);
        o->held = 0;
        ag_eng.s.launches_held_issued += o->kind == AG_OP_KERNEL;
        ag_eng.s.launches_eager += o->kind == AG_OP_KERNEL;
        if (rc != 0) {
            ag_eng.s.issue_failures++;
            ag_explain(o->hash, -2, "a held op failed when issued late (error %d); "
                       "the program saw success for it", rc);
        }
    }
}

/* Issues the held ops of the window from position `from` on, in order. */
void ag_issue_held(size_t from)
{
    issue_ops(from, ag_eng.w.n, 1);
}

void ag_issue_ops(size_t from, size_t to)
{
    issue_ops(from, to, 0);
}

static size_t held_from(void)
{
    return ag_eng.r.base + (size_t)ag_eng.r.t->chunks[ag_eng.r.chunk].begin;
}

/* Whether a replay under way holds an op (not issued yet) on stream key `stream`, or
 * recording event `event` (0: neither asked). */
int ag_replay_holds(uintptr_t stream, uintptr_t event)
{
    if (ag_eng.r.t == NULL)
        return 0;
    for (size_t i = held_from(); i < ag_eng.w.n; i++) {
        const struct ag_wop *o = &ag_eng.w.ops[i];
        if (o->held && ((stream && o->stream == stream) ||
                        (event && o->kind == AG_OP_EVENT_RECORD && o->event == event)))
            return 1;
    }
    return 0;
}

/* The stop that a window's end makes: a flush, not ops that differ from the
 * template's, so no sign that templates are futile (match_backoff.c). */
const char ag_stop_window_end[] = "the window ended before the template did";

/* A flush point (reason) ended the window under a replay: it stops there. */
void ag_replay_window_ended(enum ag_flush_reason reason)
{
    ag_eng.r.ended_by = reason;
    ag_replay_mismatch(ag_stop_window_end);
}

/* Ends the replay: held ops are issued eagerly.  `why` (NULL for a completed
 * replay) goes to the explain log. */
void ag_replay_abort(const char *why)
{
    struct ag_template *t = ag_eng.r.t;
    if (t == NULL)
        return;
    if (why) {
        ag_issue_held(held_from());
        if (!t->from_period) {       /* a step's template: not again in this step */
            ag_eng.r.stopped_id = t->id;
            ag_eng.r.stopped_window = ag_eng.s.windows;
        }
        t->mismatches++;
        ag_eng.s.mismatches++;
        if (why != ag_stop_window_end) {
            ag_backoff_stopped();
            ag_subperiod_stopped(t);
        }
        ag_explain(t->hash, -3, "graph %u (%d ops): replay stopped at op %d: %s%s%s; "
                   "the held ops were issued eagerly", t->id, t->nops, ag_eng.r.pos, why,
                   why == ag_stop_window_end ? ", at a flush point: " : "",
                   why == ag_stop_window_end ? ag_flush_reason_name(ag_eng.r.ended_by) : "");
    }
    set_replay(NULL);
    /* Period detection starts again after a replay; not after a false start (a stop
     * before anything was launched, its ops all gone out eagerly): a template whose
     * first kernel comes often in a step would else reset it every time, and no longer
     * period were ever seen. */
    if (why == NULL || ag_eng.r.chunk > 0) {
        ag_eng.w.period_base = ag_eng.w.n;
        ag_eng.w.period = 0;
        ag_eng.w.run = 0;
    }
    ag_events_release_held();        /* no op is held any more */
}

/* The program's ops stopped matching the replay's template (`why`): the replay ends
 * as ag_replay_abort ends it, and a template whose replays keep stopping goes. */
void ag_replay_mismatch(const char *why)
{
    struct ag_template *t = ag_eng.r.t;
    ag_replay_abort(why);
    if (t && why && t->mismatches >= AG_MISMATCH_RETIRE && t->mismatches > 4 * t->replays) {
        if (t->replays < AG_BACKOFF_FEW)
            ag_backoff_strike();     /* it hardly ever worked */
        ag_template_retire(t, "its replays keep stopping before its end");
    }
}

static int ensure_pending(const struct ag_template *t)
{
    size_t need = 0;
    for (int c = 0; c < t->nchunks; c++)
        if (t->chunks[c].args_len > need)
            need = t->chunks[c].args_len;
    if (need <= ag_eng.r.pending_cap)
        return 1;
    unsigned char *p = realloc(ag_eng.r.pending, need);
    if (p == NULL)
        return 0;
    ag_eng.r.pending = p;
    p = realloc(ag_eng.r.pending_out, need);
    if (p == NULL)
        return 0;
    ag_eng.r.pending_out = p;
    ag_eng.r.pending_cap = need;
    return 1;
}

/* Starts a replay at the next window position if a template begins with op. */
int ag_replay_try_start(struct ag_wop *unused, const struct ag_op *op)
{
    struct ag_template *t;
    (void)unused;
    if (ag_eng.by_start == NULL)
        return 0;                    /* no template yet: nothing to look up */
    t = ag_template_find_start(op->hash);
    if (t && t->id == ag_eng.r.stopped_id && ag_eng.r.stopped_window == ag_eng.s.windows)
        return 0;                    /* it stopped in this window: the window is another */
    if (t == NULL || !ensure_pending(t) || !ag_tune_replay_starts(t))
        return 0;                    /* ...or dropped to try another chunk plan */
    for (int s = 0; s < t->nslots; s++)
        if (t->slot_fixed[s] == AG_STREAM_PER_THREAD && ag_threads_seen() > 1)
            return 0;
    memset(&ag_eng.r.slot_key, 0, sizeof ag_eng.r.slot_key);
    set_replay(t);
    ag_eng.r.pos = 0;
    ag_eng.r.chunk = 0;
    ag_eng.r.base = ag_eng.w.n;
    ag_eng.r.slot_set = 0;
    return 1;
}

static const char *map_stream(const struct ag_template *t, int slot, uintptr_t stream)
{
    struct ag_replay *r = &ag_eng.r;
    int special = stream == AG_STREAM_LEGACY || stream == AG_STREAM_PER_THREAD;
    if (r->slot_set & (1u << slot))
        return r->slot_key[slot] == stream ? NULL : "a different stream";
    if (ag_stream_is_dead(stream))
        return "a stream the program destroyed";
    if (t->slot_fixed[slot] != stream && (t->slot_fixed[slot] || special))
        return "a different kind of stream (legacy / per-thread / created)";
    for (int s = 0; s < t->nslots; s++)
        if ((r->slot_set & (1u << s)) && r->slot_key[s] == stream)
            return "a stream already used for another slot";
    r->slot_key[slot] = stream;
    r->slot_set |= 1u << slot;
    return NULL;
}

/* The template link of an event wait at the replay's position whose window op has
 * link_back: the position of its record in the template, or AG_LINK_EXTERNAL. */
static int wait_link(uint32_t link_back)
{
    int i = ag_eng.r.pos;
    return link_back && link_back <= (uint32_t)i ? i - (int)link_back : AG_LINK_EXTERNAL;
}

int ag_same_identity(const struct ag_op_id *a, const unsigned char *a_shape,
                     const struct ag_op_id *b, const unsigned char *b_shape)
{
    size_t from = 0;
    if (a->kind != b->kind || a->shape_len != b->shape_len || a->args_len != b->args_len)
        return 0;
    if (a->hash != b->hash) {
        if (a->kind != AG_OP_KERNEL || a->entry != b->entry ||
            a->shape_len <= AG_KERNEL_FUNC_BYTES)
            return 0;
        from = AG_KERNEL_FUNC_BYTES;
    }
    return memcmp(a_shape + from, b_shape + from, a->shape_len - from) == 0;
}

/* A kernel's function for AUTOGRAPH_EXPLAIN: its name where the backend knows it
 * (into buf), else its handle. */
static const char *function_text(uint64_t func, char *buf, size_t size)
{
    const char *name = ag_eng.be->function_name ? ag_eng.be->function_name(func) : NULL;
    if (name)
        return name;
    snprintf(buf, size, "%#llx", (unsigned long long)func);
    return buf;
}

/* How op differs from the template op `want` (its shape want_shape) whose identity it
 * does not share.  With AUTOGRAPH_EXPLAIN in its words (a buffer of the thread's, good
 * until its next call; kernels name both functions), else one constant text. */
static const char *identity_difference(const struct ag_op_id *want,
                                       const unsigned char *want_shape,
                                       const struct ag_op *op)
{
    static const char *const kinds[AG_OP_KIND_COUNT] = {
        [AG_OP_KERNEL] = "a kernel", [AG_OP_MEMSET] = "a memset", [AG_OP_MEMCPY] = "a copy",
        [AG_OP_EVENT_RECORD] = "an event record", [AG_OP_EVENT_WAIT] = "an event wait",
        [AG_OP_HOST_FUNC] = "a host function",
    };
    static AG_TLS char text[512];
    char a[24], b[24];
    uint64_t f_op, f_want;
    const char *how;
    if (!ag_eng.p.explain)
        return "a different op (kind, parameter layout or configuration)";
    if (want->kind != op->kind || op->kind >= AG_OP_KIND_COUNT) {
        snprintf(text, sizeof text, "a different op (%s where the graph has %s)",
                 op->kind < AG_OP_KIND_COUNT ? kinds[op->kind] : "an op",
                 want->kind < AG_OP_KIND_COUNT ? kinds[want->kind] : "another");
        return text;
    }
    if (want->shape_len != op->shape_len || want->args_len != op->args_len)
        how = "another parameter layout or number of attributes";
    else if (want->entry != op->entry)
        how = "made through another entry point";
    else
        how = op->kind == AG_OP_KERNEL ? "another argument form or launch attributes"
                                       : "another size, direction or value";
    if (op->kind != AG_OP_KERNEL || op->shape_len < AG_KERNEL_FUNC_BYTES ||
        want->shape_len < AG_KERNEL_FUNC_BYTES) {
        snprintf(text, sizeof text, "a different op (%s, %s)", kinds[op->kind], how);
        return text;
    }
    memcpy(&f_op, op->shape, sizeof f_op);
    memcpy(&f_want, want_shape, sizeof f_want);
    snprintf(text, sizeof text, "a different op (a kernel, %s: %.200s where the graph has "
             "%.200s)", how, function_text(f_op, a, sizeof a),
             function_text(f_want, b, sizeof b));
    return text;
}

/* Why op (just appended as window op o) does not match the next template op, or
 * NULL when it does. */
static const char *mismatch_in(const struct ag_template *t, const struct ag_op *op,
                               const struct ag_wop *o)
{
    const struct ag_top *top = &t->ops[ag_eng.r.pos];

    if (op->ctx != ag_eng.w.ctx)
        return "an op of another context";
    if (!ag_same_identity(&top->id, t->shapes + top->shape_off, &op->id, op->shape))
        return identity_difference(&top->id, t->shapes + top->shape_off, op);
    if (ag_is_event_op(op->kind) && ag_event_is_dead(op->event))
        return "an event the program destroyed";
    if (op->kind == AG_OP_EVENT_WAIT && wait_link(o->link_back) != top->link)
        return "an event wait linked to a different record";
    return map_stream(t, top->slot, op->stream);
}

static const char *mismatch(const struct ag_op *op, const struct ag_wop *o)
{
    return mismatch_in(ag_eng.r.t, op, o);
}

/* The op and window op that ag_replay_offer is looking at, for `takes_op`. */
static AG_TLS const struct ag_op *offered;
static AG_TLS const struct ag_wop *offered_wop;

static int takes_op(struct ag_template *cand)
{
    return mismatch_in(cand, offered, offered_wop) == NULL;
}

/* A replay that stops at op pos, in any chunk, moves to another template that begins
 * as its own does up to pos (kernels of another function of the same form taken, as
 * ag_same_identity takes them), has a chunk that begins where the one being matched
 * does and holds pos, and takes op (ag_template_same_prefix): the chunks launched so far
 * were the same ops for both, the ops held since the chunk began are the same ops
 * with their args at the same offsets of the pending args, and the new template's
 * slots are its old one's up to here.  Steps whose batch size picks other kernels, or
 * adds a launch, past their first layers keep their replays.  1 when it moved. */
static int rematch(const struct ag_op *op, const struct ag_wop *o)
{
    struct ag_replay *r = &ag_eng.r;
    struct ag_template *t = r->t, *alt;
    int chunk;
    if (r->pos == 0)
        return 0;
    ag_launch_collect();             /* the buffers may grow: none may be out (and a */
    if (r->t != t)                   /* launch that failed retires its template) */
        return 0;
    offered = op;
    offered_wop = o;
    alt = ag_template_same_prefix(t, r->pos, r->chunk, takes_op, &chunk);
    if (alt == NULL || !ensure_pending(alt))
        return 0;
    set_replay(alt);
    r->chunk = chunk;
    ag_eng.s.rematches++;
    return 1;
}

/* Window op o matched the template's next op, whose args are in the pending chunk:
 * it is held, and the chunk is launched when o was its last op (or handed to the
 * launcher thread: replay_launcher.c; its ops count as gone out).  AG_HELD. */
static int hold_matched(struct ag_template *t, struct ag_wop *o)
{
    struct ag_replay *r = &ag_eng.r;
    struct ag_chunk *c = &t->chunks[r->chunk];
    struct ag_launch job;
    int rc;

    o->held = 1;
    if (++r->pos < c->end)
        return AG_HELD;
    ag_launch_collect();             /* the chunk before: out, and it did not fail */
    if (ag_eng.r.t != t)
        return AG_HELD;              /* it did: o was issued eagerly, in order */
    rc = ag_chunk_prepare(t, c, r->pending, r->slot_key, &job);
    if (rc == 0) {
        job.win_from = held_from();
        job.win_to = ag_eng.w.n;
        rc = ag_launch_hand_off(&job);
    }
    if (rc != 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "launching chunk %d failed (error %d)", r->chunk, rc);
        ag_replay_abort(msg);
        ag_template_retire(t, "its launch or patch failed");
        return AG_HELD;           /* issued eagerly above, in order */
    }
    for (size_t i = held_from(); i < ag_eng.w.n; i++)
        ag_eng.w.ops[i].held = 0;
    if (r->pos < t->nops) {
        unsigned char *out = r->pending;   /* the next chunk's args go to the other */
        r->pending = r->pending_out;       /* buffer: this one may still be read */
        r->pending_out = out;
        r->chunk++;
        ag_events_release_held();    /* no op is held (launched, or when collected) */
        return AG_HELD;
    }
    t->replays++;
    ag_eng.s.replays++;
    ag_backoff_replayed(t);
    ag_replay_abort(NULL);
    ag_subperiod_replayed(t);
    ag_window_bound();
    return AG_HELD;
}

/* The replay's handling of op, already appended as window op o.  AG_HELD when it
 * matched (and was launched with its chunk, or is held), AG_EAGER when it did not
 * (the replay has ended and held ops were issued). */
int ag_replay_offer(const struct ag_op *op)
{
    struct ag_replay *r = &ag_eng.r;
    struct ag_wop *o = &ag_eng.w.ops[ag_eng.w.n - 1];
    struct ag_template *t = r->t;
    const char *why = mismatch(op, o);

    if (why && rematch(op, o)) {
        t = r->t;
        why = NULL;
    }
    if (why) {
        ag_launch_collect();         /* the chunk before goes out first */
        ag_replay_mismatch(r->pos == 0 ? NULL : why);
        return AG_EAGER;
    }
    memcpy(r->pending + t->ops[r->pos].args_off, op->args, op->args_len);
    return hold_matched(t, o);
}

/* Whether launch k is the template's next op, exactly as mismatch() would find: the
 * same entry, shape bytes (hash and kind follow from them), parameter layout and
 * context (k->matches compares the call with the recorded shape), and a stream that
 * maps onto the op's slot. */
static int fast_matches(const struct ag_template *t, const struct ag_top *top,
                        const struct ag_fast_kernel *k)
{
    return top->kind == AG_OP_KERNEL && top->entry == k->entry && k->ctx == ag_eng.w.ctx &&
           k->matches(k, t->shapes + top->shape_off, top->shape_len, top->layout,
                      top->args_len) &&
           map_stream(t, top->slot, k->stream) == NULL;
}

/* The replay under way, with the lock taken, when the fast path may hold its next
 * op; NULL (the lock given back, nothing changed) when the op must take the full
 * path. */
static AG_INLINE struct ag_template *fast_path_begin(uintptr_t ctx)
{
    struct ag_template *t;
    if (!ag_engine_running())
        return NULL;
    (void)ag_thread_id();            /* counts the threads, as ag_engine_offer */
    if (ag_engine_select(ctx) == NULL ||
        __atomic_load_n(&ag_eng.r.t, __ATOMIC_RELAXED) == NULL)
        return NULL;                 /* another engine's replay: not this one's op */
    ag_engine_lock_replay();         /* a chunk launch may be out: hold_matched waits */
    t = ag_eng.r.t;
    if (t == NULL || __atomic_load_n(&ag_sh.app_capturing, __ATOMIC_RELAXED) || ag_engine_is_paused()) {
        ag_engine_unlock();
        return NULL;
    }
    return t;
}

/* Appends the matched op h to the window and holds it: 1, the lock still held for the
 * caller's counts; 0, the lock given back, when the window is out of memory (nothing
 * changed that the full path, which then ends the window, would not). */
static AG_INLINE int fast_path_hold(struct ag_template *t, const struct ag_held_op *h)
{
    struct ag_wop *o = h->kind == AG_OP_KERNEL ? ag_window_append_held(&ag_eng.w, h)
                                               : ag_window_append_held_event(&ag_eng.w, h);
    if (o == NULL) {
        ag_engine_unlock();
        return 0;
    }
    hold_matched(t, o);
    return 1;
}

int ag_engine_fast_kernel(const struct ag_fast_kernel *k)
{
    struct ag_template *t = fast_path_begin(k->ctx);
    const struct ag_top *top;
    unsigned char *args;

    if (t == NULL)
        return 0;
    top = &t->ops[ag_eng.r.pos];
    if (!fast_matches(t, top, k)) {
        ag_engine_unlock();          /* nothing changed that the full path would not */
        return 0;
    }
    args = ag_eng.r.pending + top->args_off;
    k->fill_args(k, top->layout, args);
    if (!fast_path_hold(t, &(struct ag_held_op){
            .hash = top->hash, .stream = k->stream, .layout = top->layout,
            .shape = t->shapes + top->shape_off, .args = args, .shape_len = top->shape_len,
            .args_len = top->args_len, .entry = top->entry, .kind = AG_OP_KERNEL }))
        return 0;
    ag_eng.s.held_fast++;
    ag_eng.s.held_runtime += k->above_driver != 0;
    ag_engine_unlock();
    return 1;
}

/* Whether event op e is the template's next op, exactly as mismatch() would find:
 * the same kind, entry and shape bytes, a live event, for a wait the same link to
 * its record (link_back: the window's, ag_window_link_back), and a stream that maps
 * onto the op's slot. */
static int fast_event_matches(const struct ag_template *t, const struct ag_top *top,
                              const struct ag_fast_event *e, uint32_t link_back)
{
    if (top->kind != e->kind || top->entry != e->entry || e->ctx != ag_eng.w.ctx ||
        top->shape_len != e->shape_len || top->args_len != sizeof(uint64_t) ||
        memcmp(t->shapes + top->shape_off, e->shape, e->shape_len) != 0 ||
        ag_event_is_dead(e->event))
        return 0;
    if (e->kind == AG_OP_EVENT_WAIT && wait_link(link_back) != top->link)
        return 0;
    return map_stream(t, top->slot, e->stream) == NULL;
}

int ag_engine_fast_event(const struct ag_fast_event *e)
{
    struct ag_template *t = fast_path_begin(e->ctx);
    const struct ag_top *top;
    unsigned char *args;
    uint64_t handle = (uint64_t)e->event;
    uint32_t link_back;

    if (t == NULL)
        return 0;
    top = &t->ops[ag_eng.r.pos];
    link_back = e->kind == AG_OP_EVENT_WAIT ? ag_window_link_back(&ag_eng.w, e->event) : 0;
    if (!fast_event_matches(t, top, e, link_back) ||
        ag_event_crosses(e->kind, e->event, link_back)) {   /* the full path ends all */
        ag_engine_unlock();
        return 0;
    }
    if (e->kind == AG_OP_EVENT_RECORD)
        ag_event_owner_note(e->event);
    args = ag_eng.r.pending + top->args_off;
    memcpy(args, &handle, sizeof handle);
    if (!fast_path_hold(t, &(struct ag_held_op){
            .hash = top->hash, .stream = e->stream, .event = e->event,
            .link_back = link_back, .shape = t->shapes + top->shape_off, .args = args,
            .shape_len = top->shape_len, .args_len = top->args_len, .entry = top->entry,
            .kind = (unsigned char)e->kind }))
        return 0;
    ag_eng.s.held_fast_events++;
    ag_engine_unlock();
    return 1;
}
