/* autograph.h -- public C interface of libautograph.
 *
 * libautograph is used as LD_PRELOAD=libautograph.so ./app; nothing needs to be
 * linked.  This header is for programs and plugins that want to talk to the shim
 * when it is loaded: control it (enable, disable, flush, reset), list the graphs it
 * built, get their raw CUgraph / CUgraphExec handles, their graph data (JSON, in
 * the shape of PyTorch's CUDAGraph.get_graph_data) and DOT dumps, and register
 * hooks that run when a graph is captured and when it is instantiated.
 *
 * Two ways to use it:
 *   - plain: the functions are declared here and exported by the loaded shim.  A
 *     plugin named by AUTOGRAPH_PLUGIN, or a program that always runs under the
 *     shim, calls them directly (its references bind to the preloaded shim).
 *   - optional: `#define AUTOGRAPH_OPTIONAL` before including this header, and the
 *     same names become static inline helpers that look the shim's functions up
 *     with dlsym(RTLD_DEFAULT, ...) on first use: the program works unchanged
 *     without the shim, where every call returns AUTOGRAPH_ERR_NOT_LOADED
 *     (autograph_version: NULL).  Link with -ldl on glibc older than 2.34.
 *
 * Graphs: the shim records a repeating window of work and builds it into a
 * *template* (template_id), cut into chunks; each chunk is one CUgraph with one or
 * more executable graphs (variants: argument sets that recur get their own).
 * A graph is named by (template_id, chunk), an executable by (template_id, chunk,
 * variant).  Handles stay valid until the graph is dropped (autograph_reset, a
 * cache bound, a module unload, a freed buffer, ...); the CUgraph of a chunk lives
 * as long as its template (the shim patches executables through its nodes).
 *
 * Threads: every function may be called from any thread.  Inside a hook only the
 * functions marked "in hooks" may be called (others return AUTOGRAPH_ERR_IN_HOOK);
 * CUDA calls made inside a hook go straight to the driver (the shim steps aside and
 * issues nothing it holds).
 */
#ifndef AUTOGRAPH_H
#define AUTOGRAPH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AUTOGRAPH_VERSION_MAJOR 0
#define AUTOGRAPH_VERSION_MINOR 2
#define AUTOGRAPH_VERSION_PATCH 0
#define AUTOGRAPH_VERSION_STRING "0.2.0"

/* Results: 0 or a count on success, one of these on failure. */
#define AUTOGRAPH_OK               0
#define AUTOGRAPH_ERR_NOT_LOADED  -1   /* the shim is not loaded (AUTOGRAPH_OPTIONAL) */
#define AUTOGRAPH_ERR_OFF         -2   /* the shim runs with AUTOGRAPH=off */
#define AUTOGRAPH_ERR_NOT_FOUND   -3   /* no such graph, chunk, variant or hook */
#define AUTOGRAPH_ERR_INVALID     -4   /* a bad argument */
#define AUTOGRAPH_ERR_IN_HOOK     -5   /* not allowed inside a hook */
#define AUTOGRAPH_ERR_DRIVER      -6   /* the driver refused (AUTOGRAPH_LOG=info says why) */
#define AUTOGRAPH_ERR_UNSUPPORTED -7   /* not available in this build or backend */
#define AUTOGRAPH_ERR_FULL        -8   /* too many hooks (AUTOGRAPH_HOOKS_MAX) */
#define AUTOGRAPH_ERR_NO_MEMORY   -9

#define AUTOGRAPH_HOOKS_MAX 64

/* One chunk graph, as autograph_list_graphs describes it. */
typedef struct autograph_graph_info {
    unsigned template_id;          /* the window it was built from */
    int chunk, nchunks;            /* this chunk, and how many its template has */
    int ops, kernels;              /* recorded ops (kernels) in this chunk */
    int variants;                  /* executable graphs now (0: not instantiated yet) */
    unsigned long long replays;    /* complete replays of its template */
    unsigned long long last_used;  /* replay clock of its template's last launch */
    unsigned long long mem_bytes;  /* estimated device bytes of its executables */
    void *graph;                   /* CUgraph: the template of this chunk */
} autograph_graph_info;

