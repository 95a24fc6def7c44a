/* sim_activity.c -- CUPTI activity records of the work the simulator runs, handed to
 * the stand-in libcupti's sink (sim_activity.h).
 *
 * sim_submit brackets every submission (one driver call: a new correlation id, and
 * the stream it came on); sim_graph_run names the node it runs; sim_op_execute
 * reports each kernel, copy and memset as it executes.  A graph's records carry the
 * executable's id and the node's CUPTI id (sim_cupti.c), and the graph launch's
 * correlation id and stream, as CUPTI's do.
 */
#include "sim_activity.h"
#include "sim_internal.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static sim_activity_fn sink;
static uint32_t next_correlation;
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
        a->kind = SIM_ACT_MEMCPY;
        a->bytes = op->u.cpy.width * op->u.cpy.height * op->u.cpy.depth;
        a->copy_kind = kinds[sim_mem_is_device(op->u.cpy.src) * 2 +
                             sim_mem_is_device(op->u.cpy.dst)];
    } else {
        a->kind = SIM_ACT_MEMSET;
        a->bytes = op->u.set.width * op->u.set.height * op->u.set.elem;
        a->value = op->u.set.value;
    }
}

/* A kernel, copy or memset executing now (in_graph: run by the node `running`). */
void sim_activity_op(const sim_op *op, const char *label, int in_graph)
{
    struct sim_activity a = { 0 };
    if (!sink || (op->kind != SIM_OP_KERNEL && op->kind != SIM_OP_MEMCPY &&
                  op->kind != SIM_OP_MEMSET))
        return;
    op_details(&a, op);
    a.start = sim_clock_now() * 1000;
    a.end = a.start + 600;
    a.context = current.stream && current.stream->o.ctx ? current.stream->o.ctx->o.ordinal : 0;
    a.stream = current.stream ? (uint32_t)current.stream->id : 0;
    a.correlation = current.correlation;
    a.channel = channel_of(label);
    if (in_graph && running) {
        a.graph_id = (uint32_t)running->graph->o.ordinal;
        a.graph_node_id = sim_cupti_node_id(running);
    }
    sink(&a);
}
