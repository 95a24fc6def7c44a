/* cupti_ids.h -- the ids CUPTI gives graphs, graph nodes and executable graphs (the
 * ids its kernel activity records carry in graphId / graphNodeId).
 *
 * CUDA 13.0 has no cuGraphNodeGetToolsId; CUPTI has cuptiGetGraphNodeId,
 * cuptiGetGraphId and cuptiGetGraphExecId.  libcupti is never linked and never
 * loaded until an id is asked for (graph data: AUTOGRAPH_DEBUG_DUMP or
 * autograph_graph_data) or AUTOGRAPH_TRACE starts (trace_cupti.c).  Handles are CUgraph / CUgraphNode / CUgraphExec.
 */
#ifndef AG_CUPTI_IDS_H
#define AG_CUPTI_IDS_H

#include <stdint.h>

/* The libcupti handle (opened on the first call: the instance the process already has,
 * else the usual names and toolkit paths), or NULL; shared with the tracer. */
void *ag_cupti_library(void);

/* 1 when libcupti and the three functions are there (the first call loads it; when
 * they are not, one line on stderr says so, once). */
int ag_cupti_ids_available(void);

/* 0 and the id, or CUPTI's error (or -1 without CUPTI). */
int ag_cupti_node_id(void *node, uint64_t *id);
int ag_cupti_graph_id(void *graph, uint32_t *id);
int ag_cupti_exec_id(void *exec, uint32_t *id);

#endif