/* What a hook is told. */
typedef struct autograph_graph_event {
    unsigned template_id;
    int chunk;
    int variant;                   /* post-instantiate: the executable; capture end: -1 */
    void *graph;                   /* CUgraph, live */
    void *exec;                    /* CUgraphExec (post-instantiate), else NULL */
} autograph_graph_event;

typedef void (*autograph_hook_fn)(const autograph_graph_event *event, void *user);
typedef unsigned long autograph_hook_handle;   /* 0 is never a valid handle */

/* A plugin (AUTOGRAPH_PLUGIN=path.so) defines this; the shim calls it once when its
 * engine starts (before any graph is built).  Nonzero: the shim says so on stderr. */
int autograph_plugin_init(void);
#define AUTOGRAPH_PLUGIN_INIT "autograph_plugin_init"

/* The functions.  X(return type, name, parameters, arguments, value when absent) */
#define AUTOGRAPH_FUNCTIONS(X)                                                        \
    /* The version of the loaded shim, e.g. "0.2.0".  In hooks. */                   \
    X(const char *, autograph_version, (void), (), NULL)                              \
    /* Graphing on again after autograph_disable (the speed guard, AUTOGRAPH_GUARD_MS,\
     * may still have it paused where it measured graphing no faster). */           \
    X(int, autograph_enable, (void), (), AUTOGRAPH_ERR_NOT_LOADED)                    \
    /* Issues held work; then records nothing and replays nothing (every call goes   \
     * to the driver as made) until autograph_enable.  Graphs are kept. */           \
    X(int, autograph_disable, (void), (), AUTOGRAPH_ERR_NOT_LOADED)                   \
    /* Issues held work now and ends the current window, as a sync would. */         \
    X(int, autograph_flush, (void), (), AUTOGRAPH_ERR_NOT_LOADED)                     \
    /* Drops every graph (templates and executables); windows must repeat again     \
     * (AUTOGRAPH_WARMUP) before they are rebuilt. */                                \
    X(int, autograph_reset, (void), (), AUTOGRAPH_ERR_NOT_LOADED)                     \
    /* How many chunk graphs exist; the first min(count, max) are written to out.    \
     * In hooks (the graph being built is listed too). */                            \
    X(int, autograph_list_graphs, (autograph_graph_info *out, int max), (out, max),  \
      AUTOGRAPH_ERR_NOT_LOADED)                                                       \
    /* The CUgraphExec of a variant.  In hooks. */                                   \
    X(int, autograph_graph_exec, (unsigned template_id, int chunk, int variant,      \
                                  void **exec),                                       \
      (template_id, chunk, variant, exec), AUTOGRAPH_ERR_NOT_LOADED)                  \
    /* Instantiates every chunk of a template afresh: its executables are replaced  \
     * by one made from its CUgraph as it is now (post-instantiate hooks run).  With \
     * AUTOGRAPH_KEEP_GRAPH=1 this is how to instantiate before the first replay. */ \
    X(int, autograph_instantiate, (unsigned template_id), (template_id),             \
      AUTOGRAPH_ERR_NOT_LOADED)                                                       \
    /* The graph data of a variant as JSON (see README, "Graph data"), NUL-ended in  \
     * buf when it fits: returns its length without the NUL (as snprintf).  In hooks.\
     */                                                                               \
    X(int, autograph_graph_data, (unsigned template_id, int chunk, int variant,      \
                                  char *buf, size_t size),                            \
      (template_id, chunk, variant, buf, size), AUTOGRAPH_ERR_NOT_LOADED)             \
    /* Writes a chunk's CUgraph to path as Graphviz DOT (cuGraphDebugDotPrint;       \
     * verbose: every node's parameters).  In hooks. */                              \
    X(int, autograph_debug_dump, (unsigned template_id, int chunk, const char *path, \
                                  int verbose),                                       \
      (template_id, chunk, path, verbose), AUTOGRAPH_ERR_NOT_LOADED)                  \
    /* fn runs when a chunk's capture ended, before it is instantiated: event->graph \
     * is live, event->exec NULL.  Hooks run in registration order.  In hooks. */    \
    X(int, autograph_register_capture_end_hook,                                       \
      (autograph_hook_fn fn, void *user, autograph_hook_handle *handle),              \
      (fn, user, handle), AUTOGRAPH_ERR_NOT_LOADED)                                   \
    /* fn runs after every instantiation (a new variant, a lazy or explicit one):    \
     * event->exec is the new executable.  In hooks. */                              \
    X(int, autograph_register_post_instantiate_hook,                                  \
      (autograph_hook_fn fn, void *user, autograph_hook_handle *handle),              \
      (fn, user, handle), AUTOGRAPH_ERR_NOT_LOADED)                                   \
    /* Removes a hook.  In hooks (a hook may remove itself). */                      \
    X(int, autograph_remove_hook, (autograph_hook_handle handle), (handle),          \
      AUTOGRAPH_ERR_NOT_LOADED)

