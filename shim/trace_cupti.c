/* trace_cupti.c -- AUTOGRAPH_TRACE: collects CUPTI activity records and hands them to
 * the writer (trace_json.c) as CUPTI completes its buffers (trace_cupti.h).
 *
 * Started when the shim decides about its engine (the program's first recordable
 * call), before any graph is built.  libcupti is the one cupti_ids.c opens (never
 * linked).  Records: CONCURRENT_KERNEL (per graph node: graphId, graphNodeId,
 * channelID), MEMCPY, MEMSET, and the API records of the calls that submit such work,
 * enabled one by one, for the correlation flows and the submission times: driver
 * (cuLaunch*, cuGraphLaunch*, cuMemcpy*, cuMemset*) and runtime (cudaLaunch*, ...:
 * CUPTI writes no driver record for a driver call a runtime call makes).  The stream
 * order (analyzer/FORMAT.md 1d): CUDA_EVENT, SYNCHRONIZATION, STREAM, and CONTEXT (the
 * device of a context id), each optional: a kind CUPTI refuses is named in one line and
 * the trace lacks it.  STREAM and CONTEXT are enabled with cuptiActivityEnableAndDump
 * where there is one, so that streams created before tracing started (it starts at
 * the program's first recordable call) have their records too.  Memory stays
 * bounded: at most BUFFERS_MAX buffers of BUFFER_BYTES each, reused once written; when
 * all are in CUPTI's hands a request gets none and CUPTI drops records (counted,
 * reported at exit).
 * At exit (an atexit handler registered at start, so it runs before the CUDA runtime's
 * own teardown; the exit summary's destructor calls it again, a no-op): the engine
 * issues what it holds, the device is synchronized, CUPTI flushes everything, and the
 * file is completed.  Only the process that started the trace finishes it (a forked
 * child does not).  A context destroyed earlier (cudaDeviceReset) is flushed first,
 * from CUPTI's resource callback, where a subscriber can be had.
 * CUPTI takes one subscriber per process.  When another client (the PyTorch profiler,
 * Nsight Systems) already holds it, cuptiSubscribe says so and the tracer does not
 * start (enabling activity would take that client's records): one line says so and
 * points to AUTOGRAPH_GRAPH_DATA.  When the tracer takes it while a known client is
 * loaded (PyTorch), one line says that client will record no GPU work.
 */
#include "trace_cupti.h"
#include "trace_json.h"

#include "log.h"

#include <stddef.h>

#ifndef AG_HAVE_CUPTI
int ag_trace_start(const char *pattern)
{
    if (pattern)
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TRACE: this libautograph was built without the "
               "CUPTI headers (cupti.h); no trace");
    return 0;
}

void ag_trace_finish(void)
{
}

void ag_trace_program_graph(void *graph, void *exec)
{
    (void)graph, (void)exec;
}
#else
#include "backend_cuda_inspect.h"
#include "config.h"
#include "cupti_ids.h"
#include "driver.h"
#include "engine.h"
#include "report_introspect.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUFFER_BYTES (2u << 20)
#define BUFFERS_MAX 16
#define API_NAMES 2048

static struct {
    __typeof__(&cuptiActivityRegisterCallbacks) register_callbacks;
    __typeof__(&cuptiActivityEnable) enable;
    __typeof__(&cuptiActivityDisable) disable;
    __typeof__(&cuptiActivityFlushAll) flush_all;
    __typeof__(&cuptiActivityGetNextRecord) next_record;
    __typeof__(&cuptiActivityGetNumDroppedRecords) dropped;
    __typeof__(&cuptiGetTimestamp) timestamp;
    /* optional */
    __typeof__(&cuptiActivityEnableAndDump) enable_and_dump;
    __typeof__(&cuptiActivityEnableDriverApi) enable_driver_api;
    __typeof__(&cuptiActivityEnableRuntimeApi) enable_runtime_api;
    __typeof__(&cuptiGetCallbackName) callback_name;
    __typeof__(&cuptiSubscribe) subscribe;
    __typeof__(&cuptiEnableCallback) enable_callback;
    __typeof__(&cuptiGetVersion) version;
} cupti;

