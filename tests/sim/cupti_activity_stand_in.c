/* cupti_activity_stand_in.c -- the activity half of build/sim/libcupti.so.13: enough of
 * CUPTI's activity API for the shim's tracer (shim/trace_cupti.c) to run on the
 * simulator, with records in the layouts of this toolkit's cupti_activity.h
 * (CUpti_ActivityKernel10, Memcpy6, Memset4, API, CudaEvent2, Synchronization2,
 * Stream, Context3).
 *
 * The simulator reports every kernel, copy, memset, submitting driver call and the
 * stream order (event records, synchronizations, streams, contexts) as it executes
 * (sim_activity.h); enabled kinds are appended to the buffer the client's request
 * callback gave, which goes back through the completion callback when the next record
 * would not fit, or at cuptiActivityFlushAll.  A record that finds no buffer is dropped
 * and counted (cuptiActivityGetNumDroppedRecords, reset on read).
 * cuptiActivityEnableAndDump also has the simulator report the contexts and streams
 * that exist.  API records: cuptiGetCallbackName names the simulator's cbids
 * (SIM_CBID_*) as driver calls (cu*) and as runtime calls (cuda*);
 * as CUPTI does: cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER / _RUNTIME) turns them
 * on, and cuptiActivityEnableDriverApi / EnableRuntimeApi filter them one by one (a
 * call turned off gives no record; turning one on without its kind gives none).  They come
 * as driver records, or with SIM_CUPTI_API=runtime as runtime records (a runtime
 * program: CUPTI writes no record for the driver calls a runtime call makes).
 * SIM_CUPTI_REFUSE=<kind>,... : cuptiActivityEnable* refuse those kinds (numbers of
 * CUpti_ActivityKind) with CUPTI_ERROR_NOT_COMPATIBLE.
 * Subscribers: one at a time (cuptiSubscribe, cuptiUnsubscribe); cuptiEnableCallback
 * accepts and never calls back.  SIM_CUPTI_TAKEN=1: another client holds CUPTI, every
 * cuptiSubscribe answers CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
 * Not here: callbacks, anything else.
 */
#if defined(__has_include)
#if __has_include(<cupti.h>)
#define SIM_HAVE_CUPTI 1
#endif
#endif

#ifdef SIM_HAVE_CUPTI
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_activity.h"

#define STAND_IN __attribute__((visibility("default")))

int sim_tools_id(int what, const void *handle, unsigned long long *id);

static struct {
    pthread_mutex_t lock;
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    uint8_t *buf;
    size_t size, used;
    unsigned char kinds[64], apis_off[2][SIM_CBID_COUNT];  /* [runtime][cbid]: filtered out */
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };
static size_t dropped;

static const char *const api_names[2][SIM_CBID_COUNT] = {
    { [SIM_CBID_LAUNCH] = "cuLaunchKernel", [SIM_CBID_GRAPH_LAUNCH] = "cuGraphLaunch",
      [SIM_CBID_MEMCPY] = "cuMemcpyAsync", [SIM_CBID_MEMSET] = "cuMemsetD32Async",
      [SIM_CBID_SYNC] = "cuStreamSynchronize" },
    { [SIM_CBID_LAUNCH] = "cudaLaunchKernel_v7000", [SIM_CBID_GRAPH_LAUNCH] = "cudaGraphLaunch_v10000",
      [SIM_CBID_MEMCPY] = "cudaMemcpyAsync_v3020", [SIM_CBID_MEMSET] = "cudaMemsetAsync_v3020",
      [SIM_CBID_SYNC] = "cudaStreamSynchronize_v3020" },
};

/* SIM_CUPTI_API=runtime: API records are runtime records. */
static int runtime_apis(void)
{
    static int state;               /* 0 unread, 1 runtime, -1 driver */
    const char *env;
    if (!state) {
        env = getenv("SIM_CUPTI_API");
        state = env && strcmp(env, "runtime") == 0 ? 1 : -1;
    }
    return state > 0;
}

