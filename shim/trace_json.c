/* trace_json.c -- AUTOGRAPH_TRACE's writer: CUPTI activity records as Chrome trace
 * events (analyzer/FORMAT.md, sections 1c and 1d), appended to the file buffer by buffer.
 *
 *   kernel (CUpti_ActivityKernel10)  "cat":"kernel", pid = device, tid = stream, args
 *                                    device, stream, correlation, graph id / graph
 *                                    node id (graph launches only), channel, channel
 *                                    type, grid, block
 *   memcpy (CUpti_ActivityMemcpy6)   "cat":"gpu_memcpy", the same args but grid/block,
 *   memset (CUpti_ActivityMemset4)   "cat":"gpu_memset"  plus bytes
 *   driver / runtime API             "cat":"cuda_driver" / "cuda_runtime" on pid =
 *     (CUpti_ActivityAPI)            process, tid = thread, and an ac2g flow from it to
 *                                    its GPU records
 * Stream order (section 1d), "ph":"i" at ts 0 when CUPTI gives no time:
 *   event record (CudaEvent2)        "cat":"cuda_event_record", pid = device, tid = stream
 *   stream wait (Synchronization2)   "cat":"cuda_sync", "stream wait event", pid = device
 *   host sync (Synchronization2)     "cat":"cuda_sync", "stream / event / context
 *                                    synchronize", pid = process, tid 0, ts = the
 *                                    call's start (so for a wait)
 *   stream (CUpti_ActivityStream)    "ph":"M" "stream_info": created streams only (not
 *                                    the NULL stream)
 *   context (CUpti_ActivityContext3) not written: names the device of a context id (so
 *                                    do GPU and event records), for the records that
 *                                    carry only a context
 * ts and dur are microseconds with exactly 3 decimals (exact nanoseconds), relative to
 * the CUPTI timestamp taken when tracing started.  GPU and API records without
 * timestamps are counted, not written.  The file is written with write(2) from a 64 KiB
 * buffer under one lock (CUPTI's worker thread and the exit path both deliver), never
 * through stdio: a forked child that exits cannot flush the parent's half-written buffer.
 */
#include "trace_json.h"
#include "json_escape.h"

#ifdef AG_HAVE_CUPTI
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define OUT_SIZE (64u << 10)
#define CONTEXTS_MAX 64

static struct {
    pthread_mutex_t lock;
    int fd, error;
    size_t len;
    long pid;
    struct ag_trace_setup setup;
    unsigned long long records, stream_order, untimed, skipped, device_unknown,
        devices_named;
    unsigned ncontexts;
    struct { uint32_t id, device; } contexts[CONTEXTS_MAX];
    char buf[OUT_SIZE];
} out = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* ---- the output buffer ------------------------------------------------------------ */

static void drain(void)
{
    size_t done = 0;
    while (done < out.len && !out.error) {
        ssize_t n = write(out.fd, out.buf + done, out.len - done);
        if (n < 0 && errno != EINTR)
            out.error = errno;
        else if (n > 0)
            done += (size_t)n;
    }
    out.len = 0;
}

static void put_bytes(const char *s, size_t n)
{
    while (n > 0) {
        size_t room = OUT_SIZE - out.len, k = n < room ? n : room;
        memcpy(out.buf + out.len, s, k);
        out.len += k;
        s += k;
        n -= k;
        if (out.len == OUT_SIZE)
            drain();
    }
}

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        put_bytes(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void put_escaped(void *ctx, const char *bytes, size_t n)
{
    (void)ctx;
    put_bytes(bytes, n);
}

/* A JSON string (NULL: the empty one). */
static void put_string(const char *s)
{
    put_bytes("\"", 1);
    if (s)
        ag_json_escape(s, put_escaped, NULL);
    put_bytes("\"", 1);
}

/* ,"key":<ns as microseconds with 3 decimals> */
static void put_us(const char *key, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)-(ns + 1) + 1 : (uint64_t)ns;
    put(",\"%s\":%s%llu.%03llu", key, ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
        (unsigned long long)(a % 1000));
}

/* ,"ts":...,"dur":... of a record's [start, end] */
static void put_span(uint64_t start, uint64_t end)
{
    put_us("ts", (int64_t)(start - out.setup.origin_ns));
    put_us("dur", end > start ? (int64_t)(end - start) : 0);
}

/* ---- events ------------------------------------------------------------------------ */