static struct {
    pthread_mutex_t lock;
    void *free[BUFFERS_MAX];
    unsigned nfree, allocated, completed;
    unsigned long long starved, dropped;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *trace_pattern;
static char trace_path[4096], graphs_path[4096 + 8];
static pid_t trace_pid;
static int tracing, finished;
static const char *api_names[2][API_NAMES];     /* [runtime][cbid] */
static unsigned char api_on[2][API_NAMES];
static unsigned char api_kind_on[2];             /* [runtime]: its API kind enabled */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
};

/* The stream-order kinds (optional); dump: the records of what exists already too. */
static const struct {
    CUpti_ActivityKind kind;
    const char *name;
    int dump;
} order_kinds[] = {
    { CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT", 1 },
    { CUPTI_ACTIVITY_KIND_STREAM, "STREAM", 1 },
    { CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT", 0 },
    { CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", 0 },
};
static unsigned char order_on[sizeof order_kinds / sizeof order_kinds[0]];

/* ---- libcupti's functions ---------------------------------------------------------- */

#define RESOLVE(h, field, name) (*(void **)&cupti.field = ag_call_real_dlsym(h, name))

/* 0, or -1 with one line saying what is missing. */
static int resolve(void)
{
    void *h = ag_cupti_library();
    if (h == NULL) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TRACE: CUPTI not found (libcupti.so.13, .12, .so on the "
               "library path or in /usr/local/cuda); no trace");
        return -1;
    }
    RESOLVE(h, enable_and_dump, "cuptiActivityEnableAndDump");
    RESOLVE(h, enable_driver_api, "cuptiActivityEnableDriverApi");
    RESOLVE(h, enable_runtime_api, "cuptiActivityEnableRuntimeApi");
    RESOLVE(h, callback_name, "cuptiGetCallbackName");
    RESOLVE(h, subscribe, "cuptiSubscribe");
    RESOLVE(h, enable_callback, "cuptiEnableCallback");
    RESOLVE(h, version, "cuptiGetVersion");
    if (!RESOLVE(h, register_callbacks, "cuptiActivityRegisterCallbacks") ||
        !RESOLVE(h, enable, "cuptiActivityEnable") || !RESOLVE(h, disable, "cuptiActivityDisable") ||
        !RESOLVE(h, flush_all, "cuptiActivityFlushAll") ||
        !RESOLVE(h, next_record, "cuptiActivityGetNextRecord") ||
        !RESOLVE(h, dropped, "cuptiActivityGetNumDroppedRecords") ||
        !RESOLVE(h, timestamp, "cuptiGetTimestamp")) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TRACE: libcupti lacks the activity API; no trace");
        return -1;
    }
    return 0;
}

/* ---- buffers ------------------------------------------------------------------------ */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    pthread_mutex_lock(&pool.lock);
    if (pool.nfree > 0)
        p = pool.free[--pool.nfree];
    else if (pool.allocated < BUFFERS_MAX && posix_memalign(&p, 8, BUFFER_BYTES) == 0)
        pool.allocated++;
    else
        pool.starved++, p = NULL;
    pthread_mutex_unlock(&pool.lock);
    *buffer = p;
    *size = p ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    size_t dropped = 0;
    (void)size;
    if (buffer)
        ag_trace_json_buffer(buffer, valid, cupti.next_record);
    if (cupti.dropped(ctx, stream, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    pthread_mutex_lock(&pool.lock);
    pool.dropped += dropped;
    pool.completed++;
    if (buffer)
        pool.free[pool.nfree++] = buffer;     /* one of ours: nfree < allocated */
    pthread_mutex_unlock(&pool.lock);
}

/* ---- what is recorded --------------------------------------------------------------- */

static const char *api_name(int runtime, uint32_t cbid)
{
    return cbid < API_NAMES ? api_names[runtime != 0][cbid] : NULL;
}

/* The API records of the calls that submit GPU work, in one domain (runtime: 1): the
 * domain's activity kind is enabled (CUPTI writes no API record without it) and every
 * other call of the domain filtered out one by one.  How many were enabled. */
static int enable_apis(int runtime)
{
    static const char *const prefixes[2][4] = {
        { "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset" },
        { "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset" },
    };
    CUpti_CallbackDomain domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    __typeof__(&cuptiActivityEnableDriverApi) enable =
        runtime ? cupti.enable_runtime_api : cupti.enable_driver_api;
    CUpti_ActivityKind kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    int n = 0;
    if (!cupti.callback_name || !enable || cupti.enable(kind) != CUPTI_SUCCESS)
        return 0;
    api_kind_on[runtime] = 1;
    for (uint32_t cbid = 1; cbid < API_NAMES; cbid++) {
        const char *name = NULL;
        int wanted = 0;
        if (cupti.callback_name(domain, cbid, &name) != CUPTI_SUCCESS || !name)
            continue;
        api_names[runtime][cbid] = name;
        for (size_t i = 0; i < sizeof prefixes[0] / sizeof prefixes[0][0]; i++)
            wanted |= strncmp(name, prefixes[runtime][i], strlen(prefixes[runtime][i])) == 0;
        api_on[runtime][cbid] = enable(cbid, (uint8_t)wanted) == CUPTI_SUCCESS && wanted;
        n += api_on[runtime][cbid];
    }
    return n;
}

/* The stream-order kinds; one line names those CUPTI refused (tracing goes on). */
static void enable_order_records(void)
{
    char refused[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof order_kinds / sizeof order_kinds[0]; i++) {
        CUpti_ActivityKind kind = order_kinds[i].kind;
        CUptiResult rc = order_kinds[i].dump && cupti.enable_and_dump ? cupti.enable_and_dump(kind)
                                                                        : cupti.enable(kind);
        order_on[i] = rc == CUPTI_SUCCESS;
        if (!order_on[i] && len < sizeof refused)
            len += (size_t)snprintf(refused + len, sizeof refused - len, " %s (error %d)",
                                    order_kinds[i].name, (int)rc);
    }
    if (len)
        ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE: CUPTI refused%s; the trace lacks those stream-order "
               "records (analyzer/FORMAT.md 1d)", refused);
}

/* Stops every kind of record this file enabled. */
static void disable_records(void)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        cupti.disable(kinds[i]);
    for (size_t i = 0; i < sizeof order_kinds / sizeof order_kinds[0]; i++)
        if (order_on[i])
            cupti.disable(order_kinds[i].kind);
    for (int runtime = 0; runtime < 2; runtime++)
        if (api_kind_on[runtime])
            cupti.disable(runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER);
    for (uint32_t cbid = 1; cbid < API_NAMES; cbid++) {
        if (api_on[0][cbid])
            cupti.enable_driver_api(cbid, 0);
        if (api_on[1][cbid])
            cupti.enable_runtime_api(cbid, 0);
    }
}

