/* cupti_ids.c -- CUPTI's ids of graphs, nodes and executable graphs, from a libcupti
 * opened on first use (cupti_ids.h).
 *
 * A libcupti the process has already loaded (a profiler, CUPTI injection, the
 * program itself) is preferred, so that the ids come from the instance that also
 * writes the activity records; otherwise the usual names and toolkit paths are
 * tried.  The id functions initialise CUPTI on their own in current releases; if
 * one answers CUPTI_ERROR_NOT_INITIALIZED, CUPTI is initialised by subscribing and
 * at once unsubscribing an empty callback, and the call is made again.
 */
#include "cupti_ids.h"

#include "driver.h"
#include "log.h"

#include <dlfcn.h>
#include <pthread.h>

#define CUPTI_ERROR_NOT_INITIALIZED_ 15

typedef void (*callback_fn)(void *user, int domain, unsigned cbid, const void *data);

static struct {
    int (*node_id)(void *node, uint64_t *id);
    int (*graph_id)(void *graph, uint32_t *id);
    int (*exec_id)(void *exec, uint32_t *id);
    int (*subscribe)(void **subscriber, callback_fn fn, void *user);
    int (*unsubscribe)(void *subscriber);
} cupti;
static void *cupti_handle;
static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static const char *const cupti_names[] = {
    "libcupti.so.13", "libcupti.so.12", "libcupti.so",
    "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
    "/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
    NULL,
};

static void *open_first(int flags)
{
    void *h;
    for (const char *const *n = cupti_names; *n; n++)
        if ((h = dlopen(*n, flags)) != NULL)
            return h;
    return NULL;
}

static void open_cupti(void)
{
    cupti_handle = open_first(RTLD_NOW | RTLD_NOLOAD);   /* the instance already loaded */
    if (cupti_handle == NULL)
        cupti_handle = open_first(RTLD_NOW | RTLD_LOCAL);
}

void *ag_cupti_library(void)
{
    pthread_once(&open_once, open_cupti);
    return cupti_handle;
}

static void load(void)
{
    void *h = ag_cupti_library();
    if (h) {
        *(void **)&cupti.node_id = ag_call_real_dlsym(h, "cuptiGetGraphNodeId");
        *(void **)&cupti.graph_id = ag_call_real_dlsym(h, "cuptiGetGraphId");
        *(void **)&cupti.exec_id = ag_call_real_dlsym(h, "cuptiGetGraphExecId");
        *(void **)&cupti.subscribe = ag_call_real_dlsym(h, "cuptiSubscribe");
        *(void **)&cupti.unsubscribe = ag_call_real_dlsym(h, "cuptiUnsubscribe");
    }
    if (h == NULL || !cupti.node_id || !cupti.graph_id || !cupti.exec_id) {
        ag_log(AG_LOG_WARN, "graph data: %s: tools_id, graph_id, node_id and exec_graph_id "
               "are null", h ? "libcupti lacks cuptiGetGraphNodeId/GraphId/GraphExecId"
                             : "CUPTI not found (libcupti.so.13, .12, .so on the library "
                               "path or in /usr/local/cuda)");
        cupti.node_id = NULL;
    }
}

int ag_cupti_ids_available(void)
{
    pthread_once(&load_once, load);
    return cupti.node_id != NULL;
}

static void ignore(void *user, int domain, unsigned cbid, const void *data)
{
    (void)user, (void)domain, (void)cbid, (void)data;
}

static void initialise(void)
{
    void *subscriber = NULL;
    if (cupti.subscribe && cupti.unsubscribe && cupti.subscribe(&subscriber, ignore, NULL) == 0)
        cupti.unsubscribe(subscriber);
    ag_log(AG_LOG_DEBUG, "graph data: CUPTI was not initialised; initialised it");
}

/* CALL(expr): expr, again after initialising CUPTI if it was not. */
#define CALL(expr)                                                             \
    do {                                                                       \
        int rc_;                                                               \
        if (!ag_cupti_ids_available())                                         \
            return -1;                                                         \
        if ((rc_ = (expr)) == CUPTI_ERROR_NOT_INITIALIZED_) {                  \
            pthread_once(&init_once, initialise);                              \
            rc_ = (expr);                                                      \
        }                                                                      \
        return rc_;                                                            \
    } while (0)

int ag_cupti_node_id(void *node, uint64_t *id)
{
    CALL(cupti.node_id(node, id));
}

int ag_cupti_graph_id(void *graph, uint32_t *id)
{
    CALL(cupti.graph_id(graph, id));
}

int ag_cupti_exec_id(void *exec, uint32_t *id)
{
    CALL(cupti.exec_id(exec, id));
}