/* SIM_CUPTI_REFUSE names `kind`. */
static int refused(CUpti_ActivityKind kind)
{
    const char *p = getenv("SIM_CUPTI_REFUSE");
    char *end;
    while (p && *p) {
        if (strtol(p, &end, 10) == (long)kind && end != p)
            return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL: case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER: case CUPTI_ACTIVITY_KIND_RUNTIME:
        return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_STREAM:
        return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        return sizeof(CUpti_ActivityContext3);
    default:
        return 0;
    }
}

/* ---- records --------------------------------------------------------------------- */

static void fill_kernel(CUpti_ActivityKernel10 *k, const struct sim_activity *a)
{
    k->kind = st.kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                                                              : CUPTI_ACTIVITY_KIND_KERNEL;
    k->start = a->start, k->end = a->end, k->completed = a->end;
    k->deviceId = a->device, k->contextId = a->context, k->streamId = a->stream;
    k->gridX = (int32_t)a->grid[0], k->gridY = (int32_t)a->grid[1], k->gridZ = (int32_t)a->grid[2];
    k->blockX = (int32_t)a->block[0], k->blockY = (int32_t)a->block[1];
    k->blockZ = (int32_t)a->block[2];
    k->correlationId = a->correlation;
    k->name = a->name;
    k->graphNodeId = a->graph_node_id, k->graphId = a->graph_id;
    k->channelID = a->channel, k->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
}

static void fill_memcpy(CUpti_ActivityMemcpy6 *m, const struct sim_activity *a)
{
    m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m->copyKind = (uint8_t)a->copy_kind, m->bytes = a->bytes;
    m->start = a->start, m->end = a->end;
    m->deviceId = a->device, m->contextId = a->context, m->streamId = a->stream;
    m->correlationId = a->correlation;
    m->graphNodeId = a->graph_node_id, m->graphId = a->graph_id;
    m->channelID = a->channel, m->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    m->copyCount = 1;
}

static void fill_memset(CUpti_ActivityMemset4 *m, const struct sim_activity *a)
{
    m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m->value = a->value, m->bytes = a->bytes;
    m->start = a->start, m->end = a->end;
    m->deviceId = a->device, m->contextId = a->context, m->streamId = a->stream;
    m->correlationId = a->correlation;
    m->graphNodeId = a->graph_node_id, m->graphId = a->graph_id;
    m->channelID = a->channel, m->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
}

static void fill_api(CUpti_ActivityAPI *r, const struct sim_activity *a)
{
    r->kind = runtime_apis() ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    r->cbid = a->cbid;
    r->start = a->start, r->end = a->end;
    r->processId = a->process, r->threadId = a->thread;
    r->correlationId = a->correlation;
}

static void fill_event(CUpti_ActivityCudaEvent2 *r, const struct sim_activity *a)
{
    r->kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
    r->correlationId = a->correlation;
    r->contextId = a->context, r->streamId = a->stream, r->deviceId = a->device;
    r->eventId = a->event;
    r->cudaEventSyncId = a->sync_id;
}

static void fill_sync(CUpti_ActivitySynchronization2 *r, const struct sim_activity *a)
{
    r->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    r->type = (CUpti_ActivitySynchronizationType)a->sync_type;
    r->start = a->start, r->end = a->end;
    r->correlationId = a->correlation;
    r->contextId = a->context, r->streamId = a->stream, r->cudaEventId = a->event;
    r->cudaEventSyncId = a->sync_id;
}

static void fill_stream(CUpti_ActivityStream *r, const struct sim_activity *a)
{
    r->kind = CUPTI_ACTIVITY_KIND_STREAM;
    r->contextId = a->context, r->streamId = a->stream;
    r->priority = (uint32_t)a->priority;
    r->flag = (CUpti_ActivityStreamFlag)a->stream_flag;
    r->correlationId = a->correlation;
}

static void fill_context(CUpti_ActivityContext3 *r, const struct sim_activity *a)
{
    r->kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    r->contextId = a->context, r->deviceId = a->device;
    r->computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
}