/* The device of context `id` (from CONTEXT, GPU and event records) is `device`. */
static void note_context(uint32_t id, uint32_t device)
{
    for (unsigned i = 0; i < out.ncontexts; i++)
        if (out.contexts[i].id == id) {
            out.contexts[i].device = device;
            return;
        }
    if (out.ncontexts < CONTEXTS_MAX) {
        out.contexts[out.ncontexts].id = id;
        out.contexts[out.ncontexts++].device = device;
    }
}

/* The device of context `id`: 0 (counted) when no record named it. */
static uint32_t context_device(uint32_t id)
{
    for (unsigned i = 0; i < out.ncontexts; i++)
        if (out.contexts[i].id == id)
            return out.contexts[i].device;
    out.device_unknown++;
    return 0;
}

static void name_device(uint32_t device)
{
    if (device >= 64 || (out.devices_named & (1ull << device)))
        return;
    out.devices_named |= 1ull << device;
    put(",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":\"GPU %u\"}}",
        device, device);
}

/* The start of a GPU record: ph, cat, name, pid, tid, ts, dur and the common args. */
static void gpu_head(const char *cat, const char *name, uint32_t device, uint32_t stream,
                     uint64_t start, uint64_t end, uint32_t correlation)
{
    name_device(device);
    put(",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
    put_string(name);
    put(",\"pid\":%u,\"tid\":%u", device, stream);
    put_span(start, end);
    put(",\"args\":{\"device\":%u,\"stream\":%u,\"correlation\":%u", device, stream,
        correlation);
}

/* The graph and channel args, the end of the event, and its flow from the API call. */
static void gpu_tail(uint32_t graph_id, uint64_t node_id, uint32_t channel, int channel_type,
                     uint32_t device, uint32_t stream, uint64_t start, uint32_t correlation)
{
    if (graph_id != 0)
        put(",\"graph id\":%u,\"graph node id\":%llu", graph_id, (unsigned long long)node_id);
    put(",\"channel\":%u,\"channel type\":%d}}", channel, channel_type);
    if (out.setup.flows && correlation != 0) {
        put(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"launch\",\"id\":%u,"
            "\"pid\":%u,\"tid\":%u", correlation, device, stream);
        put_us("ts", (int64_t)(start - out.setup.origin_ns));
        put("}");
    }
}

static void kernel_event(const CUpti_ActivityKernel10 *k)
{
    note_context(k->contextId, k->deviceId);
    gpu_head("kernel", k->name, k->deviceId, k->streamId, k->start, k->end, k->correlationId);
    put(",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]", k->gridX, k->gridY, k->gridZ, k->blockX,
        k->blockY, k->blockZ);
    gpu_tail(k->graphId, k->graphNodeId, k->channelID, (int)k->channelType, k->deviceId,
             k->streamId, k->start, k->correlationId);
}

/* "Memcpy HtoD" ... by CUpti_ActivityMemcpyKind (1..10) */
static const char *copy_name(unsigned kind)
{
    static const char *const names[] = {
        "Memcpy", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA", "Memcpy AtoH", "Memcpy AtoA",
        "Memcpy AtoD", "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP",
    };
    return names[kind < sizeof names / sizeof names[0] ? kind : 0];
}

static void memcpy_event(const CUpti_ActivityMemcpy6 *m)
{
    note_context(m->contextId, m->deviceId);
    gpu_head("gpu_memcpy", copy_name(m->copyKind), m->deviceId, m->streamId, m->start, m->end,
             m->correlationId);
    put(",\"bytes\":%llu", (unsigned long long)m->bytes);
    gpu_tail(m->graphId, m->graphNodeId, m->channelID, (int)m->channelType, m->deviceId,
             m->streamId, m->start, m->correlationId);
}

static void memset_event(const CUpti_ActivityMemset4 *m)
{
    note_context(m->contextId, m->deviceId);
    gpu_head("gpu_memset", "Memset", m->deviceId, m->streamId, m->start, m->end,
             m->correlationId);
    put(",\"bytes\":%llu,\"value\":%u", (unsigned long long)m->bytes, m->value);
    gpu_tail(m->graphId, m->graphNodeId, m->channelID, (int)m->channelType, m->deviceId,
             m->streamId, m->start, m->correlationId);
}

static void api_event(const CUpti_ActivityAPI *a)
{
    int runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
    const char *name = out.setup.api_name ? out.setup.api_name(runtime, a->cbid) : NULL;
    put(",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", runtime ? "cuda_runtime" : "cuda_driver");
    put_string(name ? name : "driver call");
    put(",\"pid\":%u,\"tid\":%u", a->processId, a->threadId);
    put_span(a->start, a->end);
    put(",\"args\":{\"correlation\":%u,\"cbid\":%u,\"result\":%d}}", a->correlationId, a->cbid,
        (int)a->returnValue);
    put(",\n{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"launch\",\"id\":%u,\"pid\":%u,\"tid\":%u",
        a->correlationId, a->processId, a->threadId);
    put_us("ts", (int64_t)(a->start - out.setup.origin_ns));
    put("}");
}

/* start and end of a record this file writes (0, 0: not one of them) */
static void record_times(const CUpti_Activity *r, uint64_t *start, uint64_t *end)
{
    const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
    const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)r;
    const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
    const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)r;
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: case CUPTI_ACTIVITY_KIND_KERNEL:
        *start = k->start, *end = k->end;
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        *start = c->start, *end = c->end;
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        *start = m->start, *end = m->end;
        break;
    case CUPTI_ACTIVITY_KIND_DRIVER: case CUPTI_ACTIVITY_KIND_RUNTIME:
        *start = a->start, *end = a->end;
        break;
    default:
        *start = *end = 0;
    }
}

