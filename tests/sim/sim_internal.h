/* sim_internal.h -- types and functions shared by the files of the CPU driver
 * simulator (build/sim/libcuda.so.1).
 *
 * Execution model: every export takes one global recursive lock for its whole
 * duration (sim_entry.c), so everything below runs serialised and may call back
 * into the driver from kernels and host callbacks.  Work executes at submission
 * on the calling thread (every stream is always complete) unless the stream is
 * capturing, in which case it becomes a node of the capture graph (sim_op.c).
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaProfiler.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include "sim.h"

#define SIM_DRIVER_VERSION 13000
#define SIM_TOTAL_MEM (80ULL << 30)
#define SIM_LABEL_MAX 16
#define SIM_MAX_DEVICES 8

/* ---- handle registry (sim_handle.c): every CU* handle is a registered object */
enum sim_kind {
    SIM_K_CTX = 1, SIM_K_STREAM, SIM_K_EVENT, SIM_K_MODULE, SIM_K_FUNC,
    SIM_K_GRAPH, SIM_K_NODE, SIM_K_EXEC, SIM_K_MEMHANDLE, SIM_K_COUNT
};

struct sim_ctx;
typedef struct sim_obj {
    void *self;                 /* hash key: the handle value */
    int kind;
    unsigned long ordinal;      /* creation ordinal within the kind, from 1 */
    struct sim_ctx *ctx;        /* owning context, NULL for context-less objects */
    UT_hash_handle hh;
} sim_obj;

void *sim_obj_new(int kind, size_t size, struct sim_ctx *ctx);
void *sim_obj_get(const void *handle, int kind);
void sim_obj_free(void *obj);
/* After the initialisation check, the object or NULL with *rc = missing. */
void *sim_obj_need(const void *handle, int kind, CUresult missing, CUresult *rc);
/* Objects of one kind owned by ctx, in creation order; caller frees the array. */
size_t sim_obj_list(int kind, struct sim_ctx *ctx, void ***out);

/* ---- node sets (sim_graph.c) */
struct sim_node;
typedef struct sim_nodes {
    struct sim_node **v;
    size_t n, cap;
} sim_nodes;

void sim_nodes_push(sim_nodes *s, struct sim_node *n);
int sim_nodes_has(const sim_nodes *s, const struct sim_node *n);
void sim_nodes_remove(sim_nodes *s, const struct sim_node *n);
void sim_nodes_set(sim_nodes *dst, struct sim_node *const *v, size_t n);
void sim_nodes_union(sim_nodes *dst, const sim_nodes *src);
void sim_nodes_free(sim_nodes *s);

/* ---- contexts (sim_context.c) */
typedef struct sim_ctx {
    sim_obj o;
    int primary, active;
    int dev;                    /* its device's ordinal */
    unsigned flags;
    struct sim_stream *legacy;
    struct sim_ctx **peers;     /* contexts whose memory it may access (sim_peer.c) */
    size_t npeers;
} sim_ctx;

CUresult sim_need_init(void);
CUresult sim_need_ctx(sim_ctx **out);
sim_ctx *sim_ctx_check(CUcontext h);   /* live, active context or NULL */
CUresult sim_need_device(CUdevice dev);
int sim_device_count(void);            /* SIM_DEVICES (sim_device.c) */
int sim_ctx_dev(const sim_ctx *c);     /* c's device, 0 for NULL */

/* ---- peer access (sim_peer.c) */
int sim_peer_enabled(const sim_ctx *from, const sim_ctx *to);
void sim_peer_forget(sim_ctx *c);      /* c goes away: no peer access from or to it */

/* ---- per-thread state (sim_entry.c) */
typedef struct sim_tls_pt { sim_ctx *ctx; struct sim_stream *stream; } sim_tls_pt;
typedef struct sim_tls {
    sim_ctx *stack[32];
    int depth;
    int ptds;                          /* current export is a _ptds/_ptsz one */
    CUstreamCaptureMode mode;          /* cuThreadExchangeStreamCaptureMode */
    sim_tls_pt pt[8];                  /* per-thread default streams by context */
} sim_tls;
sim_tls *sim_tls_get(void);
void sim_with_lock(void (*fn)(void));   /* fn under the global lock (exit time) */

