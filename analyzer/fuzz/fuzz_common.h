/* fuzz_common.h -- shared by the libFuzzer targets: run the analysis and every report
 * (text, JSON, DOT, SVG, annotated trace) into memory, so that the whole pipeline is
 * fuzzed, not only the readers.  Read buffers are tiny and vary with the input's
 * length, so tokens cross block boundaries everywhere; so does the eager window
 * limit (a third of the inputs cut windows after 2 to 6 records). */
#ifndef AGA_FUZZ_COMMON_H
#define AGA_FUZZ_COMMON_H

#include "analysis.h"
#include "eager.h"
#include "graph_read.h"
#include "input.h"
#include "json_stream.h"
#include "report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A small graph (exec graph 7: two branches and a join) and a trace that replays it,
 * for the target whose input is the other half. */
static const char fuzz_graph[] =
    "{\"exec_graph_id\": 7, \"nodes\": ["
    "{\"index\": 0, \"node_type\": \"kernel\", \"node_id\": 0, \"kernel_name\": \"a0\", "
    "\"dependencies\": [], \"dependents\": [1]},"
    "{\"index\": 1, \"node_type\": \"kernel\", \"node_id\": 1, \"kernel_name\": \"a1\", "
    "\"dependencies\": [0], \"dependents\": [4]},"
    "{\"index\": 2, \"node_type\": \"kernel\", \"node_id\": 2, \"kernel_name\": \"b0\", "
    "\"dependencies\": [], \"dependents\": [3]},"
    "{\"index\": 3, \"node_type\": \"empty\", \"node_id\": 3, \"kernel_name\": null, "
    "\"dependencies\": [2], \"dependents\": [4]},"
    "{\"index\": 4, \"node_type\": \"kernel\", \"node_id\": 4, \"kernel_name\": \"j\", "
    "\"dependencies\": [1, 3], \"dependents\": []}]}";

#define FUZZ_KERNEL(name, ts, node, ch) \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":1,\"ts\":" ts \
    ",\"dur\":10,\"args\":{\"correlation\":5,\"graph id\":7,\"graph node id\":" node \
    ",\"channel\":" ch "}}"
static const char fuzz_trace[] =
    "{\"traceEvents\":[" FUZZ_KERNEL("a0", "0", "0", "1") "," FUZZ_KERNEL("b0", "10.5", "2", "1")
    "," FUZZ_KERNEL("a1", "21", "1", "1") "," FUZZ_KERNEL("j", "31.5", "4", "2") "]}";

static void fuzz_sizes(size_t n)
{
    js_set_buffer_size(1 + n % 13);
    input_set_chunk(2 + n % 7);
    eager_set_window_max(n % 3 ? 0 : 2 + (uint32_t)(n % 5));
}

static void fuzz_reports(const struct analysis *a, const void *trace_data, size_t trace_size)
{
    char *buf = NULL, err[512];
    size_t size = 0;
    struct out o;
    struct report_opts ro = { 2, "fuzz" };
    struct input *in;
    if (out_open_mem(&o, &buf, &size) != 0)
        return;
    report_text(&o, a, &ro);
    report_json(&o, a);
    report_dot(&o, a);
    report_svg(&o, a);
    in = input_open_mem(trace_data, trace_size, "trace");
    if (in != NULL)
        trace_annotate_input(a, in, &o, err, sizeof err);
    input_close(in);
    out_close(&o, err, sizeof err);
    free(buf);
}

/* Read the trace and graph halves (each from memory), analyze, report. */
static void fuzz_run(const void *trace_data, size_t trace_size, const void *graph_data,
                     size_t graph_size)
{
    struct trace t;
    struct graphset gs;
    struct analysis a;
    char err[512];
    struct input *tin = input_open_mem(trace_data, trace_size, "trace");
    struct input *gin = input_open_mem(graph_data, graph_size, "graph");
    size_t dups;
    trace_init(&t, "trace");
    if (graphset_init(&gs) == 0 && tin && gin && trace_read(&t, tin, err, sizeof err) == 0
        && graph_read(&gs, gin, err, sizeof err) == 0) {
        graphset_index(&gs, &dups);
        if (analysis_run(&a, &t, &gs, 2.0, err, sizeof err) == 0)
            fuzz_reports(&a, trace_data, trace_size);
        analysis_free(&a);
    }
    input_close(tin);
    input_close(gin);
    graphset_free(&gs);
    trace_free(&t);
}

#endif
