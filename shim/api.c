/* api.c -- the public functions of include/autograph.h that the shim exports.
 *
 * Each one checks what it is asked, refuses inside a hook what a hook may not do
 * (anything that issues work, or drops or rebuilds graphs: AUTOGRAPH_ERR_IN_HOOK),
 * takes the engine lock (a hook's thread holds it already) and asks the engine
 * (report_introspect.c, engine_hooks.c).  With AUTOGRAPH=off every function but
 * autograph_version answers AUTOGRAPH_ERR_OFF.  Before the engine has started (the
 * program's first recordable CUDA call) there are no graphs yet; hooks registered
 * then run from the first graph on.
 */
#include <autograph.h>

#include "config.h"
#include "engine.h"
#include "report_introspect.h"
#include "export.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* `call` (an int expression) with the engine lock held. */
#define LOCKED(call)                                                           \
    __extension__({                                                            \
        int taken_ = ag_introspect_lock();                                     \
        int rc_ = (call);                                                      \
        ag_introspect_unlock(taken_);                                          \
        rc_;                                                                   \
    })

/* AUTOGRAPH_OK if the call may go on. */
static int refused(int allowed_in_hook)
{
    if (ag_config()->mode != AG_MODE_ON)
        return AUTOGRAPH_ERR_OFF;
    if (!allowed_in_hook && ag_in_hook())
        return AUTOGRAPH_ERR_IN_HOOK;
    return AUTOGRAPH_OK;
}

AG_EXPORT const char *autograph_version(void)
{
    return AUTOGRAPH_VERSION_STRING;
}

static int set_paused(int paused)
{
    int taken, rc = refused(0);
    if (rc != AUTOGRAPH_OK)
        return rc;
    taken = ag_introspect_lock();
    ag_introspect_pause(AG_PAUSE_API, paused);
    ag_introspect_unlock(taken);
    return AUTOGRAPH_OK;
}

AG_EXPORT int autograph_enable(void)
{
    return set_paused(0);
}

AG_EXPORT int autograph_disable(void)
{
    return set_paused(1);
}

AG_EXPORT int autograph_flush(void)
{
    int rc = refused(0);
    if (rc == AUTOGRAPH_OK)
        ag_engine_flush(AG_FLUSH_API);
    return rc;
}

AG_EXPORT int autograph_reset(void)
{
    int rc = refused(0);
    if (rc == AUTOGRAPH_OK)
        ag_engine_drop_graphs("autograph_reset()");
    return rc;
}

AG_EXPORT int autograph_list_graphs(autograph_graph_info *out, int max)
{
    int rc = refused(1);
    return rc != AUTOGRAPH_OK ? rc : LOCKED(ag_introspect_list(out, max));
}

AG_EXPORT int autograph_graph_exec(unsigned template_id, int chunk, int variant, void **exec)
{
    int rc = refused(1);
    return rc != AUTOGRAPH_OK ? rc : LOCKED(ag_introspect_exec(template_id, chunk, variant, exec));
}

AG_EXPORT int autograph_instantiate(unsigned template_id)
{
    int rc = refused(0);
    return rc != AUTOGRAPH_OK ? rc : LOCKED(ag_introspect_instantiate(template_id));
}

AG_EXPORT int autograph_graph_data(unsigned template_id, int chunk, int variant, char *buf,
                                   size_t size)
{
    char *json = NULL;
    size_t len;
    int rc = refused(1);
    if (rc == AUTOGRAPH_OK && buf == NULL && size > 0)
        rc = AUTOGRAPH_ERR_INVALID;
    if (rc == AUTOGRAPH_OK)
        rc = LOCKED(ag_introspect_graph_data(template_id, chunk, variant, &json));
    if (rc != AUTOGRAPH_OK)
        return rc;
    len = strlen(json);
    if (size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(buf, json, n);
        buf[n] = '\0';
    }
    free(json);
    return len > INT_MAX ? AUTOGRAPH_ERR_NO_MEMORY : (int)len;
}

AG_EXPORT int autograph_debug_dump(unsigned template_id, int chunk, const char *path, int verbose)
{
    int rc = refused(1);
    return rc != AUTOGRAPH_OK ? rc : LOCKED(ag_introspect_dump(template_id, chunk, path, verbose));
}

static int add_hook(enum ag_hook_kind kind, autograph_hook_fn fn, void *user,
                    autograph_hook_handle *handle)
{
    int rc = refused(1);
    return rc != AUTOGRAPH_OK ? rc : LOCKED(ag_hooks_add(kind, fn, user, handle));
}

AG_EXPORT int autograph_register_capture_end_hook(autograph_hook_fn fn, void *user,
                                                  autograph_hook_handle *handle)
{
    return add_hook(AG_HOOK_CAPTURE_END, fn, user, handle);
}

AG_EXPORT int autograph_register_post_instantiate_hook(autograph_hook_fn fn, void *user,
                                                       autograph_hook_handle *handle)
{
    return add_hook(AG_HOOK_POST_INSTANTIATE, fn, user, handle);
}

AG_EXPORT int autograph_remove_hook(autograph_hook_handle handle)
{
    int rc = refused(1);
    return rc != AUTOGRAPH_OK ? rc : LOCKED(ag_hooks_remove(handle));
}