static void fill(void *r, const struct sim_activity *a)
{
    switch (a->kind) {
    case SIM_ACT_KERNEL: fill_kernel(r, a); break;
    case SIM_ACT_MEMCPY: fill_memcpy(r, a); break;
    case SIM_ACT_MEMSET: fill_memset(r, a); break;
    case SIM_ACT_API: fill_api(r, a); break;
    case SIM_ACT_EVENT_RECORD: fill_event(r, a); break;
    case SIM_ACT_SYNC: fill_sync(r, a); break;
    case SIM_ACT_STREAM: fill_stream(r, a); break;
    default: fill_context(r, a);
    }
}

/* An API activity's record kind: runtime or driver, where that call is enabled. */
static CUpti_ActivityKind api_kind(uint32_t cbid)
{
    int rt = runtime_apis();
    if (cbid >= SIM_CBID_COUNT)
        return 0;
    if (rt && st.kinds[CUPTI_ACTIVITY_KIND_RUNTIME] && !st.apis_off[1][cbid])
        return CUPTI_ACTIVITY_KIND_RUNTIME;
    return !rt && st.kinds[CUPTI_ACTIVITY_KIND_DRIVER] && !st.apis_off[0][cbid]
               ? CUPTI_ACTIVITY_KIND_DRIVER : 0;
}

/* The record kind of an activity, or 0 when that kind is not enabled. */
static CUpti_ActivityKind wanted(const struct sim_activity *a)
{
    static const CUpti_ActivityKind order[] = {
        [SIM_ACT_EVENT_RECORD] = CUPTI_ACTIVITY_KIND_CUDA_EVENT,
        [SIM_ACT_SYNC] = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        [SIM_ACT_STREAM] = CUPTI_ACTIVITY_KIND_STREAM,
        [SIM_ACT_CONTEXT] = CUPTI_ACTIVITY_KIND_CONTEXT,
    };
    if (a->kind >= SIM_ACT_EVENT_RECORD)
        return st.kinds[order[a->kind]] ? order[a->kind] : 0;
    switch (a->kind) {
    case SIM_ACT_KERNEL:
        return st.kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
               : st.kinds[CUPTI_ACTIVITY_KIND_KERNEL]          ? CUPTI_ACTIVITY_KIND_KERNEL : 0;
    case SIM_ACT_MEMCPY:
        return st.kinds[CUPTI_ACTIVITY_KIND_MEMCPY] ? CUPTI_ACTIVITY_KIND_MEMCPY : 0;
    case SIM_ACT_MEMSET:
        return st.kinds[CUPTI_ACTIVITY_KIND_MEMSET] ? CUPTI_ACTIVITY_KIND_MEMSET : 0;
    default:
        return api_kind(a->cbid);
    }
}

/* ---- buffers ---------------------------------------------------------------------- */

/* Takes the current buffer out (under the lock), for completion outside it. */
static uint8_t *detach(size_t *size, size_t *used)
{
    uint8_t *b = st.buf;
    *size = st.size, *used = st.used;
    st.buf = NULL, st.size = st.used = 0;
    return b;
}

static void complete(uint8_t *b, size_t size, size_t used)
{
    if (b && st.complete)
        st.complete(NULL, 0, b, size, used);
}

/* Room for n bytes in the current buffer (asking the client for one); 0: none. */
static int room(size_t n)
{
    size_t max = 0;
    if (st.buf == NULL && st.request)
        st.request(&st.buf, &st.size, &max);
    if (st.buf == NULL || st.size < n)
        st.buf = NULL;
    return st.buf && st.size - st.used >= n;
}

static void on_activity(const struct sim_activity *a)
{
    CUpti_ActivityKind kind = wanted(a);
    size_t n = record_size(kind), size = 0, used = 0;
    uint8_t *full = NULL;
    void *r;
    if (kind == 0)
        return;
    pthread_mutex_lock(&st.lock);
    if (st.buf && st.size - st.used < n)
        full = detach(&size, &used);
    if (!room(n)) {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
    } else {
        r = memset(st.buf + st.used, 0, n);
        st.used += n;
        fill(r, a);
    }
    pthread_mutex_unlock(&st.lock);
    complete(full, size, used);
}

