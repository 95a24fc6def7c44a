/* trace_keep.c -- the trace model's arrays and what each decoded event adds to them
 * (analyzer/FORMAT.md): GPU records (1a), API calls ("cat":"cuda_driver"/"cuda_runtime"), the
 * stream-order records and stream_info of section 1d.  Each kind names the fields it
 * uses; a malformed one of those is an error at its byte offset, any other is ignored.
 * Every other event was only checked for syntax. */
#include "trace_event.h"

#include "vec.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum event_kind {
    EV_OTHER, EV_GPU, EV_DRIVER, EV_EVENT_RECORD, EV_STREAM_WAIT, EV_HOST_SYNC,
    EV_STREAM_INFO
};

/* The fields each kind uses (a malformed one is an error there). */
static const uint32_t fields_used[] = {
    [EV_GPU] = FIELD(F_TS) | FIELD(F_DUR) | FIELD(F_GRAPH) | FIELD(F_NODE) | FIELD(F_CORR)
               | FIELD(F_STREAM) | FIELD(F_DEVICE) | FIELD(F_CHANNEL),
    [EV_DRIVER] = FIELD(F_TS) | FIELD(F_DUR) | FIELD(F_CORR),
    [EV_EVENT_RECORD] = FIELD(F_STREAM) | FIELD(F_CORR) | FIELD(F_EVENT) | FIELD(F_SYNC_ID)
                        | FIELD(F_DEVICE) | FIELD(F_TS),
    [EV_STREAM_WAIT] = FIELD(F_STREAM) | FIELD(F_CORR) | FIELD(F_EVENT) | FIELD(F_SYNC_ID)
                       | FIELD(F_DEVICE) | FIELD(F_WAIT_STREAM) | FIELD(F_WAIT_CORR)
                       | FIELD(F_TS),
    [EV_HOST_SYNC] = FIELD(F_STREAM) | FIELD(F_CORR) | FIELD(F_EVENT) | FIELD(F_SYNC_ID)
                     | FIELD(F_DEVICE) | FIELD(F_TS),
    [EV_STREAM_INFO] = FIELD(F_STREAM) | FIELD(F_DEVICE) | FIELD(F_FLAGS) | FIELD(F_PRIORITY),
};

static const char *const field_what[F_COUNT] = {
    [F_TS] = "\"ts\": number out of range",
    [F_DUR] = "\"dur\": number out of range",
    [F_GRAPH] = "\"graph id\": expected a non-negative integer",
    [F_NODE] = "\"graph node id\": expected a non-negative integer",
    [F_CORR] = "\"correlation\": expected an integer",
    [F_STREAM] = "\"stream\": expected an integer",
    [F_DEVICE] = "\"device\": expected a 32-bit integer",
    [F_CHANNEL] = "\"channel\": expected a 32-bit integer",
    [F_EVENT] = "\"event\": expected a non-negative integer",
    [F_SYNC_ID] = "\"sync id\": expected a non-negative integer",
    [F_FLAGS] = "\"flags\": expected \"default\" or \"non_blocking\"",
    [F_PRIORITY] = "\"priority\": expected an integer",
    [F_WAIT_STREAM] = "\"wait_on_stream\": expected an integer",
    [F_WAIT_CORR] = "\"wait_on_cuda_event_record_corr_id\": expected an integer",
};

void trace_init(struct trace *t, const char *path)
{
    memset(t, 0, sizeof *t);
    t->path = path;
}

void trace_free(struct trace *t)
{
    strtab_free(&t->strs);
    free(t->ev);
    free(t->ord);
    free(t->sinfo);
    free(t->api);
    t->ev = NULL;
    t->ord = NULL;
    t->sinfo = NULL;
    t->api = NULL;
    t->n = t->cap = t->n_ord = t->cap_ord = t->n_sinfo = t->cap_sinfo = 0;
    t->n_api = t->cap_api = 0;
}

const char *trace_source_name(enum trace_source s)
{
    return s == SRC_KINETO ? "Kineto" : s == SRC_AUTOGRAPH ? "libautograph" : "Chrome trace";
}

const char *kev_kind_name(int kind)
{
    return kind == KEV_MEMCPY ? "memcpy" : kind == KEV_MEMSET ? "memset" : "kernel";
}

static int gpu_kind(const struct event_fields *s)
{
    if (strcmp(s->ph, "X") != 0)
        return -1;
    if (strcasecmp(s->cat, "kernel") == 0)
        return KEV_KERNEL;
    if (strcasecmp(s->cat, "gpu_memcpy") == 0)
        return KEV_MEMCPY;
    if (strcasecmp(s->cat, "gpu_memset") == 0)
        return KEV_MEMSET;
    return -1;
}

/* cuda_sync by name: a stream wait or one of the host synchronizations (libautograph's
 * names, then Kineto's). */
static enum event_kind sync_kind(const char *name)
{
    static const char *const host[] = {
        "stream synchronize", "event synchronize", "context synchronize",
        "stream sync", "event sync", "context sync", "device sync",
    };
    if (strcasecmp(name, "stream wait event") == 0)
        return EV_STREAM_WAIT;
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (strcasecmp(name, host[i]) == 0)
            return EV_HOST_SYNC;
    return EV_OTHER;
}

