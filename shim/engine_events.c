/* engine_events.c -- graphs that outlive the program's events.
 *
 * A graph names some of the program's events itself: an event record node for each
 * cuEventRecord it stands for, an event wait node for each wait on an event recorded
 * outside it.  The event is an op's argument, not part of its shape (record_ops.c):
 * programs make a new event every step and destroy the old one (PyTorch, cuDNN), and
 * a replay patches the event nodes to the step's events, as it patches kernel nodes to
 * new pointers (engine_template.c, the backend's patch).  Here, what a destroy does:
 *   - every event node that names the event, in a chunk's graph or in one of its
 *     executables, is pointed at a placeholder event of the backend's (set_event), and
 *     the arg bytes kept for it are zeroed, so the next replay patches it again: no
 *     graph keeps a destroyed handle, and none is dropped;
 *   - the handle is remembered as dead (the last AG_DEAD_EVENTS of them): a replay
 *     never holds an op on a dead event (the driver must see that call and answer it);
 *     a new event with that handle makes it live again (ag_engine_event_created).
 * Without the backend's set_event, or when a node cannot be parked, the graphs that
 * name the event go, as they did before (counted by ag_note_program_drop).
 */
#include "engine_internal.h"

#include <stdlib.h>
#include <string.h>

#define AG_DEAD_EVENTS 1024         /* destroyed handles remembered */

struct dead_event {
    uintptr_t event;
    unsigned slot;                  /* in dead_ring */
    UT_hash_handle hh;
};

static struct dead_event *dead_events;          /* by handle */
static uintptr_t dead_ring[AG_DEAD_EVENTS];     /* in destroy order: the oldest goes */
static unsigned dead_next;
static unsigned dead_event_count;   /* read unlocked by ag_engine_event_created */

/* ---- the dead handles ---------------------------------------------------------------- */

static struct dead_event *find_dead(uintptr_t event)
{
    struct dead_event *d = NULL;
    if (dead_event_count)
        HASH_FIND(hh, dead_events, &event, sizeof event, d);
    return d;
}

int ag_event_is_dead(uintptr_t event)
{
    return find_dead(event) != NULL;
}

static void forget_dead(struct dead_event *d)
{
    HASH_DEL(dead_events, d);
    free(d);
    __atomic_store_n(&dead_event_count, dead_event_count - 1, __ATOMIC_RELAXED);
}

static void remember_dead(uintptr_t event)
{
    struct dead_event *d = find_dead(dead_ring[dead_next]);
    if (dead_ring[dead_next] && d && d->slot == dead_next)
        forget_dead(d);             /* the oldest handle: forgotten */
    dead_ring[dead_next] = 0;
    if (find_dead(event) || (d = calloc(1, sizeof *d)) == NULL)
        return;
    d->event = event;
    d->slot = dead_next;
    HASH_ADD(hh, dead_events, event, sizeof d->event, d);
    __atomic_store_n(&dead_event_count, dead_event_count + 1, __ATOMIC_RELAXED);
    dead_ring[dead_next] = event;
    dead_next = (dead_next + 1) % AG_DEAD_EVENTS;
}

void ag_engine_event_created(uintptr_t event)
{
    struct dead_event *d;
    if (!ag_engine_running() || __atomic_load_n(&dead_event_count, __ATOMIC_RELAXED) == 0)
        return;
    ag_engine_lock();
    if ((d = find_dead(event)) != NULL)
        forget_dead(d);             /* a live event again (its ring slot ages out) */
    ag_engine_unlock();
}

void ag_events_forget_all(void)
{
    struct dead_event *d, *tmp;
    HASH_ITER(hh, dead_events, d, tmp)
        forget_dead(d);
    memset(dead_ring, 0, sizeof dead_ring);
    dead_next = 0;
}

/* ---- parking the nodes of a destroyed event ------------------------------------------ */

/* Whether the event arg of event op `top`, in the arg bytes `args` of its chunk (as
 * built, or as a variant holds them), is `event`; if so it is zeroed (the next replay
 * patches the node). */
static int take_event(const struct ag_top *top, unsigned char *args, uintptr_t event)
{
    uint64_t have;
    memcpy(&have, args + top->args_off, sizeof have);
    if (have != (uint64_t)event)
        return 0;
    memset(args + top->args_off, 0, sizeof have);
    return 1;
}

/* Points `node` (NULL: the op has none) at the placeholder in exec, or in its graph
 * when exec is NULL.  -1 when it could not (no set_event, or the backend refused). */
static int park_node(void *exec, void *node)
{
    const struct ag_backend *be = ag_eng.be;
    if (node == NULL)
        return 0;
    if (be->set_event == NULL || be->set_event(exec, node, 0) != 0)
        return -1;
    ag_eng.s.events_parked++;
    return 0;
}

/* Parks the nodes of chunk c that name `event`, in its graph and its executables.
 * -1 when one could not be parked. */
static int park_chunk(const struct ag_template *t, struct ag_chunk *c, uintptr_t event)
{
    for (int i = c->begin; i < c->end; i++) {
        const struct ag_top *top = &t->ops[i];
        void *node = c->nodes[i - c->begin];
        if (!ag_is_event_op(top->kind) || top->args_len != sizeof(uint64_t))
            continue;
        if (take_event(top, c->base, event) && park_node(NULL, node) < 0)
            return -1;
        for (int v = 0; v < c->nvariants; v++)
            if (take_event(top, c->variants[v].args, event) &&
                park_node(c->variants[v].exec, node) < 0)
                return -1;
    }
    return 0;
}

/* Parks every node of t that names `event`: -1 when t must go. */
static int park_template(struct ag_template *t, uintptr_t event)
{
    for (int k = 0; k < t->nchunks; k++)
        if (park_chunk(t, &t->chunks[k], event) < 0)
            return -1;
    return 0;
}

/* The program is destroying `event` (before the driver's call; the window has ended
 * and held work was issued). */
void ag_events_destroyed(uintptr_t event)
{
    struct ag_template *t, *tmp;
    remember_dead(event);
    HASH_ITER(hh, ag_eng.by_hash, t, tmp) {
        if (t->failed || park_template(t, event) == 0)
            continue;
        if (t == ag_eng.r.t)
            ag_replay_abort("an event of the graph was destroyed");
        ag_note_program_drop(t);
        ag_template_retire(t, "an event it records or waits on was destroyed");
    }
}
