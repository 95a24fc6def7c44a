/* replay_events.c -- replay: graphs that outlive the program's events, and windows
 * that go on across an event's destroy.
 *
 * A graph names some of the program's events itself: an event record node for each
 * cuEventRecord it stands for, an event wait node for each wait on an event recorded
 * outside it.  The event is an op's argument, not part of its shape (record_ops.c):
 * programs make a new event every step and destroy the old one (PyTorch, cuDNN), and
 * a replay patches the event nodes to the step's events, as it patches kernel nodes to
 * new pointers (replay_chunk.c, the backend's patch).  Here, what a destroy does:
 *   - every event node that names the event, in a chunk's graph or in one of its
 *     executables, is pointed at a placeholder event of the backend's (set_event), and
 *     the arg bytes kept for it are zeroed, so the next replay patches it again: no
 *     graph keeps a destroyed handle, and none is dropped;
 *   - the handle is remembered as dead (the last AG_DEAD_EVENTS of them): a replay
 *     never holds an op on a dead event (the driver must see that call and answer it);
 *     a new event with that handle makes it live again (ag_engine_event_created).
 * Without the backend's set_event, or when a node cannot be parked, the graphs that
 * name the event go, as they did before (counted by ag_note_program_drop).
 *
 * A destroy does not end the window (ag_engine_event_destroying; cuDNN destroys an
 * event in the middle of every PyTorch CNN step).  The window's ops that name the
 * event forget it (their event bytes zeroed, so a graph built from the window names
 * the placeholder there, and its evmap entry unlinked, so a new event with the same
 * handle is not taken for it).  When a held op names the event (a replay holds its
 * record or wait, not yet issued), the destroy itself is held: the program gets
 * success, and the backend destroys the event right after those ops went out, in
 * their chunk's launch or issued eagerly (ag_events_release_held).  So is it when
 * the chunk launch that the launcher thread has not yet finished names the event
 * (replay_launcher.c): the program does not wait for that launch; the destroy is
 * made when the launch is collected.  (When held ops name it too, the launch is
 * collected first: those ops go out later.)  Until then the
 * driver cannot give the handle to a new event.  A second destroy of a held one
 * ends the window (the first is made), so the driver answers it as it would have.
 * AUTOGRAPH_DESTROY_FLUSH=1, or a
 * backend without destroy_event: a destroy ends the window, as it did before.
 */
#include "engine_internal.h"

#include "log.h"

#include <stdlib.h>
#include <string.h>

struct ag_dead_event {
    uintptr_t event;
    unsigned slot;                  /* in ag_eng.ev.ring */
    UT_hash_handle hh;
};


/* ---- the dead handles ---------------------------------------------------------------- */

static struct ag_dead_event *find_dead(uintptr_t event)
{
    struct ag_dead_event *d = NULL;
    if (ag_eng.ev.count)
        HASH_FIND(hh, ag_eng.ev.dead, &event, sizeof event, d);
    return d;
}

int ag_event_is_dead(uintptr_t event)
{
    return find_dead(event) != NULL;
}

static void forget_dead(struct ag_dead_event *d)
{
    HASH_DEL(ag_eng.ev.dead, d);
    free(d);
    __atomic_store_n(&ag_eng.ev.count, ag_eng.ev.count - 1, __ATOMIC_RELAXED);
}

static void remember_dead(uintptr_t event)
{
    struct ag_dead_event *d = find_dead(ag_eng.ev.ring[ag_eng.ev.next]);
    if (ag_eng.ev.ring[ag_eng.ev.next] && d && d->slot == ag_eng.ev.next)
        forget_dead(d);             /* the oldest handle: forgotten */
    ag_eng.ev.ring[ag_eng.ev.next] = 0;
    if (find_dead(event) || (d = calloc(1, sizeof *d)) == NULL)
        return;
    d->event = event;
    d->slot = ag_eng.ev.next;
    HASH_ADD(hh, ag_eng.ev.dead, event, sizeof d->event, d);
    __atomic_store_n(&ag_eng.ev.count, ag_eng.ev.count + 1, __ATOMIC_RELAXED);
    ag_eng.ev.ring[ag_eng.ev.next] = event;
    ag_eng.ev.next = (ag_eng.ev.next + 1) % AG_DEAD_EVENTS;
}

