/* report_introspect.h -- report: what the engine shows of its graphs, and the
 * events it reports while building them (report_introspect.c, engine_hooks.c,
 * build_cache.c, report_dump.c).  No CUDA types.
 *
 *   events    build_template.c reports a chunk captured (before instantiation) and
 *             an executable instantiated: hooks run, AUTOGRAPH_DEBUG_DUMP writes
 *             files, the cache bounds are applied
 *   queries   the functions behind include/autograph.h (api.c calls them with the
 *             engine lock held, or from inside a hook where this thread holds it)
 */
#ifndef AG_REPORT_INTROSPECT_H
#define AG_REPORT_INTROSPECT_H

#include <autograph.h>
#include <stddef.h>

#include "op.h"

struct ag_template;

/* ---- events (engine lock held) */
void ag_introspect_captured(struct ag_template *t, int chunk);
void ag_introspect_instantiated(struct ag_template *t, int chunk, int variant);
/* Replaces a chunk's executables by one made from its graph as it is now, and
 * reports it (build_template.c); 0 or the backend's error. */
int ag_chunk_instantiate(struct ag_template *t, int chunk);

/* ---- hooks (engine_hooks.c) */
enum ag_hook_kind { AG_HOOK_CAPTURE_END, AG_HOOK_POST_INSTANTIATE };
int ag_hooks_add(enum ag_hook_kind kind, autograph_hook_fn fn, void *user,
                 autograph_hook_handle *handle);
int ag_hooks_remove(autograph_hook_handle handle);
void ag_hooks_fire(enum ag_hook_kind kind, const autograph_graph_event *event);
int ag_in_hook(void);                /* this thread runs a hook now */
void ag_step_aside(int delta);       /* +1 / -1 around a hook or backend introspection */

/* ---- cache bounds (build_cache.c) */
size_t ag_chunk_exec_bytes(int ops, size_t args_len);   /* one executable, estimated */
void ag_cache_enforce(struct ag_template *keep);

/* ---- AUTOGRAPH_DEBUG_DUMP (report_dump.c) */
void ag_dump_setup(const char *dir);  /* NULL: off; an unusable folder: one line, off */
void ag_dump_graphs_setup(const char *dir);   /* AUTOGRAPH_TRACE's folder: JSON only */
void ag_dump_program_graph(const char *json);  /* the program's own, into that folder */
void ag_dump_captured(const struct ag_template *t, int chunk);
void ag_dump_instantiated(const struct ag_template *t, int chunk, int variant);

/* ---- the backend's introspection entries, the engine stepping aside meanwhile
 * (report_introspect.c): the backend's result, or AUTOGRAPH_ERR_UNSUPPORTED */
int ag_backend_graph_data(void *graph, void *exec, char **json);
int ag_backend_dump_dot(void *graph, const char *path, int verbose);

/* ---- queries (report_introspect.c): AUTOGRAPH_* result codes */
int ag_introspect_lock(void);        /* takes the engine lock unless in a hook; 1: taken */
void ag_introspect_unlock(int taken);
void ag_introspect_pause(int who, int paused);
int ag_introspect_list(autograph_graph_info *out, int max);
int ag_introspect_exec(unsigned id, int chunk, int variant, void **exec);
int ag_introspect_instantiate(unsigned id);
int ag_introspect_graph_data(unsigned id, int chunk, int variant, char **json);
int ag_introspect_dump(unsigned id, int chunk, const char *path, int verbose);

#endif
