/* backend.h -- what the engine asks of a device backend.
 *
 * The engine (engine*.c) decides what to record, hold, build and replay; a backend
 * does it on a real driver.  backend_cuda.c is the CUDA driver backend; the unit
 * tests supply a fake one.  Handles are opaque pointers; results are the driver's
 * error codes (0 is success).  All calls are made with the lock of the engine whose
 * work they do held (one engine per context: engine_table.c), so two engines may call
 * at once: what the backend keeps per context is its own per context.
 */
#ifndef AG_BACKEND_H
#define AG_BACKEND_H

#include "op.h"

#define AG_MAX_SLOTS 16   /* streams in one graph */

struct ag_backend {
    /* Issues `op` to the driver now, exactly as the program's call would have been
     * made (held work on a flush or a mismatch).  Returns the driver's result. */
    int (*issue)(const struct ag_op *op);

    /* Builds a graph of ops[0..n) on the backend's own streams (op->slot picks one of
     * `nslots`; op->link says how an EVENT_WAIT is built).  nodes[i] receives a handle
     * for every patchable op (kernel, memset, memcpy) and every op whose node names
     * the program's event (EVENT_RECORD; EVENT_WAIT linked AG_LINK_EXTERNAL), NULL
     * for the others.  An event op whose event is 0 (the program destroyed it since it
     * was recorded: replay_events.c) gets a node naming the placeholder (set_event). */
    int (*build)(const struct ag_op *ops, int n, int nslots, void **graph, void **nodes);

    /* Instantiates a built graph into an executable one. */
    int (*instantiate)(void *graph, void **exec);

    /* Gives node `node` of `exec` the args of `op` (same shape as when built). */
    int (*patch)(void *exec, void *node, const struct ag_op *op);

    /* Points the node `node` of an event op (one build gave a handle for) at `event`:
     * in `exec` when it is not NULL, else in the graph it was built in.  event 0: at a placeholder
     * event of the backend's own, which no launched graph names (the program is
     * destroying the event: replay_events.c).  NULL: graphs naming a destroyed
     * event are dropped. */
    int (*set_event)(void *exec, void *node, uintptr_t event);

    /* Destroys the program's event `event`: a destroy the engine held back until the
     * held ops that name it went out (replay_events.c).  NULL: an event's destroy
     * ends the window instead. */
    int (*destroy_event)(uintptr_t event);

    /* Launches `exec`, built in context ctx, on streams[0], after all work already
     * submitted to every streams[i] and before any work submitted to them later. */
    int (*launch)(void *exec, uintptr_t ctx, const uintptr_t *streams, int nstreams);

    /* Makes context `ctx` current on the calling thread: the engine's launcher thread
     * (replay_launcher.c), before it patches and launches chunks of that context for
     * the program's threads.  NULL: the program's threads launch every chunk. */
    int (*use_context)(uintptr_t ctx);

    /* Makes context ctx current on the calling thread for a while (a thread of another
     * context ending this context's window: engine_table.c), and puts back what was
     * current; *token says what leave_context undoes.  NULL: never needed. */
    int (*enter_context)(uintptr_t ctx, int *token);
    void (*leave_context)(int token);

    /* The device ordinal of the calling thread's current context, or -1 (the exit
     * summary's per-context lines).  NULL: unknown. */
    int (*current_device)(void);

    /* Release what build/instantiate returned (errors are ignored). */
    void (*release_graph)(void *graph, void **nodes, int n);
    void (*release_exec)(void *exec);

    /* 1 when created stream `stream` synchronizes with the legacy default stream (it
     * was made without a non-blocking flag), 0 when it does not.  NULL: always 1. */
    int (*stream_blocking)(uintptr_t stream);

    /* 1 when build() orders work on the legacy stream and on blocking streams within a
     * chunk by edges, as the legacy stream's implicit synchronization orders it: then a
     * window may mix them, and a chunk that does is launched on the legacy stream
     * (which orders it with all other work of blocking streams).  0: such a window is
     * not graphed (legacy_mix). */
    int legacy_edges;

    /* Kernel op `op` (as recorded) and a call of entry point `entry` unloading the
     * module or library `handle` (its first argument): 1 when op's function goes with
     * it, 0 when it does not, -1 when the backend cannot tell.  NULL: always -1 (every
     * unload drops every graph). */
    int (*kernel_unloaded)(const struct ag_op *op, int entry, uintptr_t handle);

    /* Kernel op `op` (as recorded; args may be NULL): 1 when its function is a
     * collective, which waits on the GPU for the same kernel of other processes
     * (NCCL's), 0 when it is not.  Asked when a template is built, never per launch:
     * a chunk ends after each collective, so that it is launched at the collective's
     * own call (build_collective.c).  NULL: no kernel is. */
    int (*waits_for_peers)(const struct ag_op *op);

    /* Introspection (include/autograph.h, AUTOGRAPH_DEBUG_DUMP); NULL where a backend
     * has none.  dump_dot writes a built graph to `path` as Graphviz DOT (verbose:
     * every node's parameters); graph_data describes `graph` instantiated as `exec`
     * as JSON (README, "Graph data") in a malloc'd string. */
    int (*dump_dot)(void *graph, const char *path, int verbose);
    int (*graph_data)(void *graph, void *exec, char **json);

    /* The name of the kernel function whose handle a kernel op's shape begins with
     * (AG_KERNEL_FUNC_BYTES), for AUTOGRAPH_EXPLAIN; NULL when unknown.  NULL: none. */
    const char *(*function_name)(uint64_t func);
};

#endif