/* The program made an event with this handle (engine_scope.c visits each engine). */
void ag_events_made(uintptr_t event)
{
    struct ag_dead_event *d;
    if ((d = find_dead(event)) != NULL)
        forget_dead(d);             /* a live event again (its ring slot ages out) */
}

void ag_events_forget_all(void)
{
    struct ag_dead_event *d, *tmp;
    HASH_ITER(hh, ag_eng.ev.dead, d, tmp)
        forget_dead(d);
    memset(ag_eng.ev.ring, 0, sizeof ag_eng.ev.ring);
    ag_eng.ev.next = 0;
    ag_eng.ev.nheld = 0;
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
int ag_events_park(struct ag_template *t, uintptr_t event)
{
    for (int k = 0; k < t->nchunks; k++)
        if (park_chunk(t, &t->chunks[k], event) < 0)
            return -1;
    return 0;
}

/* The program is destroying `event`: a record of or a wait on its handle is never held
 * until an event is made with it again. */
void ag_events_mark_dead(uintptr_t event)
{
    remember_dead(event);
}

/* ---- a destroy inside a window ------------------------------------------------------- */

static int destroy_held(uintptr_t event)
{
    for (int i = 0; i < ag_eng.ev.nheld; i++)
        if (ag_eng.ev.held[i] == event)
            return 1;
    return 0;
}

/* Whether an op the replay holds (not yet issued) records or waits on `event`.  The
 * held ops are the window's last ones (those of the chunk not launched yet). */
static int held_op_names(uintptr_t event)
{
    for (size_t i = ag_eng.w.n; i-- > 0 && ag_eng.w.ops[i].held;) {
        const struct ag_wop *o = &ag_eng.w.ops[i];
        if (ag_is_event_op(o->kind) && o->event == event)
            return 1;
    }
    return 0;
}

static int destroying(uintptr_t event)
{
    if (ag_eng.p.destroy_flush || ag_eng.be->destroy_event == NULL ||
        __atomic_load_n(&ag_sh.app_capturing, __ATOMIC_RELAXED) || ag_engine_is_paused())
        return AG_DESTROY_FLUSH;
    if (held_op_names(event) || ag_launch_names_event(event)) {
        if (ag_eng.ev.nheld == AG_HELD_DESTROYS || destroy_held(event))
            return AG_DESTROY_FLUSH;     /* a second destroy: the driver answers it */
        ag_eng.ev.held[ag_eng.ev.nheld++] = event;
        ag_eng.s.destroys_in_window++;
        ag_eng.s.destroys_held++;
        return AG_DESTROY_HELD;
    }
    ag_eng.s.destroys_in_window += ag_eng.w.n > 0;
    ag_engine_event_gone(event);
    return AG_DESTROY_NOW;
}

/* The program is destroying `event`: what this engine does about it (engine_scope.c
 * visits each one with its lock taken for the replay, no launch collected). */
int ag_events_destroying(uintptr_t event)
{
    if (held_op_names(event) || !ag_launch_names_event(event))
        ag_launch_collect();         /* else held until that launch is collected */
    return destroying(event);
}

/* After the held ops went out (match_replay.c): the destroys held for them are made,
 * in the program's order, each event's nodes parked first. */
void ag_events_release_held(void)
{
    uintptr_t events[AG_HELD_DESTROYS];
    int n = ag_eng.ev.nheld;
    if (n == 0 || ag_launch_pending())
        return;                      /* out: made when it is collected */
    memcpy(events, ag_eng.ev.held, (size_t)n * sizeof *events);
    ag_eng.ev.nheld = 0;              /* a replay that an event's going aborts finds none */
    for (int i = 0; i < n; i++) {
        int rc;
        ag_engine_event_gone(events[i]);
        rc = ag_eng.be->destroy_event(events[i]);
        ag_log(AG_LOG_DEBUG, "event %p destroyed, held until the ops naming it went out: "
               "%d", (void *)events[i], rc);
        if (rc != 0)
            ag_log(AG_LOG_WARN, "destroying event %p, held until the ops naming it were "
                   "issued, failed (error %d); the program saw success for it",
                   (void *)events[i], rc);
    }
}