/* ---- memory (sim_memory.c, sim_vmm.c) */
enum sim_mem_kind {
    SIM_MEM_DEVICE, SIM_MEM_MANAGED, SIM_MEM_HOST, SIM_MEM_REGISTERED,
    SIM_MEM_VMM, SIM_MEM_ASYNC
};
typedef struct sim_alloc {
    uintptr_t base;
    size_t size;
    int kind;
    unsigned long ordinal;      /* 0: reserved by a graph, not allocated now */
    int graph_owned, low32;
    unsigned flags;
    sim_ctx *ctx;
    UT_hash_handle hh;          /* keyed by base */
} sim_alloc;

sim_alloc *sim_mem_find(uintptr_t p);                 /* allocation containing p */
sim_alloc *sim_mem_find_base(uintptr_t p);            /* allocation starting at p */
CUresult sim_mem_check_range(uintptr_t p, size_t n);  /* device side of an op */
int sim_mem_is_device(uintptr_t p);
int sim_mem_dev(uintptr_t p);          /* device of the allocation holding p, or -1 */
/* active: takes the next ordinal now (0: a graph reservation, see activate) */
sim_alloc *sim_mem_track(uintptr_t base, size_t size, int kind, sim_ctx *ctx, int active);
void sim_mem_untrack(sim_alloc *a);
void sim_mem_activate(sim_alloc *a);
void sim_mem_release(sim_alloc *a);     /* free (or deactivate) by kind */
void sim_mem_drop_ctx(sim_ctx *ctx);
void *sim_mem_raw_alloc(size_t size, int low32);
void sim_mem_raw_free(void *p, size_t size, int low32);
CUresult sim_mem_alloc_device(CUdeviceptr *dptr, size_t size, int kind, int low32);
CUresult sim_mem_free_device(CUdeviceptr dptr);
CUresult sim_mem_get_info(size_t *free_b, size_t *total_b);
CUresult sim_mem_address_range(CUdeviceptr *base, size_t *size, CUdeviceptr p);
CUresult sim_mem_host_alloc(void **pp, size_t size, unsigned flags);
CUresult sim_mem_host_device_pointer(CUdeviceptr *d, void *p, unsigned flags);
CUresult sim_mem_alloc_pitch(CUdeviceptr *d, size_t *pitch, size_t w, size_t h,
                             unsigned elem, int low32);
typedef void (*sim_alloc_visit)(const sim_alloc *a, void *user);
void sim_mem_foreach_live(sim_alloc_visit fn, void *user);   /* by ordinal */

/* ---- operations (sim_op.c) */
enum sim_op_kind {
    SIM_OP_KERNEL, SIM_OP_MEMCPY, SIM_OP_MEMSET, SIM_OP_HOST, SIM_OP_CALLBACK,
    SIM_OP_EVENT_RECORD, SIM_OP_EVENT_WAIT, SIM_OP_GRAPH, SIM_OP_EMPTY,
    SIM_OP_MEM_ALLOC, SIM_OP_MEM_FREE
};
struct sim_func;
struct sim_kernel;
struct sim_event;
struct sim_graph;
typedef struct sim_op {
    int kind;
    int dev1;                    /* device + 1 it runs on; 0: the launching stream's */
    char label[SIM_LABEL_MAX];   /* stream submitted to; "" for explicit nodes */
    union {
        struct {
            struct sim_func *fn;         /* the handle (may outlive its module) */
            const struct sim_kernel *kern;
            unsigned grid[3], block[3], smem;
            unsigned char *args;
            void **argv;         /* pointers into args, for kernelParams views */
        } k;
        struct sim_cpy {
            uintptr_t dst, src;
            size_t width, height, depth, dpitch, dheight, spitch, sheight;
        } cpy;
        struct sim_set { uintptr_t dst; size_t pitch, width, height; unsigned value, elem; } set;
        struct { CUhostFn fn; void *user; } host;
        struct { CUstreamCallback fn; void *user; CUstream stream; } cb;
        struct { struct sim_event *ev; unsigned long ordinal; } evt;  /* sim_event_op */
        struct { struct sim_graph *g; int owned; } graph;
        struct { sim_alloc *a; } mem;
    } u;
} sim_op;

void sim_op_copy(sim_op *dst, const sim_op *src);
void sim_op_release(sim_op *op);
CUgraphNodeType sim_op_node_type(const sim_op *op);
/* Executes op now; label: the stream to name in the log; in_graph: run by a graph. */
void sim_op_execute(sim_op *op, const char *label, int in_graph);
/* Takes ownership of op: executes it, or records it when s is capturing.
 * sync: the API call is synchronous (not allowed inside a capture). */