static void CUPTIAPI on_resource(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)user, (void)data;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* Libraries of CUPTI clients that would find CUPTI taken by the tracer. */
static const char *const cupti_clients[] = { "libtorch_cuda.so", "libkineto.so", NULL };

/* The one subscriber, taken before any activity is enabled: 1 when another client
 * holds CUPTI (no trace).  Flushes before a context goes (its records would go with
 * it), where CUPTI lets us. */
static int take_subscriber(void)
{
    CUpti_SubscriberHandle sub;
    CUptiResult rc;
    if (cupti.subscribe == NULL)
        return 0;
    rc = cupti.subscribe(&sub, on_resource, NULL);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE: CUPTI is taken by another client in this process "
               "(cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), no trace: "
               "AUTOGRAPH_GRAPH_DATA=DIR writes the program's graph data without CUPTI");
        return 1;
    }
    if (rc != CUPTI_SUCCESS)
        return 0;
    if (cupti.enable_callback)
        cupti.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    for (const char *const *lib = cupti_clients; *lib; lib++) {
        void *h = dlopen(*lib, RTLD_NOW | RTLD_NOLOAD);
        if (h == NULL)
            continue;
        dlclose(h);
        ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE takes CUPTI's one subscriber: a profiler of %s in "
               "this process (torch.profiler) records no GPU work; for its trace, unset "
               "AUTOGRAPH_TRACE and set AUTOGRAPH_GRAPH_DATA=DIR", *lib);
        break;
    }
    return 0;
}

/* 0, or CUPTI's error of the call that failed (*what names it). */
static int enable_records(const char **what)
{
    CUptiResult rc = cupti.register_callbacks(buffer_requested, buffer_completed);
    *what = "cuptiActivityRegisterCallbacks";
    for (size_t i = 0; rc == CUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++) {
        rc = cupti.enable(kinds[i]);
        *what = "cuptiActivityEnable";
    }
    return (int)rc;
}