#ifndef AUTOGRAPH_OPTIONAL

#define AUTOGRAPH_DECLARE_(ret, name, params, args, absent) ret name params;
AUTOGRAPH_FUNCTIONS(AUTOGRAPH_DECLARE_)
#undef AUTOGRAPH_DECLARE_

#else /* AUTOGRAPH_OPTIONAL: resolved at run time, absent without the shim */

#include <dlfcn.h>
#ifdef RTLD_DEFAULT
#define AUTOGRAPH_RTLD_DEFAULT_ RTLD_DEFAULT
#else
#define AUTOGRAPH_RTLD_DEFAULT_ ((void *)0)   /* glibc's value, without _GNU_SOURCE */
#endif

#define AUTOGRAPH_DEFINE_(ret, name, params, args, absent)                           \
    static inline ret name params                                                     \
    {                                                                                 \
        typedef ret(*name##_fn_) params;                                              \
        static name##_fn_ fn_;                                                        \
        static int looked_;                                                           \
        if (!__atomic_load_n(&looked_, __ATOMIC_ACQUIRE)) {                           \
            __atomic_store_n(&fn_, (name##_fn_)dlsym(AUTOGRAPH_RTLD_DEFAULT_, #name), \
                             __ATOMIC_RELAXED);                                       \
            __atomic_store_n(&looked_, 1, __ATOMIC_RELEASE);                          \
        }                                                                             \
        return fn_ ? fn_ args : absent;                                               \
    }
AUTOGRAPH_FUNCTIONS(AUTOGRAPH_DEFINE_)
#undef AUTOGRAPH_DEFINE_

#endif /* AUTOGRAPH_OPTIONAL */

/* A short description of a result code (works without the shim). */
static inline const char *autograph_strerror(int code)
{
    switch (code) {
    case AUTOGRAPH_ERR_NOT_LOADED:  return "libautograph is not loaded";
    case AUTOGRAPH_ERR_OFF:         return "libautograph runs with AUTOGRAPH=off";
    case AUTOGRAPH_ERR_NOT_FOUND:   return "no such graph, chunk, variant or hook";
    case AUTOGRAPH_ERR_INVALID:     return "invalid argument";
    case AUTOGRAPH_ERR_IN_HOOK:     return "not allowed inside a hook";
    case AUTOGRAPH_ERR_DRIVER:      return "the CUDA driver refused";
    case AUTOGRAPH_ERR_UNSUPPORTED: return "not supported";
    case AUTOGRAPH_ERR_FULL:        return "too many hooks";
    case AUTOGRAPH_ERR_NO_MEMORY:   return "out of memory";
    default:                        return code >= 0 ? "success" : "unknown error";
    }
}

#ifdef __cplusplus
}
#endif
#endif /* AUTOGRAPH_H */
