/* engine_table.c -- the engines, one per CUDA context, and the events they record.
 *
 * Each context the program submits work in (each device's primary context, or any
 * context it makes current) gets its own struct ag_engine: window, templates,
 * replay, launcher thread, counters and lock.  So a thread per device does not wait
 * for the other device's lock, and a thread switching devices keeps a window per
 * device: its steps on each one repeat, and are graphed, however they interleave.
 * The table is made on first use of a context, never shrinks (AG_ENGINES_MAX; the ops
 * of a context beyond that pass through, each ending every engine's window: engine.c),
 * and is read without a lock: an entry is
 * written once, before the count that publishes it.  Engine 0 is the first context's;
 * each thread keeps its engine and that engine's context in ag_thread_hot, so that
 * finding the engine of an op is one compare while a thread stays in one context.
 *
 * What crosses engines must reach the driver in the program's order; the rules that
 * keep it are engine.c's (the flush points' scopes) and these: every event record an
 * engine sees notes the engine as the event's owner (a direct-mapped table by handle,
 * atomic words: handle | owner << 56).  With several engines, a wait on an event that
 * is not recorded in the waiting engine's window nor owned by that engine, or a
 * record of an event that another engine owns, crosses engines: every engine's
 * window ends first (flush `context`) and the call goes to the driver at once.
 */
#include "engine_internal.h"

#include <pthread.h>
#include <string.h>

static struct ag_engine engines[AG_ENGINES_MAX] __attribute__((aligned(64)));
static int nengines = 1;             /* engine 0 exists from the start (key 0) */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

AG_TLS struct ag_thread_hot ag_thread_hot __attribute__((aligned(64))) = {
    .eng = &engines[0],
};

int ag_engines_count(void)
{
    return __atomic_load_n(&nengines, __ATOMIC_ACQUIRE);
}

struct ag_engine *ag_engine_at(int i)
{
    return i >= 0 && i < ag_engines_count() ? &engines[i] : NULL;
}

struct ag_engine *ag_engine_lookup(uintptr_t ctx)
{
    int n = ag_engines_count();
    for (int i = 0; i < n; i++)
        if (ag_engine_key(&engines[i]) == ctx)
            return &engines[i];
    return NULL;
}

/* A new engine for ctx: engine 0's parameters and backend, a fresh window. */
static void engine_init(struct ag_engine *e, int index)
{
    e->index = index;
    e->be = engines[0].be;
    e->p = engines[0].p;
    e->device = -1;
    ag_window_reset(&e->w);
}

/* Binds ctx to engine 0 (its first context) or to a new engine; NULL when full. */
static struct ag_engine *engine_make(uintptr_t ctx)
{
    struct ag_engine *e;
    pthread_mutex_lock(&table_lock);
    e = ag_engine_lookup(ctx);
    if (e == NULL && ag_engine_key(&engines[0]) == 0) {
        e = &engines[0];
        __atomic_store_n(&e->key, ctx, __ATOMIC_RELEASE);
    } else if (e == NULL && nengines < AG_ENGINES_MAX) {
        e = &engines[nengines];
        engine_init(e, nengines);
        e->key = ctx;
        __atomic_store_n(&nengines, nengines + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&ag_light_gate, 0, __ATOMIC_RELAXED);  /* one engine only */
    }
    pthread_mutex_unlock(&table_lock);
    if (e && __atomic_load_n(&e->device, __ATOMIC_RELAXED) < 0 && e->be &&
        e->be->current_device)
        __atomic_store_n(&e->device, e->be->current_device(), __ATOMIC_RELAXED);
    return e;
}

struct ag_engine *ag_engine_of(uintptr_t ctx)
{
    struct ag_engine *e;
    if (ctx == 0)
        return ag_thread_hot.eng;
    if (ctx == ag_thread_hot.eng_ctx)
        return ag_thread_hot.eng;
    e = ag_engine_lookup(ctx);
    return e ? e : engine_make(ctx);
}

