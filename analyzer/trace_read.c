/* trace_read.c -- a Chrome trace (Kineto's, libautograph's: analyzer/FORMAT.md) read
 * in one streaming pass: the document's structure, each event's members and args
 * decoded into event_fields, which trace_keep.c keeps or drops.  Every event is
 * checked for syntax; values are checked as they are decoded, and a malformed one is
 * remembered with its byte offset for trace_keep.c to judge. */
#include "trace_event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(JS_MAX_NUMBER < RAW_MAX, "a number fits a raw scalar");

struct reader {
    struct js j;
    struct trace *t;
    struct event_fields s;
};

static void mark_bad(struct event_fields *s, enum field f, uint64_t off)
{
    if (!(s->bad & FIELD(f))) {
        s->bad |= FIELD(f);
        s->bad_at[f] = off;
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

static void arg_u64(struct reader *r, uint64_t *out, enum field f)
{
    struct js_num num;
    if (!number_or_skip(&r->j, &num))
        return;
    if (js_num_u64(&num, out) != 0)
        mark_bad(&r->s, f, num.off);
    else
        r->s.has |= FIELD(f);
}

/* An integer in [lo, hi]; anything else of number form is malformed. */
static int arg_int(struct reader *r, int64_t *out, int64_t lo, int64_t hi, enum field f)
{
    struct js_num num;
    int64_t v;
    if (!number_or_skip(&r->j, &num))
        return 0;
    if (js_num_i64(&num, &v) != 0 || v < lo || v > hi) {
        mark_bad(&r->s, f, num.off);
        return 0;
    }
    *out = v;
    r->s.has |= FIELD(f);
    return 1;
}

static void arg_i32(struct reader *r, int32_t *out, enum field f)
{
    int64_t v;
    if (arg_int(r, &v, INT32_MIN, INT32_MAX, f))
        *out = (int32_t)v;
}

/* stream_info "flags": "default" or "non_blocking"; another string is malformed. */
static void arg_flags(struct reader *r)
{
    char value[16];
    uint64_t off;
    js_peek(&r->j);                 /* past blanks: off is where the value starts */
    off = js_offset(&r->j);
    if (!string_or_skip(&r->j, value, sizeof value))
        return;
    if (strcmp(value, "default") == 0 || strcmp(value, "non_blocking") == 0) {
        r->s.non_blocking = value[0] == 'n';
        r->s.has |= FIELD(F_FLAGS);
    } else {
        mark_bad(&r->s, F_FLAGS, off);
    }
}

enum arg_key {
    A_OTHER, A_GRAPH, A_NODE, A_CORR, A_STREAM, A_DEVICE, A_CHANNEL, A_CHTYPE, A_NAME,
    A_EVENT, A_SYNC_ID, A_FLAGS, A_PRIORITY, A_WAIT_STREAM, A_WAIT_CORR
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
        return strcmp(k, "stream") == 0 ? A_STREAM : strcmp(k, "sync id") == 0 ? A_SYNC_ID
                                                                             : A_OTHER;
    case 'd':
        return strcmp(k, "device") == 0 ? A_DEVICE : A_OTHER;
    case 'n':
        return strcmp(k, "name") == 0 ? A_NAME : A_OTHER;
    case 'e':
        return strcmp(k, "event") == 0 ? A_EVENT : A_OTHER;
    case 'f':
        return strcmp(k, "flags") == 0 ? A_FLAGS : A_OTHER;
    case 'p':
        return strcmp(k, "priority") == 0 ? A_PRIORITY : A_OTHER;
    case 'w':
        return strcmp(k, "wait_on_stream") == 0 ? A_WAIT_STREAM
               : strcmp(k, "wait_on_cuda_event_record_corr_id") == 0 ? A_WAIT_CORR : A_OTHER;
    default:
        return A_OTHER;
    }
}

static void read_arg(struct reader *r, enum arg_key key)
{
    struct kev *k = &r->s.k;
    int64_t priority;
    switch (key) {
    case A_GRAPH: arg_u64(r, &k->graph_id, F_GRAPH); break;
    case A_NODE: arg_u64(r, &k->node_id, F_NODE); break;
    case A_CORR: arg_int(r, &k->corr, INT64_MIN, INT64_MAX, F_CORR); break;
    case A_STREAM: arg_int(r, &k->stream, INT64_MIN, INT64_MAX, F_STREAM); break;
    case A_DEVICE: arg_i32(r, &k->device, F_DEVICE); break;
    case A_CHANNEL: arg_i32(r, &k->channel, F_CHANNEL); break;
    case A_EVENT: arg_u64(r, &r->s.event, F_EVENT); break;
    case A_SYNC_ID: arg_u64(r, &r->s.sync_id, F_SYNC_ID); break;
    case A_FLAGS: arg_flags(r); break;
    case A_PRIORITY: arg_int(r, &priority, INT64_MIN, INT64_MAX, F_PRIORITY); break;
    case A_WAIT_STREAM: arg_int(r, &r->s.wait_stream, INT64_MIN, INT64_MAX, F_WAIT_STREAM); break;
    case A_WAIT_CORR: arg_int(r, &r->s.wait_corr, INT64_MIN, INT64_MAX, F_WAIT_CORR); break;
    case A_CHTYPE: raw_scalar(&r->j, r->s.chtype); break;
    case A_NAME: string_or_skip(&r->j, r->s.arg_name, sizeof r->s.arg_name); break;
    default: js_skip(&r->j);
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

static void read_time(struct reader *r, int64_t *out, enum field f)
{
    struct js_num num;
    if (!number_or_skip(&r->j, &num))
        return;
    if (js_num_us_to_ns(&num, out) != 0)
        mark_bad(&r->s, f, num.off);
    else
        r->s.has |= FIELD(f);
}

/* The event members the analyzer uses; one comparison per name. */
static void read_member(struct reader *r)
{
    struct js *j = &r->j;
    struct event_fields *s = &r->s;
    const char *k = s->key;
    if (k[0] == 'p' && strcmp(k, "ph") == 0)
        string_or_skip(j, s->ph, sizeof s->ph);
    else if (k[0] == 'c' && strcmp(k, "cat") == 0)
        string_or_skip(j, s->cat, sizeof s->cat);
    else if (k[0] == 'n' && strcmp(k, "name") == 0)
        string_or_skip(j, s->name, sizeof s->name);
    else if (k[0] == 't' && strcmp(k, "ts") == 0)
        read_time(r, &s->k.ts, F_TS);
    else if (k[0] == 'd' && strcmp(k, "dur") == 0)
        read_time(r, &s->k.dur, F_DUR);
    else if (k[0] == 'p' && strcmp(k, "pid") == 0)
        raw_scalar(j, s->pid);
    else if (k[0] == 't' && strcmp(k, "tid") == 0)
        raw_scalar(j, s->tid);
    else if (k[0] == 'a' && strcmp(k, "args") == 0)
        each_member(r, one_arg);
    else
        js_skip(j);
}

static void read_event(struct reader *r)
{
    struct js *j = &r->j;
    struct event_fields *s = &r->s;
    uint64_t start;
    int first = 1;
    if (js_peek(j) != '{')
        js_fail_expected(j, "an event object '{'");
    start = js_offset(j);
    j->p++;
    s->ph[0] = s->cat[0] = s->name[0] = s->arg_name[0] = '\0';
    s->pid[0] = s->tid[0] = s->chtype[0] = '\0';
    s->has = s->bad = 0;
    s->non_blocking = 0;
    memset(&s->k, 0, sizeof s->k);
    while (js_object_next(j, &first)) {
        js_key(j, s->key, sizeof s->key);
        read_member(r);
    }
    r->t->events++;
    trace_keep_event(r->t, j, s, start);
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
    if (!events && r->t->source == SRC_CHROME)
        js_fail_at(j, 0, "not a trace: a JSON object without \"traceEvents\" (and not a "
                   "Kineto or libautograph trace)");
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
    else if (c == '[') {
        read_events(r);
        if (r->t->events == 0)
            js_fail_at(&r->j, 0, "not a trace: an empty array (no events)");
    }
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
