/* trace_event.h -- one trace event as the reader decodes it (trace_read.c) and hands it
 * to what keeps it (trace_keep.c): the members the analyzer uses, which of them were
 * present, and which were malformed and where. */
#ifndef AGA_TRACE_EVENT_H
#define AGA_TRACE_EVENT_H

#include "json_stream.h"
#include "trace.h"

#define NAME_MAX_KEPT 4096
#define RAW_MAX 128

/* The members whose values are checked.  A malformed one is an error only in an event
 * that uses it (analyzer/FORMAT.md, 1a and 1d); elsewhere it is ignored. */
enum field {
    F_TS, F_DUR, F_GRAPH, F_NODE, F_CORR, F_STREAM, F_DEVICE, F_CHANNEL,
    F_EVENT, F_SYNC_ID, F_FLAGS, F_PRIORITY, F_WAIT_STREAM, F_WAIT_CORR, F_COUNT
};
#define FIELD(f) (1u << (f))

struct event_fields {
    char ph[8], cat[32], key[40];
    char name[NAME_MAX_KEPT];
    char arg_name[NAME_MAX_KEPT];   /* args "name": the name when the event has none */
    char pid[RAW_MAX + 2], tid[RAW_MAX + 2], chtype[RAW_MAX + 2];
    uint32_t has, bad;              /* FIELD() bits: present, malformed */
    uint64_t bad_at[F_COUNT];       /* where a malformed field's value starts */
    struct kev k;                   /* ts, dur, ids, correlation, stream, device, channel */
    uint64_t event, sync_id;
    int64_t wait_stream, wait_corr;  /* Kineto's "wait_on_stream", "..._record_corr_id" */
    uint8_t non_blocking;           /* "flags": "non_blocking" */
};

/* Keeps what the analyzer uses of one decoded event (GPU record, driver call,
 * stream-order record, stream_info); a malformed field it uses fails through j.
 * start: the event's offset. */
void trace_keep_event(struct trace *t, struct js *j, struct event_fields *e, uint64_t start);

#endif
