/* json_escape.h -- the shim's one JSON string escaper, for its JSON writers
 * (trace_json.c: the trace; backend_cuda_inspect.c: a graph's data).
 */
#ifndef AG_JSON_ESCAPE_H
#define AG_JSON_ESCAPE_H

#include <stddef.h>

/* Writes s as the inside of a JSON string (no quotes) through put(ctx, bytes, n):
 * runs of bytes as they are, an escape for each quote, backslash and control
 * character. */
void ag_json_escape(const char *s, void (*put)(void *ctx, const char *bytes, size_t n),
                    void *ctx);

#endif
