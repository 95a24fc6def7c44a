/* sim_activity.c -- CUPTI activity records of the work the simulator runs, handed to
 * the stand-in libcupti's sink (sim_activity.h).
 *
 * sim_submit brackets every submission (one driver call: a new correlation id, and
 * the stream it came on); sim_graph_run names the node it runs; sim_op_execute
 * reports each kernel, copy and memset as it executes.  A graph's records carry the
 * executable's id and the node's CUPTI id (sim_cupti.c), and the graph launch's
 * correlation id and stream, as CUPTI's do.
 * The stream order: sim_activity_op reports eager event records (each a new sync id,
 * kept by the event) and stream waits (naming the event's latest sync id) with the
 * submitting call's correlation; sim_activity_sync a successful synchronize,
 * sim_activity_stream a created stream (a legacy one: its context first), each a call
 * of its own; sim_activity_dump what exists (the stand-in's cuptiActivityEnableAndDump).
 */
#include "sim_activity.h"
#include "sim_internal.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static sim_activity_fn sink;
static uint32_t next_correlation;
static uint64_t next_sync_id;
static sim_activity_call current;      /* the driver call being executed */
static const sim_node *running;        /* the graph node being executed */

void sim_activity_set_sink(sim_activity_fn fn)
{
    sink = fn;
}

void sim_activity_call_begin(sim_activity_call *saved, const sim_stream *s)
{
    *saved = current;
    current.correlation = ++next_correlation;
    current.stream = s;
    current.start = sim_clock_now() * 1000 + 100;
}

/* The API activity of a call that submitted work of kind `op_kind`. */
void sim_activity_call_end(const sim_activity_call *saved, int op_kind)
{
    static const uint32_t cbids[] = {
        [SIM_OP_KERNEL] = SIM_CBID_LAUNCH, [SIM_OP_GRAPH] = SIM_CBID_GRAPH_LAUNCH,
        [SIM_OP_MEMCPY] = SIM_CBID_MEMCPY, [SIM_OP_MEMSET] = SIM_CBID_MEMSET,
    };
    struct sim_activity a = { .kind = SIM_ACT_API };
    if (sink && (size_t)op_kind < sizeof cbids / sizeof cbids[0] && cbids[op_kind]) {
        a.start = current.start;
        a.end = sim_clock_now() * 1000 + 800;
        a.correlation = current.correlation;
        a.cbid = cbids[op_kind];
        a.process = (uint32_t)getpid();
        a.thread = (uint32_t)syscall(SYS_gettid);
        sink(&a);
    }
    current = *saved;
}

void sim_activity_node(const sim_node *x)
{
    running = x;
}

/* Stream sN runs on channel N mod SIM_CHANNELS (default 8; legacy and per-thread
 * streams: channel 0), as hardware deals its channels out to streams in turn. */
static uint32_t channel_of(const char *label)
{
    static long channels;
    const char *env;
    if (channels == 0) {
        env = getenv("SIM_CHANNELS");
        channels = env && atol(env) > 0 ? atol(env) : SIM_CHANNELS;
    }
    while (*label && (*label < '0' || *label > '9'))
        label++;
    return (uint32_t)(strtoul(label, NULL, 10) % (unsigned long)channels);
}

/* What a kind of op adds to its record. */
static void op_details(struct sim_activity *a, const sim_op *op)
{
    if (op->kind == SIM_OP_KERNEL) {
        a->kind = SIM_ACT_KERNEL;
        a->name = op->u.k.kern->name;
        for (int i = 0; i < 3; i++)
            a->grid[i] = op->u.k.grid[i], a->block[i] = op->u.k.block[i];
    } else if (op->kind == SIM_OP_MEMCPY) {
        static const unsigned kinds[] = { 9, 1, 2, 8 };   /* HtoH HtoD DtoH DtoD */
        int d = sim_mem_dev(op->u.cpy.dst), s = sim_mem_dev(op->u.cpy.src);
        a->kind = SIM_ACT_MEMCPY;
        a->bytes = op->u.cpy.width * op->u.cpy.height * op->u.cpy.depth;
        a->copy_kind = kinds[sim_mem_is_device(op->u.cpy.src) * 2 +
                             sim_mem_is_device(op->u.cpy.dst)];
        if (d >= 0 && s >= 0 && d != s)
            a->copy_kind = 10;                         /* PtoP */
    } else {
        a->kind = SIM_ACT_MEMSET;
        a->bytes = op->u.set.width * op->u.set.height * op->u.set.elem;
        a->value = op->u.set.value;
    }
}

/* ---- the stream order */

