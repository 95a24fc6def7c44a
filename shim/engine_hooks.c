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
 * The table is the process's (ag_sh.hooks) while each engine builds under its own
 * lock (one per context), so it has a mutex of its own, never held while a hook runs;
 * entries are dropped only while no hook runs anywhere.
 */
#include "engine_internal.h"
#include "report_introspect.h"

#include <pthread.h>

static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static int firing;                   /* hook calls under way, all threads (the lock's) */

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

/* Drops removed entries, keeping the order (never while hooks run); lock held. */
static void compact(void)
{
    struct ag_hooks *h = &ag_sh.hooks;
    int k = 0;
    if (firing)
        return;
    for (int i = 0; i < h->n; i++)
        if (h->list[i].fn)
            h->list[k++] = h->list[i];
    h->n = k;
}

int ag_hooks_add(enum ag_hook_kind kind, autograph_hook_fn fn, void *user,
                 autograph_hook_handle *handle)
{
    struct ag_hooks *h = &ag_sh.hooks;
    int rc = AUTOGRAPH_OK;
    if (fn == NULL)
        return AUTOGRAPH_ERR_INVALID;
    pthread_mutex_lock(&hooks_lock);
    compact();
    if (h->n == AUTOGRAPH_HOOKS_MAX) {
        rc = AUTOGRAPH_ERR_FULL;
    } else {
        h->list[h->n] = (struct ag_hook){ fn, user, ++h->last_id, kind };
        if (handle)
            *handle = h->list[h->n].id;
        h->n++;
    }
    pthread_mutex_unlock(&hooks_lock);
    return rc;
}

int ag_hooks_remove(autograph_hook_handle handle)
{
    struct ag_hooks *h = &ag_sh.hooks;
    int rc = AUTOGRAPH_ERR_NOT_FOUND;
    pthread_mutex_lock(&hooks_lock);
    for (int i = 0; i < h->n && rc != AUTOGRAPH_OK; i++)
        if (h->list[i].id == handle && h->list[i].fn) {
            h->list[i].fn = NULL;
            compact();
            rc = AUTOGRAPH_OK;
        }
    pthread_mutex_unlock(&hooks_lock);
    return rc;
}

void ag_hooks_fire(enum ag_hook_kind kind, const autograph_graph_event *event)
{
    struct ag_hooks *h = &ag_sh.hooks;
    int n;
    pthread_mutex_lock(&hooks_lock);
    n = h->n;                        /* hooks added by a hook run from the next event */
    firing += n > 0;
    pthread_mutex_unlock(&hooks_lock);
    if (n == 0)
        return;
    ag_step_aside(1);
    for (int i = 0; i < n; i++) {
        struct ag_hook hook;
        pthread_mutex_lock(&hooks_lock);
        hook = h->list[i];           /* removed meanwhile: fn is NULL */
        pthread_mutex_unlock(&hooks_lock);
        if (hook.fn && hook.kind == kind)
            hook.fn(event, hook.user);
    }
    ag_step_aside(-1);
    pthread_mutex_lock(&hooks_lock);
    firing--;
    compact();
    pthread_mutex_unlock(&hooks_lock);
}
