/* trace.h -- what the analyzer keeps of a Chrome trace: one compact record per GPU
 * activity (kernel, memcpy, memset), the stream-order records of section 1d (event
 * records, stream waits, host synchronizations, stream_info), the driver calls'
 * return times, and what it learnt about the file. */
#ifndef AGA_TRACE_H
#define AGA_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

enum kev_kind { KEV_KERNEL, KEV_MEMCPY, KEV_MEMSET };

enum kev_flag {
    KEV_GRAPH = 1,      /* graph_id known (non-zero) */
    KEV_NODE = 2,       /* node_id known */
    KEV_CORR = 4,
    KEV_CHANNEL = 8,
    KEV_STREAM = 16,
    KEV_GROUPED = 32,   /* no graph keys, but one of a launch group (replay.c): a graph
                           launch's record, not an eager one */
};
/* From a graph launch: graph keys, or a launch group's record. */
#define KEV_LAUNCHED (KEV_GRAPH | KEV_GROUPED)

/* One per GPU record, the bulk of the analyzer's memory: keep it small. */
struct kev {
    int64_t ts, dur;        /* nanoseconds */
    uint64_t graph_id;      /* exec graph id */
    uint64_t node_id;       /* as written: a 64-bit tools id or a 32-bit node id */
    int64_t corr, stream;
    int32_t device, channel;
    uint32_t name;          /* strtab ids */
    uint32_t pid, tid;      /* raw: '#' + number text, or '"' + string */
    uint8_t flags, kind;
};

/* |ts| and dur of a GPU record, in ns (about 73 years): sums of a few stay in range. */
#define TRACE_TIME_MAX (INT64_C(1) << 61)

/* Section 1d: a stream-order record that has a correlation. */
enum order_kind { ORDER_EVENT_RECORD, ORDER_STREAM_WAIT, ORDER_HOST_SYNC };
enum order_flag { ORDER_HAS_STREAM = 1, ORDER_HAS_SYNC_ID = 2, ORDER_HAS_TS = 4 };

/* The sync id of an event record made for a Kineto stream wait: this bit | the
 * record call's correlation. */
#define KINETO_SYNC_ID (UINT64_C(1) << 63)

struct order_rec {
    int64_t corr, stream;
    int64_t ts;             /* when the host made the call (ORDER_HAS_TS: "ts" not 0) */
    uint64_t sync_id;
    int32_t device;         /* args "device", else pid, else 0 */
    uint8_t kind, flags;
};

/* Section 1d: a stream created while tracing ("ph":"M", "name":"stream_info"). */
struct stream_info {
    int64_t stream;
    int32_t device;
    uint8_t non_blocking;   /* flags "non_blocking"; "default" or absent: 0 */
};

/* An API call ("cat":"cuda_driver" or "cuda_runtime"): its end is when its work was
 * submitted; its start, a time the host had reached by its correlation. */
struct api_call {
    int64_t corr, start, end;
};

enum trace_source { SRC_CHROME, SRC_KINETO, SRC_AUTOGRAPH };

/* Where an annotation can add events: before the byte at insert_at (the closing ']'
 * of traceEvents, or the closing '}' of a top-level object without one). */
enum insert_kind { INSERT_ITEMS, INSERT_KEY };

struct trace {
    const char *path;
    struct strtab strs;
    struct kev *ev;
    size_t n, cap;
    struct order_rec *ord;
    size_t n_ord, cap_ord;
    struct stream_info *sinfo;
    size_t n_sinfo, cap_sinfo;
    struct api_call *api;       /* sorted by correlation by the eager pass (eager.c) */
    size_t n_api, cap_api;
    uint64_t events;            /* every event read */
    uint64_t bytes, raw_bytes;  /* decompressed bytes, bytes of the file */
    int gzip;
    enum trace_source source;
    uint64_t insert_at;
    enum insert_kind insert_kind;
    int insert_comma;           /* the array or object already has members */
    uint64_t with_graph, with_node, with_channel, with_corr;   /* GPU records with keys */
    uint64_t with_order;        /* section 1d records (stream_info included) */
    uint64_t order_no_corr;     /* section 1d records without a correlation (unused) */
    uint64_t kineto_waits;      /* Kineto stream waits naming their event record's call */
};

void trace_init(struct trace *t, const char *path);
void trace_free(struct trace *t);
/* Read a trace from an input; 0, or -1 with a one-line message in err. */
struct input;
int trace_read(struct trace *t, struct input *in, char *err, size_t errsize);
/* The same, opening the file (plain or gzip). */
int trace_read_file(struct trace *t, const char *path, char *err, size_t errsize);

const char *trace_source_name(enum trace_source s);
const char *kev_kind_name(int kind);

#endif
