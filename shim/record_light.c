/* record_light.c -- record, the cheap way: light recording and its per-thread queue.
 *
 * After AUTOGRAPH_LIGHT_AFTER sync-delimited windows in a row that each differed
 * from the one before, ops are recorded light: their identity (hash, stream, event)
 * but no args (record_ops.c), which is all that noticing a repeat needs.  A light
 * window cannot be built.  When one repeats, when the period detector sees a repeat
 * (engine.c), or when an op could start a known template, recording goes back to
 * full: the graph comes one window (or two periods) later than it would have.
 *
 * Where nothing repeats the engine must cost next to nothing, so a light op of a
 * single-threaded program does not even take the engine lock: it goes into a
 * per-thread queue of AG_LIGHT_BATCH ops that is appended to the window in one go
 * when it fills, and before anything else the thread does in the engine (every
 * locked entry point drains it first: order is kept).  An op that could start a
 * template (a 64-bit filter of the templates' first-op hashes says "maybe") takes
 * the locked path.  Kernel launches take an even shorter way (record_kernel.c,
 * ag_record_light_kernel): hashed from the call's arguments, no recorder at all.
 * The queue is the thread's engine's (one per context: engine_table.c): an op of
 * another context takes the locked path, which makes its engine the thread's, and the
 * gate stays closed while there are several engines.
 * Where windows keep differing even longer, ops are only skimmed (record_skim.c).
 */
#include "engine_internal.h"
#include "report_introspect.h"

#define AG_LIGHT_BATCH 32

struct light_entry {
    uint64_t hash;
    uintptr_t stream, event;
    unsigned short entry;
    unsigned char kind;
};

/* Outside ag_eng: each thread's own queue (its length: ag_thread_hot.light_queued). */
static AG_TLS struct light_entry queue[AG_LIGHT_BATCH];

/* Outside ag_eng: read unlocked by the interception layer's inline light path
 * (engine.h), which does not see struct ag_engine; the gate in the AG_HOT line.  The
 * filter of templates' first ops it also reads (ag_light_starts) is the build stage's
 * (build_template.c). */
AG_HOT int ag_light_gate;

void ag_light_choose(int repeated)
{
    int after = ag_eng.p.light_after;
    if (repeated) {
        ag_light_stop();
        return;
    }
    if (++ag_eng.varied_streak >= after && after > 0 && !ag_eng.light) {
        __atomic_store_n(&ag_eng.light, 1, __ATOMIC_RELAXED);
        ag_light_gate_update();
        ag_explain(0, -5, "%d windows in a row differed from the one before: recording "
                   "light until something repeats", ag_eng.varied_streak);
    } else if (ag_eng.light) {
        ag_skim_choose();
    }
}

void ag_light_stop(void)
{
    ag_eng.varied_streak = 0;
    ag_eng.k.on = 0;
    ag_eng.k.streak = 0;
    ag_eng.k.futile = 0;
    __atomic_store_n(&ag_eng.light, 0, __ATOMIC_RELAXED);
    ag_light_gate_update();
}

int ag_engine_light_hint(void)
{
    return __atomic_load_n(&ag_eng.light, __ATOMIC_RELAXED) &&
           __atomic_load_n(&ag_eng.r.t, __ATOMIC_RELAXED) == NULL;
}

int ag_light_wants_full(const struct ag_op *op)
{
    return !ag_eng.light || ag_eng.r.t ||
           (ag_eng.by_start && ag_template_find_start(op->hash));
}

static int enqueue(uint64_t hash, uint64_t skim, uintptr_t stream, uintptr_t event, int entry,
                   int kind)
{
    struct light_entry *e;
    int gate = ag_light_open();
    if (!gate || ag_light_may_start(hash) || ag_thread_id() != 1)
        return 0;
    if (gate == 2)
        return ag_engine_skim(skim, kind == AG_OP_KERNEL);
    e = &queue[ag_thread_hot.light_queued++];
    e->hash = hash;
    e->stream = stream;
    e->event = event;
    e->entry = (unsigned short)entry;
    e->kind = (unsigned char)kind;
    if (ag_thread_hot.light_queued == AG_LIGHT_BATCH) {
        ag_engine_lock();            /* drains the queue */
        ag_engine_unlock();
    }
    return 1;
}

int ag_engine_light_queue(uint64_t hash, uint64_t skim, uintptr_t stream, int entry, int kind)
{
    return enqueue(hash, skim, stream, 0, entry, kind);
}

int ag_engine_light_push(const struct ag_op *op)
{
    return op->light && (op->ctx == 0 || op->ctx == ag_thread_hot.eng_ctx) &&
           enqueue(op->hash, op->skim, op->stream, op->event, op->entry, op->kind);
                                     /* another context: its own engine's, locked */
}

void ag_light_drain(void)
{
    int n = ag_thread_hot.light_queued;
    ag_thread_hot.light_queued = 0;  /* take_light may end windows: no re-entry */
    for (int i = 0; i < n; i++) {
        struct ag_op op = {
            .kind = queue[i].kind, .entry = queue[i].entry, .stream = queue[i].stream,
            .event = queue[i].event, .hash = queue[i].hash, .light = 1,
        };
        ag_engine_take_light(&op);
    }
}