/* Most events are neither (cpu_op, python_function...): one look at "cat" tells. */
static enum event_kind event_kind(const struct event_fields *s)
{
    if (s->ph[0] == 'M' && s->ph[1] == '\0')
        return strcasecmp(s->name, "stream_info") == 0 ? EV_STREAM_INFO : EV_OTHER;
    if ((s->cat[0] | 0x20) != 'c')
        return gpu_kind(s) >= 0 ? EV_GPU : EV_OTHER;
    if (strcasecmp(s->cat, "cuda_event_record") == 0)
        return EV_EVENT_RECORD;
    if (strcasecmp(s->cat, "cuda_sync") == 0)
        return sync_kind(s->name);
    if (strcmp(s->ph, "X") == 0 &&
        (strcasecmp(s->cat, "cuda_driver") == 0 || strcasecmp(s->cat, "cuda_runtime") == 0))
        return EV_DRIVER;
    return EV_OTHER;
}

/* The first malformed field among those the kind uses: an error there. */
static void check_fields(struct js *j, const struct event_fields *s, enum event_kind kind)
{
    uint32_t bad = s->bad & fields_used[kind];
    int first = -1;
    for (int f = 0; bad != 0 && f < F_COUNT; f++)
        if ((bad & FIELD(f)) && (first < 0 || s->bad_at[f] < s->bad_at[first]))
            first = f;
    if (first >= 0)
        js_fail_at(j, s->bad_at[first], "%s (in a %s event)", field_what[first],
                   kind == EV_GPU ? "GPU" : kind == EV_STREAM_INFO ? "stream_info" : s->cat);
}

static uint32_t intern(struct trace *t, struct js *j, const char *s)
{
    uint32_t id = strtab_intern(&t->strs, s, strlen(s));
    if (id == UINT32_MAX)
        js_fail(j, "out of memory");
    return id;
}

/* Room for one more element of an array of the trace (fails through j). */
static void *append(struct js *j, void *array, size_t *n, size_t *cap, size_t size)
{
    if (vec_reserve(array, cap, *n + 1, size) != 0)
        js_fail(j, "out of memory (%zu records)", *n);
    return (char *)*(void **)array + (*n)++ * size;
}

/* The 64-bit form of "graph node id" names its graph in the high half. */
static void settle_ids(struct kev *k)
{
    if (!(k->flags & KEV_GRAPH) && (k->flags & KEV_NODE) && (k->node_id >> 32) != 0) {
        k->graph_id = k->node_id >> 32;
        k->flags |= KEV_GRAPH;
    }
    if ((k->flags & KEV_GRAPH) && k->graph_id == 0)
        k->flags &= (uint8_t) ~(KEV_GRAPH | KEV_NODE);
}

static void count_keys(struct trace *t, const struct kev *k)
{
    t->with_graph += (k->flags & KEV_GRAPH) != 0;
    t->with_node += (k->flags & KEV_NODE) != 0;
    t->with_channel += (k->flags & KEV_CHANNEL) != 0;
    t->with_corr += (k->flags & KEV_CORR) != 0;
}

/* The record's flags: which of its keys were present. */
static uint8_t kev_flags(uint32_t has)
{
    static const struct { enum field f; uint8_t flag; } keys[] = {
        { F_GRAPH, KEV_GRAPH }, { F_NODE, KEV_NODE }, { F_CORR, KEV_CORR },
        { F_CHANNEL, KEV_CHANNEL }, { F_STREAM, KEV_STREAM },
    };
    uint8_t flags = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (has & FIELD(keys[i].f))
            flags |= keys[i].flag;
    return flags;
}

static int timed(const struct event_fields *s)
{
    return (s->has & FIELD(F_TS)) && (s->has & FIELD(F_DUR)) && s->k.dur >= 0;
}

static int in_range(const struct kev *k)
{
    return k->ts <= TRACE_TIME_MAX && k->ts >= -TRACE_TIME_MAX && k->dur <= TRACE_TIME_MAX;
}

static void keep_gpu(struct trace *t, struct js *j, struct event_fields *s, uint64_t start)
{
    struct kev *k = &s->k;
    if (!timed(s))
        js_fail_at(j, start, "a GPU event (\"ph\":\"X\", \"cat\":\"%s\") without a numeric "
                   "\"ts\" and a non-negative \"dur\"", s->cat);
    if (!in_range(k))
        js_fail_at(j, start, "a GPU event whose \"ts\" or \"dur\" is out of range (more "
                   "than 2^61 ns)");
    k->kind = (uint8_t)gpu_kind(s);
    k->flags = kev_flags(s->has);
    k->name = intern(t, j, s->name[0] ? s->name : s->arg_name);
    k->pid = intern(t, j, s->pid);
    k->tid = intern(t, j, s->tid);
    if (s->chtype[0])           /* not kept, but interned: the reports' shape hashes are */
        intern(t, j, s->chtype);    /* made from string ids, which must not move */
    settle_ids(k);
    count_keys(t, k);
    *(struct kev *)append(j, &t->ev, &t->n, &t->cap, sizeof *t->ev) = *k;
}