/* ---- stream order (section 1d) ------------------------------------------------------ */

/* CUPTI's "not applicable" (CUPTI_SYNCHRONIZATION_INVALID_VALUE, in 32 or 64 bits) */
static int not_applicable(uint64_t v)
{
    return v == (uint64_t)CUPTI_SYNCHRONIZATION_INVALID_VALUE || v == UINT64_MAX;
}

/* ,"key":v unless v is n/a */
static void put_id(const char *key, uint64_t v)
{
    if (!not_applicable(v))
        put(",\"%s\":%llu", key, (unsigned long long)v);
}

/* The start of an instant event: ph, cat, name, pid, tid, ts (t 0: none) and args'
 * "correlation" (the caller adds its args and closes both objects). */
static void instant_head(const char *cat, const char *name, long pid, uint32_t tid, uint64_t t,
                         uint32_t correlation)
{
    out.records++, out.stream_order++;
    put(",\n{\"ph\":\"i\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%ld,\"tid\":%u", cat, name,
        pid, tid);
    put_us("ts", t ? (int64_t)(t - out.setup.origin_ns) : 0);
    put(",\"args\":{\"correlation\":%u", correlation);
}

/* Sync id 0 or n/a: the waits the driver makes on its own events inside a graph
 * launch (the launch's correlation, the graph's internal streams) carry sync id 0;
 * they are not the program's, and the graph's own order comes from its graph file, so
 * such records are skipped (counted). */
static int no_sync_id(uint64_t v)
{
    return v == 0 || not_applicable(v);
}

static void event_record_event(const CUpti_ActivityCudaEvent2 *e)
{
    if (no_sync_id(e->cudaEventSyncId)) {
        out.skipped++;
        return;
    }
    note_context(e->contextId, e->deviceId);
    name_device(e->deviceId);
    instant_head("cuda_event_record", "event record", e->deviceId, e->streamId,
                 e->deviceTimestamp, e->correlationId);
    put(",\"stream\":%u,\"event\":%u", e->streamId, e->eventId);
    put_id("sync id", e->cudaEventSyncId);
    put("}}");
}

/* A stream wait on the device's track; a host synchronization on the process's. */
static void sync_event(const CUpti_ActivitySynchronization2 *s)
{
    static const char *const names[] = {
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE] = "event synchronize",
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT] = "stream wait event",
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE] = "stream synchronize",
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE] = "context synchronize",
    };
    int wait = s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    uint32_t device = 0;
    if ((unsigned)s->type >= sizeof names / sizeof names[0] || !names[s->type] ||
        (wait && no_sync_id(s->cudaEventSyncId))) {
        out.skipped++;
        return;
    }
    if (wait)
        name_device(device = context_device(s->contextId));
    instant_head("cuda_sync", names[s->type], wait ? (long)device : out.pid,
                 wait ? s->streamId : 0, s->start, s->correlationId);
    put_id("stream", s->streamId);
    put_id("event", s->cudaEventId);
    put_id("sync id", s->cudaEventSyncId);
    put("}}");
}

/* A created stream's flags; the NULL stream (and unknown flags) is left without one:
 * the analyzer then treats it as possibly implicitly synchronizing. */