void ag_engine_drain_thread(void)
{
    struct ag_thread_hot *th = &ag_thread_hot;
    if (th->light_queued || th->skim_ops) {
        ag_engine_lock_replay();
        ag_engine_unlock();
    }
}

struct ag_engine *ag_engine_switch(struct ag_engine *e)
{
    struct ag_thread_hot *th = &ag_thread_hot;
    struct ag_engine *was = th->eng;
    if (e != was)
        ag_engine_drain_thread();    /* the one before's: in there */
    th->eng = e;
    th->eng_ctx = ag_engine_key(e);
    return was;
}

/* Whether engine e has anything the driver has not seen: ops held, a launch out. */
static int engine_busy(const struct ag_engine *e)
{
    return e->r.t != NULL || __atomic_load_n(&e->launcher.state, __ATOMIC_ACQUIRE) ||
           e->w.n > 0;
}

void ag_engine_visit(struct ag_engine *e, struct ag_visit *v, int collect)
{
    v->was = ag_engine_switch(e);
    v->entered = 0;
    if (collect)
        ag_engine_lock();
    else
        ag_engine_lock_replay();
}

void ag_engine_visit_enter(struct ag_visit *v)
{
    struct ag_engine *e = &ag_eng;
    if (!v->entered && ag_engines_count() > 1 && engine_busy(e) && ag_engine_key(e) &&
        e->be->enter_context)
        v->entered = e->be->enter_context(ag_engine_key(e), &v->token) == 0;
}

void ag_engine_visit_end(struct ag_visit *v)
{
    if (v->entered)
        ag_eng.be->leave_context(v->token);
    ag_engine_unlock();
    ag_engine_switch(v->was);
}

/* ---- the events' owners ------------------------------------------------------------- */

#define OWNERS 4096
#define OWNER_SHIFT 56

static uint64_t owners[OWNERS];

static uint64_t *owner_slot(uintptr_t event)
{
    return &owners[ag_hash_mix(0x5851f42d4c957f2dull, event) & (OWNERS - 1)];
}

void ag_event_owner_note(uintptr_t event)
{
    uint64_t word = (uint64_t)event | ((uint64_t)(ag_eng.index + 1) << OWNER_SHIFT);
    uint64_t *slot = owner_slot(event);
    if ((uint64_t)event >> OWNER_SHIFT)
        return;                      /* not a handle the table can hold: unknown */
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) != word)
        __atomic_store_n(slot, word, __ATOMIC_RELAXED);
}

int ag_event_owner(uintptr_t event)
{
    uint64_t word = __atomic_load_n(owner_slot(event), __ATOMIC_RELAXED);
    uint64_t mask = ((uint64_t)1 << OWNER_SHIFT) - 1;
    if (event == 0 || (word & mask) != (uint64_t)event)
        return -1;
    return (int)(word >> OWNER_SHIFT) - 1;
}

void ag_event_owner_forget(uintptr_t event)
{
    uint64_t *slot = owner_slot(event);
    uint64_t word = __atomic_load_n(slot, __ATOMIC_RELAXED);
    uint64_t mask = ((uint64_t)1 << OWNER_SHIFT) - 1;
    if (word && (word & mask) == (uint64_t)event)
        __atomic_compare_exchange_n(slot, &word, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

int ag_event_crosses(int kind, uintptr_t event, uint32_t link_back)
{
    int owner;
    if (ag_engines_count() <= 1)
        return 0;
    owner = ag_event_owner(event);
    if (kind == AG_OP_EVENT_RECORD)
        return owner >= 0 && owner != ag_eng.index;
    return kind == AG_OP_EVENT_WAIT && link_back == 0 && owner != ag_eng.index;
}

struct ag_engine *ag_engine_select_slow(uintptr_t ctx)
{
    struct ag_engine *e = ag_engine_of(ctx);
    if (e)
        ag_engine_switch(e);
    return e;
}
