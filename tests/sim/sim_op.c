/* sim_op.c -- operations: the one representation of stream work and graph
 * nodes (kernel, copy, set, host function, callback, event record / wait,
 * child graph, empty, graph memory alloc / free), their execution (with the
 * log line), and sim_submit, the single path from a stream to "execute now"
 * or "record into the capture graph".
 */
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t clock_us;         /* logical time: one microsecond per operation */

uint64_t sim_clock_now(void)
{
    return clock_us;
}

CUgraphNodeType sim_op_node_type(const sim_op *op)
{
    static const CUgraphNodeType types[] = {
        [SIM_OP_KERNEL] = CU_GRAPH_NODE_TYPE_KERNEL,
        [SIM_OP_MEMCPY] = CU_GRAPH_NODE_TYPE_MEMCPY,
        [SIM_OP_MEMSET] = CU_GRAPH_NODE_TYPE_MEMSET,
        [SIM_OP_HOST] = CU_GRAPH_NODE_TYPE_HOST,
        [SIM_OP_CALLBACK] = CU_GRAPH_NODE_TYPE_HOST,
        [SIM_OP_EVENT_RECORD] = CU_GRAPH_NODE_TYPE_EVENT_RECORD,
        [SIM_OP_EVENT_WAIT] = CU_GRAPH_NODE_TYPE_WAIT_EVENT,
        [SIM_OP_GRAPH] = CU_GRAPH_NODE_TYPE_GRAPH,
        [SIM_OP_EMPTY] = CU_GRAPH_NODE_TYPE_EMPTY,
        [SIM_OP_MEM_ALLOC] = CU_GRAPH_NODE_TYPE_MEM_ALLOC,
        [SIM_OP_MEM_FREE] = CU_GRAPH_NODE_TYPE_MEM_FREE,
    };
    return types[op->kind];
}

void sim_op_copy(sim_op *dst, const sim_op *src)
{
    *dst = *src;
    if (src->kind == SIM_OP_KERNEL) {
        size_t n = src->u.k.kern->args_size;
        dst->u.k.args = sim_xcalloc(1, n);
        memcpy(dst->u.k.args, src->u.k.args, n);
        dst->u.k.argv = NULL;
    } else if (src->kind == SIM_OP_GRAPH && src->u.graph.owned) {
        dst->u.graph.g = sim_graph_clone(src->u.graph.g);
    }
}

void sim_op_release(sim_op *op)
{
    if (op->kind == SIM_OP_KERNEL) {
        free(op->u.k.args);
        free(op->u.k.argv);
        op->u.k.args = NULL;
        op->u.k.argv = NULL;
    } else if (op->kind == SIM_OP_GRAPH && op->u.graph.owned) {
        sim_graph_free(op->u.graph.g);
        op->u.graph.g = NULL;
    }
}

void **sim_kernel_argv(sim_op *op)
{
    const sim_kernel *k = op->u.k.kern;
    if (!op->u.k.argv) {
        op->u.k.argv = sim_xcalloc((size_t)k->nparams + 1, sizeof(void *));
        for (int i = 0; i < k->nparams; i++)
            op->u.k.argv[i] = op->u.k.args + k->offsets[i];
    }
    return op->u.k.argv;
}

/* ---- execution */

static void run_kernel(sim_op *op, const char *label, int in_graph)
{
    const sim_kernel *k = op->u.k.kern;
    const unsigned *g = op->u.k.grid, *b = op->u.k.block;
    char *args = sim_log_args(k, op->u.k.args);
    sim_dim3 grid = { g[0], g[1], g[2] }, block = { b[0], b[1], b[2] };

    sim_log_line(in_graph, "kernel %s grid=%ux%ux%u block=%ux%ux%u smem=%u stream=%s args=%s",
                 k->name, g[0], g[1], g[2], b[0], b[1], b[2], op->u.k.smem, label, args);
    free(args);
    k->fn(grid, block, sim_kernel_argv(op));
}

/* A device-to-device copy between two devices is "PtoP". */
static const char *copy_kind(uintptr_t dst, uintptr_t src)
{
    static const char *kinds[] = { "HtoH", "HtoD", "DtoH", "DtoD" };
    int d = sim_mem_dev(dst), s = sim_mem_dev(src);
    if (d >= 0 && s >= 0 && d != s)
        return "PtoP";
    return kinds[sim_mem_is_device(src) * 2 + sim_mem_is_device(dst)];
}

static void run_memcpy(const sim_op *op, const char *label, int in_graph)
{
    char d[64], s[64], extent[96];
    const struct sim_cpy *c = &op->u.cpy;

    sim_log_ptr(d, sizeof d, c->dst);
    sim_log_ptr(s, sizeof s, c->src);
    if (c->height == 1 && c->depth == 1)
        snprintf(extent, sizeof extent, "bytes=%zu", c->width);
    else
        snprintf(extent, sizeof extent, "bytes=%zux%zux%zu dpitch=%zu spitch=%zu",
                 c->width, c->height, c->depth, c->dpitch, c->spitch);
    sim_log_line(in_graph, "memcpy %s dst=%s src=%s %s stream=%s",
                 copy_kind(c->dst, c->src), d, s, extent, label);
    for (size_t z = 0; z < c->depth; z++) {
        for (size_t y = 0; y < c->height; y++) {
            memmove((char *)c->dst + (z * c->dheight + y) * c->dpitch,
                    (const char *)c->src + (z * c->sheight + y) * c->spitch, c->width);
        }
    }
}

