/* cupti_stand_in.c -- build/sim/libcupti.so.13: the three CUPTI id functions the
 * shim uses (cuptiGetGraphNodeId, cuptiGetGraphId, cuptiGetGraphExecId), answered by
 * the simulator (sim_cupti.c), so that graph data on the simulator carries ids like
 * a GPU's.  Found first through LD_LIBRARY_PATH=build/sim, as libcuda.so.1 is.
 * Nothing else of CUPTI is here.
 */
#include <cuda.h>
#include <stdint.h>

#define STAND_IN __attribute__((visibility("default")))

/* Exported by the simulator's libcuda.so.1 (sim_entry.c). */
int sim_tools_id(int what, const void *handle, unsigned long long *id);

STAND_IN int cuptiGetGraphNodeId(CUgraphNode node, uint64_t *nodeId)
{
    unsigned long long id = 0;
    int rc = sim_tools_id(0, node, &id);
    if (rc == 0 && nodeId)
        *nodeId = id;
    return rc;
}

static int id32(int what, const void *handle, uint32_t *out)
{
    unsigned long long id = 0;
    int rc = sim_tools_id(what, handle, &id);
    if (rc == 0 && out)
        *out = (uint32_t)id;
    return rc;
}

STAND_IN int cuptiGetGraphId(CUgraph graph, uint32_t *pId)
{
    return id32(1, graph, pId);
}

STAND_IN int cuptiGetGraphExecId(CUgraphExec graphExec, uint32_t *pId)
{
    return id32(2, graphExec, pId);
}
