/* plugin.c -- AUTOGRAPH_PLUGIN=path.so: a library of the user's, loaded once when the
 * shim decides whether its engine runs (the program's first recordable CUDA call),
 * before any graph is built.  Its autograph_plugin_init() (include/autograph.h) is
 * called then; it typically registers hooks through the public functions, which it
 * reaches as it would from a program (its undefined autograph_* symbols bind to the
 * preloaded shim, or it uses AUTOGRAPH_OPTIONAL).  A library that cannot be loaded,
 * lacks the function, or whose function returns nonzero gives one line on stderr
 * (whatever AUTOGRAPH_LOG says) and the program goes on without it.
 */
#include "plugin.h"

#include "log.h"

#include <autograph.h>
#include <dlfcn.h>
#include <pthread.h>

#include "driver.h"

static const char *plugin_path;
static pthread_once_t plugin_once = PTHREAD_ONCE_INIT;

static void load_plugin(void)
{
    void *h = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
    int (*init)(void);
    int rc;

    if (h == NULL) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_PLUGIN=\"%.200s\" cannot be loaded (%s); no plugin",
               plugin_path, dlerror());
        return;
    }
    *(void **)&init = ag_call_real_dlsym(h, AUTOGRAPH_PLUGIN_INIT);
    if (init == NULL) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_PLUGIN=\"%.200s\" has no %s(); no plugin",
               plugin_path, AUTOGRAPH_PLUGIN_INIT);
        dlclose(h);
        return;
    }
    rc = init();
    if (rc != 0)
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_PLUGIN=\"%.200s\": %s() returned %d", plugin_path,
               AUTOGRAPH_PLUGIN_INIT, rc);
    else
        ag_log(AG_LOG_INFO, "plugin %s loaded", plugin_path);
}

void ag_plugin_start(const char *path)
{
    if (path == NULL || path[0] == '\0')
        return;
    plugin_path = path;
    pthread_once(&plugin_once, load_plugin);
}