/* A driver call with a correlation and its times; one without them is not kept. */
static void keep_driver(struct trace *t, struct js *j, const struct event_fields *s,
                        uint64_t start)
{
    struct api_call *c;
    if ((s->has & FIELD(F_DUR)) && s->k.dur < 0)
        js_fail_at(j, start, "a cuda_driver or cuda_runtime event with a negative \"dur\"");
    if (!timed(s) || !(s->has & FIELD(F_CORR)))
        return;
    if (!in_range(&s->k))
        js_fail_at(j, start, "a cuda_driver or cuda_runtime event whose \"ts\" or \"dur\" is out of range "
                   "(more than 2^61 ns)");
    c = append(j, &t->api, &t->n_api, &t->cap_api, sizeof *t->api);
    c->corr = s->k.corr;
    c->start = s->k.ts;
    c->end = s->k.ts + s->k.dur;
}

/* Section 1d: the device is args "device", else the pid when it is an integer, else 0. */
static int32_t order_device(const struct event_fields *s)
{
    char *end;
    long long v;
    if (s->has & FIELD(F_DEVICE))
        return s->k.device;
    if (s->pid[0] != '#')
        return 0;
    v = strtoll(s->pid + 1, &end, 10);
    return *end == '\0' && v >= INT32_MIN && v <= INT32_MAX ? (int32_t)v : 0;
}

/* Kineto's stream wait names the event record by its call's correlation and stream:
 * an event record is made for it, tied to the wait by a sync id of their own. */
static void kineto_wait(struct trace *t, struct js *j, struct event_fields *s)
{
    struct order_rec *o;
    if (!(s->has & FIELD(F_WAIT_STREAM)) || !(s->has & FIELD(F_WAIT_CORR))
        || s->wait_stream < 0 || s->wait_corr < 0 || (s->has & FIELD(F_SYNC_ID)))
        return;
    o = append(j, &t->ord, &t->n_ord, &t->cap_ord, sizeof *t->ord);
    o->corr = s->wait_corr;
    o->stream = s->wait_stream;
    o->sync_id = KINETO_SYNC_ID | (uint64_t)s->wait_corr;
    o->ts = 0;
    o->device = order_device(s);
    o->kind = ORDER_EVENT_RECORD;
    o->flags = ORDER_HAS_STREAM | ORDER_HAS_SYNC_ID;
    s->sync_id = o->sync_id;
    s->has |= FIELD(F_SYNC_ID);
    t->kineto_waits++;
}

static void keep_order(struct trace *t, struct js *j, struct event_fields *s,
                       enum event_kind kind)
{
    struct order_rec *o;
    t->with_order++;
    if (!(s->has & FIELD(F_CORR))) {
        t->order_no_corr++;
        return;
    }
    if (kind == EV_STREAM_WAIT)
        kineto_wait(t, j, s);
    o = append(j, &t->ord, &t->n_ord, &t->cap_ord, sizeof *t->ord);
    o->corr = s->k.corr;
    o->stream = s->k.stream;
    o->sync_id = s->sync_id;
    o->device = order_device(s);
    o->kind = kind == EV_EVENT_RECORD ? ORDER_EVENT_RECORD
              : kind == EV_STREAM_WAIT ? ORDER_STREAM_WAIT : ORDER_HOST_SYNC;
    o->flags = (uint8_t)(((s->has & FIELD(F_STREAM)) ? ORDER_HAS_STREAM : 0)
                         | ((s->has & FIELD(F_SYNC_ID)) ? ORDER_HAS_SYNC_ID : 0));
    /* "ts" 0: no time (libautograph's event records); out of range: not used */
    o->ts = s->k.ts;
    if ((s->has & FIELD(F_TS)) && s->k.ts != 0 && in_range(&s->k))
        o->flags |= ORDER_HAS_TS;
}

static void keep_stream_info(struct trace *t, struct js *j, const struct event_fields *s)
{
    struct stream_info *si;
    t->with_order++;
    if (!(s->has & FIELD(F_STREAM)))
        return;
    si = append(j, &t->sinfo, &t->n_sinfo, &t->cap_sinfo, sizeof *t->sinfo);
    si->stream = s->k.stream;
    si->device = order_device(s);
    si->non_blocking = (s->has & FIELD(F_FLAGS)) && s->non_blocking;
}

void trace_keep_event(struct trace *t, struct js *j, struct event_fields *s, uint64_t start)
{
    enum event_kind kind = event_kind(s);
    if (kind == EV_OTHER)
        return;
    check_fields(j, s, kind);
    switch (kind) {
    case EV_GPU: keep_gpu(t, j, s, start); break;
    case EV_DRIVER: keep_driver(t, j, s, start); break;
    case EV_STREAM_INFO: keep_stream_info(t, j, s); break;
    default: keep_order(t, j, s, kind);
    }
}