/* ---- start and finish ------------------------------------------------------------- */

static void exit_handler(void)
{
    ag_trace_finish();
}

/* The file's head; 0, or -1 with one line. */
static int open_file(int flows)
{
    uint64_t origin = 0;
    uint32_t version = 0;
    struct ag_trace_setup setup = { .path = trace_path, .flows = flows, .api_name = api_name };
    int err;
    cupti.timestamp(&origin);
    if (cupti.version)
        cupti.version(&version);
    setup.origin_ns = origin;
    setup.cupti_version = version;
    if ((err = ag_trace_json_open(&setup)) == 0)
        return 0;
    ag_log(AG_LOG_ERROR, "AUTOGRAPH_TRACE=\"%.200s\" is not valid (cannot write %.200s: %s); "
           "no trace", trace_pattern, trace_path, strerror(err));
    return -1;
}

static void start(void)
{
    const char *what;
    int rc, apis;
    struct ag_trace_totals none = { 0 };
    ag_expand_pid(trace_path, sizeof trace_path, trace_pattern);
    if (resolve() != 0 || take_subscriber() != 0 ||
        open_file(cupti.callback_name && (cupti.enable_driver_api || cupti.enable_runtime_api)) != 0)
        return;
    if ((rc = enable_records(&what)) != 0) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TRACE: %s failed (CUPTI error %d; is another CUPTI "
               "client in the process?); the trace has no records", what, rc);
        disable_records();
        ag_trace_json_close(&none);
        return;
    }
    enable_order_records();
    apis = enable_apis(0) + enable_apis(1);
    snprintf(graphs_path, sizeof graphs_path, "%s.graphs", trace_path);
    ag_dump_graphs_setup(graphs_path);
    trace_pid = getpid();
    __atomic_store_n(&tracing, 1, __ATOMIC_RELEASE);
    atexit(exit_handler);
    ag_log(AG_LOG_INFO, "AUTOGRAPH_TRACE: tracing to %s (%d launch APIs traced), graphs in %s",
           trace_path, apis, graphs_path);
}

int ag_trace_start(const char *pattern)
{
    if (pattern == NULL)
        return 0;
    pthread_mutex_lock(&start_lock);
    if (!started) {
        started = 1;
        trace_pattern = pattern;
        start();
    }
    pthread_mutex_unlock(&start_lock);
    return __atomic_load_n(&tracing, __ATOMIC_ACQUIRE);
}

void ag_trace_program_graph(void *graph, void *exec)
{
    char *json = NULL;
    if (!__atomic_load_n(&tracing, __ATOMIC_ACQUIRE) || getpid() != trace_pid)
        return;
    if (ag_cuda_graph_data(graph, exec, &json) == 0)
        ag_dump_program_graph(json);
    free(json);
}

/* The program's work, and the engine's, has run: its records are complete. */
static void settle(void)
{
    CUresult (*sync)(void) = ag_real_fn(AG_EP_cuCtxSynchronize);
    ag_engine_flush(AG_FLUSH_EXIT);
    if (sync)
        sync();              /* no context on this thread: an error, ignored */
    cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    disable_records();
}

void ag_trace_finish(void)
{
    struct ag_trace_totals t = { 0 };
    int err;
    if (!__atomic_load_n(&tracing, __ATOMIC_ACQUIRE) || getpid() != trace_pid ||
        __atomic_exchange_n(&finished, 1, __ATOMIC_ACQ_REL))
        return;
    settle();
    pthread_mutex_lock(&pool.lock);
    t.dropped = pool.dropped;
    t.starved = pool.starved;
    t.buffers = pool.allocated;
    t.buffer_bytes = BUFFER_BYTES;
    t.completed = pool.completed;
    pthread_mutex_unlock(&pool.lock);
    err = ag_trace_json_close(&t);
    if (err)
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TRACE: writing %s failed (%s): the trace is incomplete",
               trace_path, strerror(err));
    if (t.dropped)
        ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE: CUPTI dropped %llu records (%llu buffer requests "
               "found all %d buffers of %u MiB busy)", t.dropped, t.starved, BUFFERS_MAX,
               BUFFER_BYTES >> 20);
    ag_log(AG_LOG_INFO, "AUTOGRAPH_TRACE: %llu records written to %s (%llu of the stream order)",
           t.records, trace_path, t.stream_order);
}
#endif
