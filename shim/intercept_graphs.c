/* intercept_graphs.c -- intercept: the program's own graph instantiations.
 *
 * Strong wrappers (overriding the weak forwarding ones of intercept_wrappers.c) for
 * every cuGraphInstantiate* entry point: when the call succeeds while AUTOGRAPH_TRACE
 * traces, the new executable's graph data goes beside the trace (trace_cupti.c), so
 * that the analyzer can classify the replays of the program's own graphs (PyTorch's
 * CUDA graphs, ...) as well as the shim's; with AUTOGRAPH_GRAPH_DATA, into that folder
 * (graph_data.c, no CUPTI: beside another tool's trace).  The shim's own instantiations call the
 * driver directly and do not come through here.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "counters.h"
#include "driver.h"
#include "engine.h"
#include "entry_signatures.h"
#include "intercept_wrapper.h"
#include "graph_data.h"
#include "trace_cupti.h"

#define AG_INSTANTIATE(sym)                                                    \
    AG_WRAPPER(, sym, (void)0,                                                 \
               if (result == CUDA_SUCCESS) {                                   \
                   ag_trace_program_graph(hGraph, *phGraphExec);               \
                   ag_graph_data_program(hGraph, *phGraphExec);                \
               })

AG_INSTANTIATE(cuGraphInstantiate)
AG_INSTANTIATE(cuGraphInstantiate_v2)
AG_INSTANTIATE(cuGraphInstantiateWithFlags)
AG_INSTANTIATE(cuGraphInstantiateWithParams)
AG_INSTANTIATE(cuGraphInstantiateWithParams_ptsz)
