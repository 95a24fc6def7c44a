/* trace_read.c -- a Chrome trace (Kineto's, libautograph's: analyzer/FORMAT.md) read
 * in one streaming pass.  Only GPU activities are kept ("ph":"X" with "cat" kernel,
 * gpu_memcpy or gpu_memset); every other event is checked for syntax and skipped.
 * A malformed field of a GPU activity is an error at that field's byte offset; one of
 * another event is ignored (the analyzer does not use it). */
#include "trace.h"

#include "json_stream.h"
#include "vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NAME_MAX_KEPT 4096
#define RAW_MAX 128
_Static_assert(JS_MAX_NUMBER < RAW_MAX, "a number fits a raw scalar");

/* One event as it is being read. */
struct scratch {
    char ph[8], cat[32], key[32];
    char name[NAME_MAX_KEPT];
    char arg_name[NAME_MAX_KEPT];   /* args "name": the name when the event has none */
    char pid[RAW_MAX + 2], tid[RAW_MAX + 2], chtype[RAW_MAX + 2];
    int has_ts, has_dur;
    struct kev k;
    uint64_t bad_off;           /* first malformed field (0: none) */
    const char *bad_what;
};

struct reader {
    struct js j;
    struct trace *t;
    struct scratch s;
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
    t->ev = NULL;
    t->n = t->cap = 0;
}

const char *trace_source_name(enum trace_source s)
{
    return s == SRC_KINETO ? "Kineto" : s == SRC_AUTOGRAPH ? "libautograph" : "Chrome trace";
}

const char *kev_kind_name(int kind)
{
    return kind == KEV_MEMCPY ? "memcpy" : kind == KEV_MEMSET ? "memset" : "kernel";
}

static void bad(struct scratch *s, uint64_t off, const char *what)
{
    if (s->bad_off == 0) {
        s->bad_off = off + 1;
        s->bad_what = what;
    }
}

/* A string value into buf; any other value is skipped and buf left empty. */
static int string_or_skip(struct js *j, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (js_peek(j) != '"') {
        js_skip(j);
        return 0;
    }
    js_string(j, buf, cap, NULL);
    return 1;
}

/* A number or string kept as written, for writing it back: '#'+text or '"'+text. */
static void raw_scalar(struct js *j, char *buf)
{
    struct js_num num;
    int c = js_peek(j);
    if (c == '"') {
        buf[0] = '"';
        js_string(j, buf + 1, RAW_MAX, NULL);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        js_number(j, &num);
        buf[0] = '#';
        memcpy(buf + 1, num.text, num.len + 1);     /* len <= JS_MAX_NUMBER < RAW_MAX */
    } else {
        buf[0] = '\0';
        js_skip(j);
    }
}

/* A number value, or 0 (the value skipped) when it is something else. */
static int number_or_skip(struct js *j, struct js_num *num)
{
    int c = js_peek(j);
    if (c == '-' || (c >= '0' && c <= '9')) {
        js_number(j, num);
        return 1;
    }
    js_skip(j);
    return 0;
}

static void arg_u64(struct reader *r, uint64_t *out, uint8_t flag, const char *what)
{
    struct js_num num;
    if (!number_or_skip(&r->j, &num))
        return;
    if (js_num_u64(&num, out) != 0)
        bad(&r->s, num.off, what);
    else
        r->s.k.flags |= flag;
}

/* An integer in [lo, hi]; anything else of number form is malformed. */
static int arg_int(struct reader *r, int64_t *out, int64_t lo, int64_t hi, uint8_t flag,
                   const char *what)
{
    struct js_num num;
    int64_t v;
    if (!number_or_skip(&r->j, &num))
        return 0;
    if (js_num_i64(&num, &v) != 0 || v < lo || v > hi) {
        bad(&r->s, num.off, what);
        return 0;
    }
    *out = v;
    r->s.k.flags |= flag;
    return 1;
}

static void arg_i32(struct reader *r, int32_t *out, uint8_t flag, const char *what)
{
    int64_t v;
    if (arg_int(r, &v, INT32_MIN, INT32_MAX, flag, what))
        *out = (int32_t)v;
}

enum arg_key {
    A_OTHER, A_GRAPH, A_NODE, A_CORR, A_STREAM, A_DEVICE, A_CHANNEL, A_CHTYPE, A_NAME
};

/* One comparison per name: dispatch on the first byte. */
static enum arg_key arg_key(const char *k)
{
    switch (k[0]) {
    case 'g':
        return strcmp(k, "graph id") == 0 ? A_GRAPH : strcmp(k, "graph node id") == 0 ? A_NODE
                                                                                     : A_OTHER;
    case 'c':
        if (strcmp(k, "correlation") == 0)
            return A_CORR;
        if (strcmp(k, "channel") == 0)
            return A_CHANNEL;
        return strcmp(k, "channel_type") == 0 || strcmp(k, "channel type") == 0 ? A_CHTYPE
                                                                                : A_OTHER;
    case 's':
        return strcmp(k, "stream") == 0 ? A_STREAM : A_OTHER;
    case 'd':
        return strcmp(k, "device") == 0 ? A_DEVICE : A_OTHER;
    case 'n':
        return strcmp(k, "name") == 0 ? A_NAME : A_OTHER;
    default:
        return A_OTHER;
    }
}

