/* engine_hooks.c -- report: the introspection hooks of include/autograph.h.
 *
 * Capture-end hooks run when a chunk's graph has been captured, before it is
 * instantiated; post-instantiate hooks after every instantiation.  Both run in
 * registration order, on the thread that builds, with the engine lock held.  While
 * one runs (and while the backend's introspection entries run: ag_step_aside),
 * ag_in_hook() is true on that thread: the engine's entry points step aside
 * (ag_engine_running() is 0 there, so a CUDA call made by the hook goes straight to
 * the driver) and the light fast path is closed, so nothing can wait for the lock
 * this thread holds.  Hooks may be added and removed from a hook: a
 * removed one is skipped, an added one runs from the next event on.
 * The table is guarded by the engine lock (api.c takes it, or is inside a hook).
 */
#include "engine_internal.h"
#include "report_introspect.h"

int ag_in_hook(void)
{
    return ag_thread_hot.hook_depth > 0;
}

/* +1: this thread enters a hook (or the backend's introspection), where the engine
 * steps aside and the light fast path is closed; -1: it leaves. */
void ag_step_aside(int delta)
{
    ag_thread_hot.hook_depth += delta;
    ag_light_gate_update();
}

/* Drops removed entries, keeping the order (never while hooks run). */
static void compact(void)
{
    struct ag_hooks *h = &ag_eng.hooks;
    int k = 0;
    if (ag_thread_hot.hook_depth)
        return;
    for (int i = 0; i < h->n; i++)
        if (h->list[i].fn)
            h->list[k++] = h->list[i];
    h->n = k;
}

int ag_hooks_add(enum ag_hook_kind kind, autograph_hook_fn fn, void *user,
                 autograph_hook_handle *handle)
{
    struct ag_hooks *h = &ag_eng.hooks;
    if (fn == NULL)
        return AUTOGRAPH_ERR_INVALID;
    compact();
    if (h->n == AUTOGRAPH_HOOKS_MAX)
        return AUTOGRAPH_ERR_FULL;
    h->list[h->n] = (struct ag_hook){ fn, user, ++h->last_id, kind };
    if (handle)
        *handle = h->list[h->n].id;
    h->n++;
    return AUTOGRAPH_OK;
}

int ag_hooks_remove(autograph_hook_handle handle)
{
    struct ag_hooks *h = &ag_eng.hooks;
    for (int i = 0; i < h->n; i++)
        if (h->list[i].id == handle && h->list[i].fn) {
            h->list[i].fn = NULL;
            compact();
            return AUTOGRAPH_OK;
        }
    return AUTOGRAPH_ERR_NOT_FOUND;
}

void ag_hooks_fire(enum ag_hook_kind kind, const autograph_graph_event *event)
{
    struct ag_hooks *h = &ag_eng.hooks;
    int n = h->n;                    /* hooks added by a hook run from the next event */
    if (n == 0)
        return;
    ag_step_aside(1);
    for (int i = 0; i < n; i++)
        if (h->list[i].fn && h->list[i].kind == kind)
            h->list[i].fn(event, h->list[i].user);
    ag_step_aside(-1);
    compact();
}
