/* fuzz_trace.c -- libFuzzer target: the input is a Chrome trace (Kineto's or
 * libautograph's), analyzed against a fixed graph, every report written. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_sizes(size);
    fuzz_run(data, size, fuzz_graph, sizeof fuzz_graph - 1);
    return 0;
}