CUresult sim_submit(struct sim_stream *s, sim_op *op, int sync);
uint64_t sim_clock_now(void);

/* ---- copies (sim_copy.c) */
CUresult sim_op_from_memcpy3d(sim_op *op, const CUDA_MEMCPY3D *p);

/* ---- streams and events (sim_stream.c, sim_event.c) */
struct sim_capture;
typedef struct sim_stream {
    sim_obj o;
    char label[SIM_LABEL_MAX];
    unsigned flags;
    int priority, special;      /* special: 0 created, 1 legacy, 2 per-thread */
    unsigned long long id;
    struct sim_capture *cap;
    sim_nodes deps;             /* capture: dependencies of the next node */
    CUgraphEdgeData *edge_scratch;
} sim_stream;
enum { SIM_STREAM_CREATED, SIM_STREAM_LEGACY, SIM_STREAM_PTDS };

sim_stream *sim_stream_new(sim_ctx *ctx, unsigned flags, int priority, int special);
void sim_stream_free(sim_stream *s);
CUresult sim_stream_resolve(CUstream h, sim_stream **out);

typedef struct sim_event {
    sim_obj o;
    unsigned flags;
    int recorded;
    uint64_t time;
    struct sim_capture *cap;    /* recorded inside this capture (if still live) */
    unsigned long long cap_id;
    sim_nodes deps;
    uint64_t sync_id;           /* CUPTI's sync id of its latest eager record (0: none) */
} sim_event;
void sim_event_free(sim_event *e);
void sim_event_mark(sim_event *e);     /* an executed record */
/* op names event e (and remembers which e: a graph naming a destroyed event's
 * handle, reused by a newer event, is told apart at execution). */
void sim_event_op(sim_op *op, sim_event *e);

/* ---- capture (sim_capture.c) */
typedef struct sim_capture {
    struct sim_graph *graph;
    CUstreamCaptureMode mode;
    unsigned long long id;
    int invalidated, user_graph;
    sim_stream *origin;
    pthread_t thread;
    struct sim_capture *next;
} sim_capture;
CUresult sim_capture_record(sim_stream *s, sim_op *op);
void sim_capture_invalidate(sim_capture *c);
CUresult sim_capture_check_unsafe(void);
CUresult sim_capture_check_legacy(sim_ctx *ctx);
int sim_capture_invalidate_ctx(sim_ctx *ctx);   /* count of captures hit */
int sim_capture_live(const sim_capture *c, unsigned long long id);
void sim_capture_stream_gone(sim_stream *s);
CUresult sim_capture_event_wait(sim_stream *s, sim_event *e);
CUresult sim_capture_event_record(sim_stream *s, sim_event *e);

/* ---- graphs (sim_graph.c, sim_exec.c) */
typedef struct sim_node {
    sim_obj o;
    struct sim_graph *graph;
    unsigned long seq;          /* creation order within the graph (kept by clones) */
    sim_op op;
    sim_nodes deps, outs;
} sim_node;
typedef struct sim_graph {
    sim_obj o;
    sim_nodes nodes;            /* creation order */
    unsigned long next_seq;
} sim_graph;
typedef struct sim_exec {
    sim_obj o;
    sim_graph *g;
    unsigned long long flags;
} sim_exec;

sim_graph *sim_graph_new(void);
void sim_graph_free(sim_graph *g);
sim_graph *sim_graph_clone(const sim_graph *g);
sim_node *sim_graph_add(sim_graph *g, sim_op *op, sim_node *const *deps, size_t n);
CUresult sim_graph_check_deps(sim_graph *g, const CUgraphNode *deps, size_t n);
void sim_graph_run(sim_graph *g, const char *label, int in_graph);
size_t sim_graph_order(const sim_graph *g, sim_node ***out);  /* topological */
sim_node *sim_node_by_seq(const sim_graph *g, unsigned long seq);
CUresult sim_graph_get(CUgraph h, sim_graph **out);
CUresult sim_node_get(CUgraphNode h, int type, sim_node **out);   /* type -1: any */
CUresult sim_node_set_event(sim_node *n, CUevent event);        /* an event node's event */
void sim_node_replace(sim_node *x, sim_op *op, int keep_label);   /* takes op */
CUresult sim_op_from_kernel_params(sim_op *op, const CUDA_KERNEL_NODE_PARAMS *p);
/* params: the CUDA_*_NODE_PARAMS / CUDA_MEMCPY3D structure of that node type */
CUresult sim_op_from_params(CUgraphNodeType type, const void *params, sim_op *op);
CUresult sim_op_from_memset_params(sim_op *op, const CUDA_MEMSET_NODE_PARAMS *p);