/* The context, stream, event and sync id a synchronization names (NULL: not applicable). */
static void sync_ids(struct sim_activity *a, const sim_ctx *c, const sim_stream *s,
                     const sim_event *e)
{
    a->context = c ? (uint32_t)c->o.ordinal : 0;
    a->device = (uint32_t)sim_ctx_dev(c);
    a->stream = s ? (uint32_t)s->id : SIM_ACT_NONE;
    a->event = e ? (uint32_t)e->o.ordinal : SIM_ACT_NONE;
    a->sync_id = e && e->sync_id ? e->sync_id : SIM_ACT_NONE;
}

/* An eager event record or stream wait, in the call that submitted it. */
static void event_op(const sim_op *op)
{
    sim_event *e = sim_obj_get(op->u.evt.ev, SIM_K_EVENT);
    const sim_stream *s = current.stream;
    struct sim_activity a = { .kind = SIM_ACT_SYNC, .sync_type = SIM_SYNC_STREAM_WAIT };
    if (!e)
        return;
    if (op->kind == SIM_OP_EVENT_RECORD)
        e->sync_id = ++next_sync_id;
    if (!sink)
        return;
    sync_ids(&a, s ? s->o.ctx : NULL, s, e);
    a.correlation = current.correlation;
    if (op->kind == SIM_OP_EVENT_RECORD)
        a.kind = SIM_ACT_EVENT_RECORD;      /* no times, as CUPTI's */
    else
        a.start = current.start, a.end = sim_clock_now() * 1000 + 800;
    sink(&a);
}

void sim_activity_sync(int type, const sim_ctx *c, const sim_stream *s, const sim_event *e)
{
    struct sim_activity a = { .kind = SIM_ACT_SYNC, .sync_type = type };
    a.correlation = ++next_correlation;
    if (!sink)
        return;
    sync_ids(&a, c, s, e);
    a.start = sim_clock_now() * 1000 + 100;
    a.end = a.start + 700;
    sink(&a);
}

/* A stream's record (a legacy stream: the NULL stream, after its context's). */
static void stream_record(const sim_stream *s, uint32_t correlation)
{
    struct sim_activity a = { .kind = SIM_ACT_CONTEXT };
    if (s->special == SIM_STREAM_PTDS)
        return;
    a.context = s->o.ctx ? (uint32_t)s->o.ctx->o.ordinal : 0;
    a.device = (uint32_t)sim_ctx_dev(s->o.ctx);
    a.stream = (uint32_t)s->id;
    if (s->special == SIM_STREAM_LEGACY) {
        sink(&a);
        a.stream_flag = SIM_STREAM_FLAG_NULL;
    } else {
        a.stream_flag = s->flags & CU_STREAM_NON_BLOCKING ? SIM_STREAM_FLAG_NON_BLOCKING
                                                          : SIM_STREAM_FLAG_DEFAULT;
    }
    a.kind = SIM_ACT_STREAM;
    a.priority = s->priority;
    a.correlation = correlation;
    sink(&a);
}

void sim_activity_stream(const sim_stream *s)
{
    uint32_t correlation = ++next_correlation;
    if (sink)
        stream_record(s, correlation);
}

void sim_activity_dump(void)
{
    void **v;
    size_t n;
    if (!sink)
        return;
    n = sim_obj_list(SIM_K_STREAM, NULL, &v);
    for (size_t i = 0; i < n; i++)
        stream_record(v[i], 0);
    free(v);
}

/* ---- GPU work */

/* A kernel, copy or memset executing now (in_graph: run by the node `running`); an
 * eager event record or wait. */
void sim_activity_op(const sim_op *op, const char *label, int in_graph)
{
    struct sim_activity a = { 0 };
    if ((op->kind == SIM_OP_EVENT_RECORD || op->kind == SIM_OP_EVENT_WAIT) && !in_graph)
        event_op(op);
    if (!sink || (op->kind != SIM_OP_KERNEL && op->kind != SIM_OP_MEMCPY &&
                  op->kind != SIM_OP_MEMSET))
        return;
    op_details(&a, op);
    a.start = sim_clock_now() * 1000;
    a.end = a.start + 600;
    a.context = current.stream && current.stream->o.ctx ? current.stream->o.ctx->o.ordinal : 0;
    a.device = current.stream ? (uint32_t)sim_ctx_dev(current.stream->o.ctx) : 0;
    a.stream = current.stream ? (uint32_t)current.stream->id : 0;
    a.correlation = current.correlation;
    a.channel = channel_of(label);
    if (in_graph && running) {
        a.graph_id = (uint32_t)running->graph->o.ordinal;
        a.graph_node_id = sim_cupti_node_id(running);
    }
    sink(&a);
}