static void stream_info_event(const CUpti_ActivityStream *s)
{
    unsigned flag = (unsigned)s->flag & CUPTI_ACTIVITY_STREAM_CREATE_MASK;
    const char *flags = flag == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT        ? "default"
                        : flag == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING ? "non_blocking"
                                                                                 : NULL;
    uint32_t device;
    if (!flags) {
        out.skipped++;
        return;
    }
    device = context_device(s->contextId);
    name_device(device);
    out.records++, out.stream_order++;
    put(",\n{\"ph\":\"M\",\"name\":\"stream_info\",\"pid\":%u,\"tid\":%u,\"args\":{"
        "\"stream\":%u,\"device\":%u,\"flags\":\"%s\",\"priority\":%d,\"correlation\":%u}}",
        device, s->streamId, s->streamId, device, flags, (int)(int32_t)s->priority,
        s->correlationId);
}

/* A kernel, copy, memset or API record (counted, not written, without timestamps). */
static void timed_event(const CUpti_Activity *r)
{
    uint64_t start, end;
    record_times(r, &start, &end);
    if (start == 0 && end == 0) {
        out.untimed++;         /* no timestamps (or a kind not asked for) */
        return;
    }
    out.records++;
    if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
        memcpy_event((const CUpti_ActivityMemcpy6 *)r);
    else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET)
        memset_event((const CUpti_ActivityMemset4 *)r);
    else if (r->kind == CUPTI_ACTIVITY_KIND_DRIVER || r->kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        api_event((const CUpti_ActivityAPI *)r);
    else
        kernel_event((const CUpti_ActivityKernel10 *)r);
}

static void record_event(const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        event_record_event((const CUpti_ActivityCudaEvent2 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        sync_event((const CUpti_ActivitySynchronization2 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_STREAM:
        stream_info_event((const CUpti_ActivityStream *)r);
        break;
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        note_context(((const CUpti_ActivityContext3 *)r)->contextId,
                     ((const CUpti_ActivityContext3 *)r)->deviceId);
        break;
    default:
        timed_event(r);
    }
}

/* ---- the file ---------------------------------------------------------------------- */

int ag_trace_json_open(const struct ag_trace_setup *setup)
{
    int fd = open(setup->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return errno;
    pthread_mutex_lock(&out.lock);
    out.fd = fd;
    out.pid = (long)getpid();
    out.setup = *setup;
    put("{\"otherData\": {\"producer\": \"libautograph\", \"version\": 1, \"pid\": %ld, "
        "\"origin_ns\": %llu, \"cupti_version\": %u},\n\"displayTimeUnit\": \"ns\",\n"
        "\"traceEvents\": [\n", out.pid, (unsigned long long)setup->origin_ns,
        setup->cupti_version);
    put("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"args\":{\"name\":\"host (pid "
        "%ld)\"}}", out.pid, out.pid);
    drain();
    pthread_mutex_unlock(&out.lock);
    return out.error;
}

void ag_trace_json_buffer(uint8_t *buffer, size_t valid,
                          CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **))
{
    CUpti_Activity *r = NULL;
    pthread_mutex_lock(&out.lock);
    while (out.fd >= 0 && valid > 0 && next(buffer, valid, &r) == CUPTI_SUCCESS)
        record_event(r);
    pthread_mutex_unlock(&out.lock);
}

int ag_trace_json_close(struct ag_trace_totals *t)
{
    int rc;
    pthread_mutex_lock(&out.lock);
    if (out.fd < 0) {
        pthread_mutex_unlock(&out.lock);
        return EBADF;
    }
    t->records = out.records;
    t->stream_order = out.stream_order;
    t->untimed = out.untimed;
    t->skipped = out.skipped;
    t->device_unknown = out.device_unknown;
    put("\n],\n\"autographTrace\": {\"records\": %llu, \"stream_order\": %llu, "
        "\"untimed\": %llu, \"skipped\": %llu, \"device_unknown\": %llu, \"dropped\": %llu, "
        "\"starved_requests\": %llu, \"buffers\": %u, \"buffer_bytes\": %u, "
        "\"completed_buffers\": %u}}\n", t->records, t->stream_order, t->untimed, t->skipped,
        t->device_unknown, t->dropped, t->starved, t->buffers, t->buffer_bytes, t->completed);
    drain();
    if (close(out.fd) != 0 && !out.error)
        out.error = errno;
    out.fd = -1;
    rc = out.error;
    pthread_mutex_unlock(&out.lock);
    return rc;
}
#endif