static void read_arg(struct reader *r, enum arg_key key)
{
    struct kev *k = &r->s.k;
    switch (key) {
    case A_GRAPH:
        arg_u64(r, &k->graph_id, KEV_GRAPH, "\"graph id\": expected a non-negative integer");
        break;
    case A_NODE:
        arg_u64(r, &k->node_id, KEV_NODE, "\"graph node id\": expected a non-negative integer");
        break;
    case A_CORR:
        arg_int(r, &k->corr, INT64_MIN, INT64_MAX, KEV_CORR, "\"correlation\": expected an "
                "integer");
        break;
    case A_STREAM:
        arg_int(r, &k->stream, INT64_MIN, INT64_MAX, KEV_STREAM, "\"stream\": expected an "
                "integer");
        break;
    case A_DEVICE:
        arg_i32(r, &k->device, 0, "\"device\": expected a 32-bit integer");
        break;
    case A_CHANNEL:
        arg_i32(r, &k->channel, KEV_CHANNEL, "\"channel\": expected a 32-bit integer");
        break;
    case A_CHTYPE:
        raw_scalar(&r->j, r->s.chtype);
        break;
    case A_NAME:
        string_or_skip(&r->j, r->s.arg_name, sizeof r->s.arg_name);
        break;
    default:
        js_skip(&r->j);
    }
}

/* Each member of an object value (its name in r->s.key) to fn; another value is
 * skipped. */
static void each_member(struct reader *r, void (*fn)(struct reader *))
{
    struct js *j = &r->j;
    int first = 1;
    if (js_peek(j) != '{') {
        js_skip(j);
        return;
    }
    j->p++;
    while (js_object_next(j, &first)) {
        js_key(j, r->s.key, sizeof r->s.key);
        fn(r);
    }
}

static void one_arg(struct reader *r)
{
    read_arg(r, arg_key(r->s.key));
}

static void read_time(struct reader *r, int64_t *out, int *has, const char *what)
{
    struct js_num num;
    if (!number_or_skip(&r->j, &num))
        return;
    if (js_num_us_to_ns(&num, out) != 0)
        bad(&r->s, num.off, what);
    else
        *has = 1;
}

/* The event members the analyzer uses; one comparison per name. */
static void read_member(struct reader *r)
{
    struct js *j = &r->j;
    struct scratch *s = &r->s;
    const char *k = s->key;
    if (k[0] == 'p' && strcmp(k, "ph") == 0)
        string_or_skip(j, s->ph, sizeof s->ph);
    else if (k[0] == 'c' && strcmp(k, "cat") == 0)
        string_or_skip(j, s->cat, sizeof s->cat);
    else if (k[0] == 'n' && strcmp(k, "name") == 0)
        string_or_skip(j, s->name, sizeof s->name);
    else if (k[0] == 't' && strcmp(k, "ts") == 0)
        read_time(r, &s->k.ts, &s->has_ts, "\"ts\": number out of range");
    else if (k[0] == 'd' && strcmp(k, "dur") == 0)
        read_time(r, &s->k.dur, &s->has_dur, "\"dur\": number out of range");
    else if (k[0] == 'p' && strcmp(k, "pid") == 0)
        raw_scalar(j, s->pid);
    else if (k[0] == 't' && strcmp(k, "tid") == 0)
        raw_scalar(j, s->tid);
    else if (k[0] == 'a' && strcmp(k, "args") == 0)
        each_member(r, one_arg);
    else
        js_skip(j);
}

static int gpu_kind(const struct scratch *s)
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

static uint32_t intern(struct reader *r, const char *s)
{
    uint32_t id = strtab_intern(&r->t->strs, s, strlen(s));
    if (id == UINT32_MAX)
        js_fail(&r->j, "out of memory");
    return id;
}