static void run_memset(const sim_op *op, const char *label, int in_graph)
{
    const struct sim_set *m = &op->u.set;
    char d[64], extent[64];

    sim_log_ptr(d, sizeof d, m->dst);
    if (m->height == 1)
        snprintf(extent, sizeof extent, "count=%zu", m->width);
    else
        snprintf(extent, sizeof extent, "count=%zux%zu pitch=%zu", m->width, m->height,
                 m->pitch);
    sim_log_line(in_graph, "memset%u dst=%s value=0x%x %s stream=%s", m->elem * 8, d,
                 m->value, extent, label);
    for (size_t y = 0; y < m->height; y++) {
        unsigned char *row = (unsigned char *)m->dst + y * m->pitch;
        for (size_t x = 0; x < m->width; x++) {
            if (m->elem == 1)
                row[x] = (unsigned char)m->value;
            else if (m->elem == 2)
                memcpy(row + 2 * x, &(uint16_t){ (uint16_t)m->value }, 2);
            else
                memcpy(row + 4 * x, &m->value, 4);
        }
    }
}

static void run_event(const sim_op *op, const char *label, int in_graph)
{
    sim_event *e = sim_obj_get(op->u.evt.ev, SIM_K_EVENT);
    const char *what = op->kind == SIM_OP_EVENT_RECORD ? "event_record" : "event_wait";
    if (in_graph && (e == NULL || e->o.ordinal != op->u.evt.ordinal)) {
        /* undefined on a GPU: the event the node was given is gone (a line of its
         * own class: the engine tests leave event lines out) */
        sim_log_line(in_graph, "stale_%s: the graph's event was destroyed stream=%s", what,
                     label);
        return;
    }
    if (e) {
        char at[16];
        sim_log_line(in_graph, "%s e%lu%s stream=%s", what, e->o.ordinal,
                     sim_log_dev_suffix(at, sizeof at, sim_ctx_dev(e->o.ctx)), label);
    }
    if (e && op->kind == SIM_OP_EVENT_RECORD)
        sim_event_mark(e);
}

static void op_execute(sim_op *op, const char *label, int in_graph)
{
    if (op->kind != SIM_OP_EMPTY && op->kind != SIM_OP_GRAPH)
        clock_us++;
    sim_activity_op(op, label, in_graph);       /* kernels, copies and memsets */
    switch (op->kind) {
    case SIM_OP_KERNEL:
        run_kernel(op, label, in_graph);
        break;
    case SIM_OP_MEMCPY:
        run_memcpy(op, label, in_graph);
        break;
    case SIM_OP_MEMSET:
        run_memset(op, label, in_graph);
        break;
    case SIM_OP_HOST:
        sim_log_line(in_graph, "host stream=%s", label);
        op->u.host.fn(op->u.host.user);
        break;
    case SIM_OP_CALLBACK:
        sim_log_line(in_graph, "callback stream=%s", label);
        op->u.cb.fn(op->u.cb.stream, CUDA_SUCCESS, op->u.cb.user);
        break;
    case SIM_OP_EVENT_RECORD:
    case SIM_OP_EVENT_WAIT:
        run_event(op, label, in_graph);
        break;
    case SIM_OP_GRAPH:
        if (sim_log_marked())
            sim_log_line(1, "graph_launch graph%lu stream=%s", op->u.graph.g->o.ordinal, label);
        sim_graph_run(op->u.graph.g, label, 1);
        break;
    case SIM_OP_MEM_ALLOC:
        if (!op->u.mem.a->ordinal)
            sim_mem_activate(op->u.mem.a);
        break;
    case SIM_OP_MEM_FREE:
        op->u.mem.a->ordinal = 0;
        break;
    case SIM_OP_EMPTY:
        break;
    }
}

/* The log names the device an op runs on: its own, or (a node of a graph) that
 * of the stream the graph was launched on. */
void sim_op_execute(sim_op *op, const char *label, int in_graph)
{
    static int running_dev;
    int outer = running_dev, dev = op->dev1 ? op->dev1 - 1 : running_dev;
    int saved = sim_log_set_dev(dev);
    running_dev = dev;
    op_execute(op, label, in_graph);
    running_dev = outer;
    sim_log_set_dev(saved);
}

static CUresult submit(sim_stream *s, sim_op *op, int sync)
{
    CUresult rc = CUDA_SUCCESS;
    snprintf(op->label, sizeof op->label, "%s", s->label);
    op->dev1 = sim_ctx_dev(s->o.ctx) + 1;
    if (s->cap) {
        if (!sync)
            return sim_capture_record(s, op);
        sim_capture_invalidate(s->cap);
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    } else if (s->special == SIM_STREAM_LEGACY) {
        rc = sim_capture_check_legacy((sim_ctx *)s->o.ctx);
    }
    if (rc == CUDA_SUCCESS)
        sim_op_execute(op, s->label, 0);
    sim_op_release(op);
    return rc;
}

/* One driver call's submission: CUPTI's API activity and correlation (sim_activity.c). */
CUresult sim_submit(sim_stream *s, sim_op *op, int sync)
{
    sim_activity_call saved;
    int kind = op->kind;
    CUresult rc;
    sim_activity_call_begin(&saved, s);
    rc = submit(s, op, sync);
    sim_activity_call_end(&saved, kind);
    return rc;
}
