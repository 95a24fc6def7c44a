/* trace_cupti.h -- AUTOGRAPH_TRACE: CUPTI activity records of the whole run, streamed to
 * a Chrome trace file that Perfetto opens and autograph-analyze reads
 * (analyzer/FORMAT.md, sections 1c and 1d), with the shim's graphs beside it.
 */
#ifndef AG_TRACE_CUPTI_H
#define AG_TRACE_CUPTI_H

/* Starts tracing (once per process) to `pattern` (%p: the pid): opens libcupti,
 * creates the file, enables kernel, memcpy, memset and launch-API records and the
 * stream-order ones (event records, synchronizations, streams: a kind CUPTI refuses is
 * named in one line, tracing goes on without it), and makes "<file>.graphs" the folder
 * of graph data files (report_dump.c).  1 when tracing; 0 when not (no pattern; or one
 * line on stderr says why: file, CUPTI). */
int ag_trace_start(const char *pattern);

/* The program instantiated executable graph `exec` from `graph` (CUgraph, CUgraphExec):
 * while tracing, its graph data goes into the graphs folder too. */
void ag_trace_program_graph(void *graph, void *exec);

/* Issues what the engine holds, waits for the device, flushes CUPTI's buffers and
 * completes the file (once; an atexit handler and the exit summary call it). */
void ag_trace_finish(void);

#endif
