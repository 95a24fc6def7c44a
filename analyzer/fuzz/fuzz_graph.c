/* fuzz_graph.c -- libFuzzer target: the input is a graph data file (get_graph_data
 * JSON), used to analyze a fixed trace, every report written. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_sizes(size);
    fuzz_run(fuzz_trace, sizeof fuzz_trace - 1, data, size);
    return 0;
}