/* ---- modules and launches (sim_module.c, sim_launch.c) */
int sim_kernel_register(const char *name, sim_kernel_fn fn, int nparams,
                        const size_t *sizes, const size_t *aligns);
typedef struct sim_kernel {
    char *name;
    sim_kernel_fn fn;
    int nparams;
    size_t *sizes, *offsets;
    size_t args_size;
    UT_hash_handle hh;
} sim_kernel;
typedef struct sim_module {
    sim_obj o;
    int library;
    struct sim_func *funcs;     /* by name */
} sim_module;
typedef struct sim_func {
    sim_obj o;
    sim_module *mod;
    sim_kernel *k;
    int max_dynamic_smem;       /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    unsigned block[3], smem;    /* legacy cuFuncSetBlockShape / cuParamSet* state */
    unsigned char *pbuf;
    size_t psize;
    UT_hash_handle fh;
} sim_func;

sim_func *sim_func_check(CUfunction h);
void sim_module_free(sim_module *m);
void **sim_kernel_argv(sim_op *op);
CUresult sim_launch_op(sim_func *f, const unsigned grid[3], const unsigned block[3],
                       unsigned smem, void **params, void **extra, sim_op *op);

/* ---- log, faults, trace (sim_log.c, sim_fault.c) */
int sim_log_marked(void);
void sim_log_line(int in_graph, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sim_log_ptr(char *buf, size_t n, uintptr_t p);
/* With several devices, the device an op's lines name (" dev=N" ends each line of
 * it; -1: none); returns the previous one.  sim_log_dev_suffix: "@dN" or "". */
int sim_log_set_dev(int dev);
const char *sim_log_dev_suffix(char *buf, size_t n, int dev);
char *sim_log_args(const sim_kernel *k, const unsigned char *args);  /* malloc'd */
int sim_fault_check(const char *sym, CUresult *code);
int sim_trace_enabled(void);

/* sim_pace.c: SIM_LAUNCH_US, SIM_GRAPH_LAUNCH_US */
void sim_pace_launch(void);
void sim_pace_graph_launch(void);

/* ---- CUPTI's view of graphs (sim_cupti.c): ids for the stand-in libcupti
 * (tests/sim/cupti_stand_in.c, through sim_tools_id) and SIM_GRAPH_TRACE */
enum { SIM_TOOLS_NODE, SIM_TOOLS_GRAPH, SIM_TOOLS_EXEC };   /* sim_tools_id's `what` */
int sim_cupti_lookup(int what, const void *handle, uint64_t *id);
void sim_cupti_trace_node(const sim_node *x);    /* a node a graph runs */
uint64_t sim_cupti_node_id(const sim_node *x);   /* CUPTI's id of a node */

/* ---- CUPTI activity records (sim_activity.c, sim_activity.h) */
struct sim_activity;
typedef struct sim_activity_call {
    uint32_t correlation;
    const sim_stream *stream;
    uint64_t start;
} sim_activity_call;
void sim_activity_set_sink(void (*fn)(const struct sim_activity *a));
void sim_activity_call_begin(sim_activity_call *saved, const sim_stream *s);
void sim_activity_call_end(const sim_activity_call *saved, int op_kind);
void sim_activity_node(const sim_node *x);       /* the node a graph runs next */
void sim_activity_op(const sim_op *op, const char *label, int in_graph);
/* The stream order: a successful synchronize (enum sim_sync_type; its context, and s or
 * e where it names one), a stream created (a legacy one: its context too), and every
 * context and stream that exists (sim_tools_id(SIM_TOOLS_DUMP)). */
void sim_activity_sync(int type, const sim_ctx *c, const sim_stream *s, const sim_event *e);
void sim_activity_stream(const sim_stream *s);
void sim_activity_dump(void);

/* ---- small helpers */
void *sim_xcalloc(size_t n, size_t size);
void *sim_xrealloc(void *p, size_t size);
char *sim_xstrdup(const char *s);

#include "sim_api.h"

#endif /* SIM_INTERNAL_H */