static void push(struct reader *r, const struct kev *k)
{
    struct trace *t = r->t;
    if (vec_reserve(&t->ev, &t->cap, t->n + 1, sizeof *t->ev) != 0)
        js_fail(&r->j, "out of memory (%zu GPU records)", t->n);
    t->ev[t->n++] = *k;
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

static void finish_event(struct reader *r, uint64_t start)
{
    struct scratch *s = &r->s;
    int kind = gpu_kind(s);
    r->t->events++;
    if (kind < 0)
        return;
    if (s->bad_off != 0)
        js_fail_at(&r->j, s->bad_off - 1, "%s (in a GPU event)", s->bad_what);
    if (!s->has_ts || !s->has_dur || s->k.dur < 0)
        js_fail_at(&r->j, start, "a GPU event (\"ph\":\"X\", \"cat\":\"%s\") without a "
                   "numeric \"ts\" and a non-negative \"dur\"", s->cat);
    if (s->k.ts > TRACE_TIME_MAX || s->k.ts < -TRACE_TIME_MAX || s->k.dur > TRACE_TIME_MAX)
        js_fail_at(&r->j, start, "a GPU event whose \"ts\" or \"dur\" is out of range "
                   "(more than 2^61 ns)");
    s->k.kind = (uint8_t)kind;
    s->k.name = intern(r, s->name[0] ? s->name : s->arg_name);
    s->k.pid = intern(r, s->pid);
    s->k.tid = intern(r, s->tid);
    s->k.chtype = s->chtype[0] ? intern(r, s->chtype) : 0;
    settle_ids(&s->k);
    count_keys(r->t, &s->k);
    push(r, &s->k);
}

static void read_event(struct reader *r)
{
    struct js *j = &r->j;
    struct scratch *s = &r->s;
    uint64_t start = js_offset(j);
    int first = 1;
    if (js_peek(j) != '{')
        js_fail_expected(j, "an event object '{'");
    j->p++;
    s->ph[0] = s->cat[0] = s->name[0] = s->arg_name[0] = '\0';
    s->pid[0] = s->tid[0] = s->chtype[0] = '\0';
    s->has_ts = s->has_dur = 0;
    s->bad_off = 0;
    memset(&s->k, 0, sizeof s->k);
    while (js_object_next(j, &first)) {
        js_key(j, s->key, sizeof s->key);
        read_member(r);
    }
    finish_event(r, start);
}

static void read_events(struct reader *r)
{
    struct js *j = &r->j;
    int first = 1;
    if (js_peek(j) != '[')
        js_fail_expected(j, "'[' to open the event array");
    j->p++;
    while (js_array_next(j, &first))
        read_event(r);
    r->t->insert_at = js_offset(j) - 1;
    r->t->insert_kind = INSERT_ITEMS;
    r->t->insert_comma = !first;
}

/* "otherData": {"producer": "libautograph", ...} marks libautograph's trace. */
static void other_data_member(struct reader *r)
{
    char value[32];
    if (strcmp(r->s.key, "producer") != 0)
        js_skip(&r->j);
    else if (string_or_skip(&r->j, value, sizeof value) && strcmp(value, "libautograph") == 0)
        r->t->source = SRC_AUTOGRAPH;
}

static void read_top_object(struct reader *r)
{
    struct js *j = &r->j;
    int first = 1, events = 0;
    j->p++;
    while (js_object_next(j, &first)) {
        js_key(j, r->s.key, sizeof r->s.key);
        if (strcmp(r->s.key, "traceEvents") == 0) {
            read_events(r);
            events = 1;
        } else if (strcmp(r->s.key, "otherData") == 0) {
            each_member(r, other_data_member);
        } else {
            if ((strcmp(r->s.key, "schemaVersion") == 0
                 || strcmp(r->s.key, "deviceProperties") == 0) && r->t->source == SRC_CHROME)
                r->t->source = SRC_KINETO;
            js_skip(j);
        }
    }
    if (!events) {
        r->t->insert_at = js_offset(j) - 1;
        r->t->insert_kind = INSERT_KEY;
        r->t->insert_comma = !first;
    }
}

static void read_document(struct reader *r)
{
    int c = js_peek(&r->j);
    if (c == '{')
        read_top_object(r);
    else if (c == '[')
        read_events(r);
    else
        js_fail_expected(&r->j, "a trace: a JSON object with \"traceEvents\", or an array "
                         "of events");
    js_expect_end(&r->j);
}

int trace_read(struct trace *t, struct input *in, char *err, size_t errsize)
{
    jmp_buf fail;
    struct reader *r = calloc(1, sizeof *r);
    volatile int rc = -1;
    if (r == NULL || strtab_init(&t->strs) != 0 || js_init(&r->j, in, &fail, err, errsize)) {
        snprintf(err, errsize, "%s: out of memory", input_name(in));
        free(r);
        return -1;
    }
    r->t = t;
    if (setjmp(fail) == 0) {
        read_document(r);
        rc = 0;
    }
    t->bytes = js_offset(&r->j);
    t->raw_bytes = input_raw_bytes(in);
    t->gzip = input_is_gzip(in);
    js_free(&r->j);
    free(r);
    return rc;
}

static int read_cb(void *t, struct input *in, char *err, size_t errsize)
{
    return trace_read(t, in, err, errsize);
}

int trace_read_file(struct trace *t, const char *path, char *err, size_t errsize)
{
    return input_with_file(path, read_cb, t, err, errsize);
}