/* ---- the API --------------------------------------------------------------------- */

STAND_IN CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc done)
{
    if (!request || !done)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&st.lock);
    st.request = request, st.complete = done;
    pthread_mutex_unlock(&st.lock);
    sim_activity_sink(on_activity);
    return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, unsigned char on)
{
    if (record_size(kind) == 0 || (on && refused(kind)))
        return CUPTI_ERROR_NOT_COMPATIBLE;
    pthread_mutex_lock(&st.lock);
    st.kinds[kind] = on;
    pthread_mutex_unlock(&st.lock);
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    return set_kind(kind, 1);
}

STAND_IN CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    return set_kind(kind, 0);
}

/* Enables the kind and has the simulator report what exists (contexts, streams). */
STAND_IN CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
    unsigned long long unused;
    CUptiResult rc = set_kind(kind, 1);
    if (rc == CUPTI_SUCCESS && (kind == CUPTI_ACTIVITY_KIND_STREAM ||
                                kind == CUPTI_ACTIVITY_KIND_CONTEXT))
        sim_tools_id(SIM_TOOLS_DUMP, NULL, &unused);
    return rc;
}

static CUptiResult enable_api(int runtime, CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= SIM_CBID_COUNT || api_names[runtime][cbid] == NULL)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&st.lock);
    st.apis_off[runtime][cbid] = enable == 0;
    pthread_mutex_unlock(&st.lock);
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(0, cbid, enable);
}

STAND_IN CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(1, cbid, enable);
}

STAND_IN CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char **name)
{
    int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (!name || (domain != CUPTI_CB_DOMAIN_DRIVER_API && !runtime) || cbid >= SIM_CBID_COUNT ||
        !api_names[runtime][cbid])
        return CUPTI_ERROR_INVALID_PARAMETER;
    *name = api_names[runtime][cbid];
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    size_t size, used;
    uint8_t *b;
    (void)flag;
    pthread_mutex_lock(&st.lock);
    b = st.used ? detach(&size, &used) : NULL;
    pthread_mutex_unlock(&st.lock);
    complete(b, size, used);
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                                CUpti_Activity **record)
{
    uint8_t *p;
    size_t n;
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p = *record ? (uint8_t *)*record + record_size((*record)->kind) : buffer;
    if (p + sizeof(CUpti_Activity) > buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    if ((n = record_size(((CUpti_Activity *)p)->kind)) == 0)
        return CUPTI_ERROR_INVALID_KIND;
    if (p + n > buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)p;
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream,
                                                       size_t *count)
{
    (void)context, (void)stream;
    if (!count)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *count = __atomic_exchange_n(&dropped, 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    unsigned long long ns = 0;
    if (!timestamp)
        return CUPTI_ERROR_INVALID_PARAMETER;
    sim_tools_id(SIM_TOOLS_CLOCK, NULL, &ns);
    *timestamp = ns;
    return CUPTI_SUCCESS;
}

static int subscribed;          /* atomic */

STAND_IN CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                    CUpti_CallbackFunc callback, void *userdata)
{
    const char *taken = getenv("SIM_CUPTI_TAKEN");
    (void)callback, (void)userdata;
    if (!subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if ((taken && strcmp(taken, "1") == 0) || __atomic_exchange_n(&subscribed, 1, __ATOMIC_ACQ_REL))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    *subscriber = (CUpti_SubscriberHandle)&subscribed;
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    if (subscriber != (CUpti_SubscriberHandle)&subscribed)
        return CUPTI_ERROR_INVALID_PARAMETER;
    __atomic_store_n(&subscribed, 0, __ATOMIC_RELEASE);
    return CUPTI_SUCCESS;
}

STAND_IN CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)enable, (void)domain, (void)cbid;
    return subscriber == (CUpti_SubscriberHandle)&subscribed ? CUPTI_SUCCESS
                                                              : CUPTI_ERROR_INVALID_PARAMETER;
}
#endif
