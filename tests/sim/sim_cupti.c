/* sim_cupti.c -- what CUPTI would say about graphs on the simulator.
 *
 * Ids, as the stand-in libcupti (tests/sim/cupti_stand_in.c) hands them out through
 * sim_tools_id (sim_entry.c): a graph's id is its creation ordinal; a node's id is
 * (id of its graph << 32) | its creation sequence number in that graph; an
 * executable graph's id is the id of the snapshot it runs.  A snapshot's nodes keep
 * the sequence numbers of the graph it was instantiated from, so the node a kernel
 * runs from in an executable has id (executable id << 32) | sequence number, as
 * CUDA's executable graphs renumber a template's nodes (PyTorch's tools_id remap).
 *
 * sim_tools_id(SIM_TOOLS_CLOCK) is the logical clock in ns, SIM_TOOLS_DUMP sends the
 * activity sink a record of every context and stream (sim_activity.h).
 *
 * SIM_GRAPH_TRACE=path appends one line per kernel node a graph runs, as CUPTI's
 * kernel activity records would give it: "<graphId> <graphNodeId> <kernel name>".
 */
#include "sim_activity.h"
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define SIM_CUPTI_SUCCESS 0
#define SIM_CUPTI_INVALID_PARAMETER 1

uint64_t sim_cupti_node_id(const sim_node *x)
{
    return ((uint64_t)x->graph->o.ordinal << 32) | (uint32_t)x->seq;
}

int sim_cupti_lookup(int what, const void *handle, uint64_t *id)
{
    const sim_node *x;
    const sim_graph *g;
    const sim_exec *e;

    if (!id)
        return SIM_CUPTI_INVALID_PARAMETER;
    if (what == SIM_TOOLS_NODE && (x = sim_obj_get(handle, SIM_K_NODE)))
        *id = sim_cupti_node_id(x);
    else if (what == SIM_TOOLS_GRAPH && (g = sim_obj_get(handle, SIM_K_GRAPH)))
        *id = g->o.ordinal;
    else if (what == SIM_TOOLS_EXEC && (e = sim_obj_get(handle, SIM_K_EXEC)))
        *id = e->g->o.ordinal;
    else if (what == SIM_TOOLS_CLOCK)
        *id = sim_clock_now() * 1000;       /* the stand-in's cuptiGetTimestamp */
    else if (what == SIM_TOOLS_DUMP)
        sim_activity_dump(), *id = 0;       /* its cuptiActivityEnableAndDump */
    else
        return SIM_CUPTI_INVALID_PARAMETER;
    return SIM_CUPTI_SUCCESS;
}

void sim_cupti_trace_node(const sim_node *x)
{
    static FILE *trace;
    static int state;               /* 0 unread, 1 on, -1 off */
    const char *path;

    if (!state) {
        path = getenv("SIM_GRAPH_TRACE");
        trace = path && *path ? fopen(path, "a") : NULL;
        state = trace ? 1 : -1;
        if (trace)
            setvbuf(trace, NULL, _IOLBF, 0);
        else if (path && *path)
            fprintf(stderr, "sim: cannot open SIM_GRAPH_TRACE='%s'\n", path);
    }
    if (state < 0 || x->op.kind != SIM_OP_KERNEL)
        return;
    fprintf(trace, "%lu %llu %s\n", x->graph->o.ordinal,
            (unsigned long long)sim_cupti_node_id(x),
            x->op.u.k.kern ? x->op.u.k.kern->name : "?");
}
