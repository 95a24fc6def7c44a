/* backend_cuda.c -- build/replay on the CUDA driver: the engine's backend.
 *
 * Graphs are built by stream capture on the shim's own streams (never the
 * program's): created non-blocking, so that the legacy stream never waits on them,
 * and captured in relaxed mode unless AUTOGRAPH_CAPTURE_MODE says otherwise, so that
 * no call another thread makes can fail because of this capture.  A chunk's ops are issued again onto capture stream
 * `slot`; an event record becomes a capture-internal record (for waits in the same
 * chunk) plus an external event record node (so that the program's event is really
 * recorded at that point); a wait on an event recorded before the chunk becomes an
 * external event wait node.  After each patchable op, the node it made is taken from
 * the capture and its parameters are kept for patching.  A launch joins every
 * stream the chunk uses into the launch stream first and forks them back after
 * (backend_cuda_join.c, which skips the joins and delays the fork backs it can).  A
 * kernel whose dynamic shared memory limit the program lowered after the op was held
 * has it lifted around its capture, issue or patch (record_smem.c).
 * The capture streams and events, and the placeholder event, are per context (one
 * engine per context: engine_table.c): each engine builds with its context's own,
 * under its own lock, while another engine builds with its.
 * Driver calls go to the real functions, never through the shim's wrappers.
 */
#include "backend.h"
#include "backend_cuda.h"
#include "backend_cuda_inspect.h"

#include "config.h"
#include "log.h"
#include "record_ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct node {                   /* what patching a node needs */
    CUgraphNode node;
    int kind;
    CUcontext ctx;
    uint64_t func;              /* KERNEL: the handle it was built with (the args') */
    union {
        CUDA_KERNEL_NODE_PARAMS kernel;
        CUDA_MEMSET_NODE_PARAMS memset;
        CUDA_MEMCPY3D copy;
    } p;                        /* HOST_FUNC: none (its args are all its params) */
};

struct objects {                /* a context's: used under its engine's lock only */
    CUcontext ctx;              /* where the objects below live */
    CUstream capture[AG_MAX_SLOTS];
    CUevent *events;            /* capture events: one per op + one per slot */
    size_t nevents;
    CUevent placeholder;        /* what parked event nodes name (backend_set_event) */
};

#define CONTEXTS 16             /* as many as the engine has engines (AG_ENGINES_MAX) */
static struct objects contexts[CONTEXTS];
static int ncontexts;           /* published after its entry is written */
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;

/* The objects of ctx (made on first use: create), or NULL. */
static struct objects *objects_of(CUcontext ctx, int create)
{
    struct objects *o = NULL;
    int n = __atomic_load_n(&ncontexts, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (contexts[i].ctx == ctx)
            return &contexts[i];
    if (!create || ctx == NULL)
        return NULL;
    pthread_mutex_lock(&contexts_lock);
    for (int i = 0; i < ncontexts && o == NULL; i++)
        if (contexts[i].ctx == ctx)
            o = &contexts[i];
    if (o == NULL && ncontexts < CONTEXTS) {
        o = &contexts[ncontexts];
        o->ctx = ctx;
        __atomic_store_n(&ncontexts, ncontexts + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&contexts_lock);
    return o;
}

/* ---- context and objects ----------------------------------------------------------- */

CUresult ag_cuda_enter_context(CUcontext ctx, int *pushed)
{
    CUcontext cur = NULL;
    CUresult rc;
    DRIVER(get_current, cuCtxGetCurrent);
    DRIVER(push, cuCtxPushCurrent);
    *pushed = 0;
    if (get_current(&cur) == CUDA_SUCCESS && cur == ctx)
        return CUDA_SUCCESS;
    if (ctx == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    rc = push(ctx);
    *pushed = rc == CUDA_SUCCESS;      /* a failed push must not be popped */
    return rc;
}

void ag_cuda_leave_context(int pushed)
{
    DRIVER_FN(pop, cuCtxPopCurrent);
    CUcontext ignored;
    if (pushed && pop) {
        pop(&ignored);
        ag_thread_hot.known_generation = 0;  /* what was asked meanwhile is not current */
    }
}

static CUresult ensure_objects(struct objects *o, int nslots, size_t nevents)
{
    DRIVER(stream_create, cuStreamCreate);
    DRIVER(event_create, cuEventCreate);
    CUresult rc;

    for (int s = 0; s < nslots; s++)
        if (o->capture[s] == NULL &&
            (rc = stream_create(&o->capture[s], CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
            return rc;
    if (o->placeholder == NULL &&
        (rc = event_create(&o->placeholder, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
        return rc;
    if ((rc = ag_join_prepare(o->ctx)) != CUDA_SUCCESS)
        return rc;
    if (nevents > o->nevents) {
        CUevent *grown = realloc(o->events, nevents * sizeof *grown);
        if (grown == NULL)
            return CUDA_ERROR_OUT_OF_MEMORY;
        o->events = grown;
        for (size_t e = o->nevents; e < nevents; e++) {
            if ((rc = event_create(&o->events[e], CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
                return rc;
            o->nevents = e + 1;
        }
    }
    return CUDA_SUCCESS;
}

/* AUTOGRAPH_CAPTURE_MODE (default relaxed: no call another thread makes can fail
 * because the shim is capturing on its own stream). */
static CUstreamCaptureMode capture_mode(void)
{
    switch (ag_config()->capture_mode) {
    case AG_CAPTURE_GLOBAL:       return CU_STREAM_CAPTURE_MODE_GLOBAL;
    case AG_CAPTURE_THREAD_LOCAL: return CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    default:                      return CU_STREAM_CAPTURE_MODE_RELAXED;
    }
}

/* ---- dynamic shared memory limits ------------------------------------------------- */

/* Lifts the limits that ops[0..n) ask for where the program lowered them after they
 * were held (record_smem.c), in the current context; ag_smem_restore puts them back. */
static void raise_smem_limits(struct ag_smem_raised *r, const struct ag_op *ops, int n)
{
    for (int j = 0; j < n; j++) {
        uintptr_t f;
        unsigned smem = ag_record_kernel_smem(&ops[j], &f);
        if (smem)
            ag_smem_raise(r, f, smem);
    }
}

/* ---- issue ------------------------------------------------------------------------ */

static int backend_issue(const struct ag_op *op)
{
    int pushed = 0;            /* enter_context may return before setting it */
    struct ag_smem_raised raised = { 0 };
    CUresult rc;
    ag_join_settle(1);         /* the fork backs owed come before this op */
    rc = ag_cuda_enter_context((CUcontext)op->ctx, &pushed);
    if (rc == CUDA_SUCCESS) {
        raise_smem_limits(&raised, op, 1);
        rc = ag_cuda_issue(op, ag_stream_handle(op->stream));
        ag_smem_restore(&raised);
    }
    ag_cuda_leave_context(pushed);
    return rc;
}

/* ---- build ------------------------------------------------------------------------ */

static CUresult keep_node(const struct objects *o, const struct ag_op *op, CUstream s,
                          struct node **out)
{
    DRIVER(capture_info, cuStreamGetCaptureInfo);
    DRIVER(kernel_params, cuGraphKernelNodeGetParams);
    DRIVER(memset_params, cuGraphMemsetNodeGetParams);
    DRIVER(copy_params, cuGraphMemcpyNodeGetParams);
    CUstreamCaptureStatus status;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    struct node *n;
    CUresult rc = capture_info(s, &status, NULL, NULL, &deps, NULL, &ndeps);

    if (rc != CUDA_SUCCESS)
        return rc;
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || ndeps != 1)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    n = calloc(1, sizeof *n);
    if (n == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    n->node = deps[0];
    n->kind = op->kind;
    n->ctx = o->ctx;
    if (ag_is_event_op(op->kind) || op->kind == AG_OP_HOST_FUNC)
        rc = CUDA_SUCCESS;             /* set_event and patch_host need the node only */
    else if (op->kind == AG_OP_KERNEL) {
        rc = kernel_params(n->node, &n->p.kernel);
        n->func = ag_kernel_dims_of(op->args).func;
    }
    else if (op->kind == AG_OP_MEMSET)
        rc = memset_params(n->node, &n->p.memset);
    else
        rc = copy_params(n->node, &n->p.copy);
    if (rc != CUDA_SUCCESS) {
        free(n);
        return rc;
    }
    *out = n;
    return CUDA_SUCCESS;
}

/* The program's event of an event op; 0 (destroyed since it was recorded, within
 * the window: replay_events.c): the placeholder, which every replay patches. */
static CUevent program_event(const struct objects *o, const struct ag_op *op)
{
    return op->event ? (CUevent)op->event : o->placeholder;
}

/* Issues op j of a chunk into the capture on stream s. */
static CUresult capture_op(const struct objects *o, const struct ag_op *op, int j, CUstream s,
                           struct node **node)
{
    DRIVER(record, cuEventRecord);
    DRIVER(record_flags, cuEventRecordWithFlags);
    DRIVER(wait, cuStreamWaitEvent);
    CUresult rc;

    switch (op->kind) {
    case AG_OP_EVENT_RECORD:
        rc = record(o->events[j], s);
        if (rc == CUDA_SUCCESS)
            rc = record_flags(program_event(o, op), s, CU_EVENT_RECORD_EXTERNAL);
        return rc ? rc : keep_node(o, op, s, node);
    case AG_OP_EVENT_WAIT:
        if (op->link >= 0)
            return wait(s, o->events[op->link], 0);
        if (op->link == AG_LINK_EXTERNAL) {
            rc = wait(s, program_event(o, op), CU_EVENT_WAIT_EXTERNAL);
            return rc ? rc : keep_node(o, op, s, node);
        }
        return CUDA_SUCCESS;                 /* implied by the chunk order */
    default:
        rc = ag_cuda_issue(op, s);
        return rc ? rc : keep_node(o, op, s, node);
    }
}

/* Joins capture streams 1.. into stream 0 (fork: the other way round). */
static CUresult join_streams(const struct objects *o, int nslots, size_t first_event, int fork)
{
    DRIVER(record, cuEventRecord);
    DRIVER(wait, cuStreamWaitEvent);
    CUresult rc = CUDA_SUCCESS;
    for (int s = 1; s < nslots && rc == CUDA_SUCCESS; s++) {
        CUevent e = o->events[first_event + (size_t)s];
        rc = record(e, fork ? o->capture[0] : o->capture[s]);
        if (rc == CUDA_SUCCESS)
            rc = wait(fork ? o->capture[s] : o->capture[0], e, 0);
    }
    return rc;
}

static void free_nodes(void **nodes, int n)
{
    for (int i = 0; i < n; i++) {
        free(nodes[i]);
        nodes[i] = NULL;
    }
}

/* The legacy stream's implicit synchronization inside a chunk: work on the legacy
 * stream waits for all work submitted before it to every blocking stream (created
 * without CU_STREAM_NON_BLOCKING, or the per-thread default stream), and such a
 * stream's work waits for the legacy stream's work submitted before it.  The capture
 * streams are non-blocking, so those orders become explicit edges: before a legacy
 * op, from each blocking slot that has had work since; before a blocking slot's op,
 * from the legacy slot when it has had work since.  (Across chunks the driver keeps
 * the order: the engine launches a chunk with legacy and blocking work on the legacy
 * stream.) */
static int backend_stream_blocking(uintptr_t stream);

struct legacy_order {
    int slot;                  /* the legacy stream's slot, or -1 */
    unsigned blocking;         /* slots of blocking streams */
    unsigned unordered;        /* blocking slots with work no legacy op waited for */
    unsigned owing;            /* blocking slots that have not waited for legacy work */
};

static int slot_blocking(uintptr_t stream)
{
    return stream == AG_STREAM_PER_THREAD ||
           (stream != AG_STREAM_LEGACY && backend_stream_blocking(stream));
}

static void legacy_order_init(struct legacy_order *lo, const struct ag_op *ops, int n)
{
    unsigned seen = 0;
    *lo = (struct legacy_order){ .slot = -1 };
    for (int j = 0; j < n; j++) {
        unsigned bit = 1u << ops[j].slot;
        if (seen & bit)
            continue;
        seen |= bit;
        if (ops[j].stream == AG_STREAM_LEGACY)
            lo->slot = ops[j].slot;
        else if (slot_blocking(ops[j].stream))
            lo->blocking |= bit;
    }
    if (lo->slot < 0)
        lo->blocking = 0;            /* no legacy work: nothing implicit */
}

/* Stream `to` of the capture waits for what stream `from` has captured so far. */
static CUresult capture_edge(const struct objects *o, int from, int to, size_t first_event)
{
    DRIVER(record, cuEventRecord);
    DRIVER(wait, cuStreamWaitEvent);
    CUevent e = o->events[first_event + (size_t)from];
    CUresult rc = record(e, o->capture[from]);
    return rc ? rc : wait(o->capture[to], e, 0);
}

/* Before op on `slot` is captured: the implicit orders it is owed become edges. */
static CUresult legacy_before(const struct objects *o, struct legacy_order *lo, int slot,
                              size_t first_event)
{
    unsigned bit = 1u << slot;
    CUresult rc = CUDA_SUCCESS;
    if (!lo->blocking)
        return CUDA_SUCCESS;
    if (slot == lo->slot) {
        for (int b = 0; b < AG_MAX_SLOTS && rc == CUDA_SUCCESS; b++)
            if (lo->unordered & (1u << b))
                rc = capture_edge(o, b, slot, first_event);
        lo->unordered = 0;
    } else if (lo->owing & bit) {
        rc = capture_edge(o, lo->slot, slot, first_event);
        lo->owing &= ~bit;
    }
    return rc;
}

static void legacy_after(struct legacy_order *lo, int slot)
{
    if (slot == lo->slot)
        lo->owing = lo->blocking;
    else if (lo->blocking & (1u << slot))
        lo->unordered |= 1u << slot;
}

static CUresult capture_chunk(const struct objects *o, const struct ag_op *ops, int n,
                              int nslots, CUgraph *graph, void **nodes)
{
    DRIVER(begin, cuStreamBeginCapture);
    DRIVER(end, cuStreamEndCapture);
    struct legacy_order lo;
    CUresult rc, end_rc;

    legacy_order_init(&lo, ops, n);
    rc = begin(o->capture[0], capture_mode());
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = join_streams(o, nslots, (size_t)n, 1);
    for (int j = 0; j < n && rc == CUDA_SUCCESS; j++) {
        rc = legacy_before(o, &lo, ops[j].slot, (size_t)n);
        if (rc == CUDA_SUCCESS)
            rc = capture_op(o, &ops[j], j, o->capture[ops[j].slot],
                            (struct node **)&nodes[j]);
        legacy_after(&lo, ops[j].slot);
    }
    if (rc == CUDA_SUCCESS)
        rc = join_streams(o, nslots, (size_t)n, 0);
    end_rc = end(o->capture[0], graph);
    return rc != CUDA_SUCCESS ? rc : end_rc;
}

/* After a failed build, a capture stream the driver left capturing (a failed end of
 * capture can) is destroyed, to be created afresh: it must never stay capturing. */
static void reset_capture_streams(struct objects *o)
{
    DRIVER_FN(is_capturing, cuStreamIsCapturing);
    DRIVER_FN(destroy, cuStreamDestroy);
    for (int s = 0; s < AG_MAX_SLOTS; s++) {
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        if (o->capture[s] == NULL || is_capturing == NULL)
            continue;
        if (is_capturing(o->capture[s], &status) != CUDA_SUCCESS ||
            status != CU_STREAM_CAPTURE_STATUS_NONE) {
            if (destroy)
                destroy(o->capture[s]);
            o->capture[s] = NULL;
        }
    }
}

static int backend_build(const struct ag_op *ops, int n, int nslots, void **graph_out,
                         void **nodes)
{
    CUgraph graph = NULL;
    int pushed = 0;            /* enter_context may return before setting it */
    struct objects *o = objects_of((CUcontext)ops[0].ctx, 1);
    CUresult rc = o ? ag_cuda_enter_context(o->ctx, &pushed) : CUDA_ERROR_INVALID_CONTEXT;

    if (rc == CUDA_SUCCESS)
        rc = ensure_objects(o, nslots, (size_t)n + AG_MAX_SLOTS);
    if (rc == CUDA_SUCCESS) {
        struct ag_smem_raised raised = { 0 };
        raise_smem_limits(&raised, ops, n);
        rc = capture_chunk(o, ops, n, nslots, &graph, nodes);
        ag_smem_restore(&raised);
    }
    if (rc != CUDA_SUCCESS && o)
        reset_capture_streams(o);
    ag_cuda_leave_context(pushed);
    if (rc != CUDA_SUCCESS) {
        DRIVER_FN(destroy, cuGraphDestroy);
        if (graph && destroy)
            destroy(graph);
        free_nodes(nodes, n);
        return rc;
    }
    *graph_out = graph;
    return 0;
}

static int backend_instantiate(void *graph, void **exec)
{
    DRIVER(instantiate, cuGraphInstantiateWithFlags);
    return instantiate((CUgraphExec *)exec, (CUgraph)graph, 0);
}

/* ---- patch and launch -------------------------------------------------------------- */

static CUresult set_exec_event(CUgraphExec exec, const struct node *n, CUevent e)
{
    if (n->kind == AG_OP_EVENT_RECORD) {
        DRIVER(set, cuGraphExecEventRecordNodeSetEvent);
        return set(exec, n->node, e);
    } else {
        DRIVER(set, cuGraphExecEventWaitNodeSetEvent);
        return set(exec, n->node, e);
    }
}

static CUresult set_graph_event(const struct node *n, CUevent e)
{
    if (n->kind == AG_OP_EVENT_RECORD) {
        DRIVER(set, cuGraphEventRecordNodeSetEvent);
        return set(n->node, e);
    } else {
        DRIVER(set, cuGraphEventWaitNodeSetEvent);
        return set(n->node, e);
    }
}

/* Points an event node at `event` (0: the placeholder) in exec, or else in its graph. */
static int backend_set_event(void *exec, void *node, uintptr_t event)
{
    const struct objects *o = objects_of(((const struct node *)node)->ctx, 0);
    CUevent e = event ? (CUevent)event : o ? o->placeholder : NULL;
    if (e == NULL)
        return CUDA_ERROR_INVALID_HANDLE;    /* no graph was built yet */
    return exec ? set_exec_event((CUgraphExec)exec, node, e) : set_graph_event(node, e);
}

/* A destroy of the program's that the engine held until the ops naming the event
 * went out. */
static int backend_destroy_event(uintptr_t event)
{
    DRIVER(destroy, cuEventDestroy);
    return destroy((CUevent)event);
}

/* A patch that changes a node's function (match_replay.c takes a launch of another
 * function with the same parameter layout): the driver lets every field change but
 * the function's device.  The handle the program launched is a CUfunction, or a
 * CUkernel (which cuLaunchKernel takes too, but a node names in its own field). */
static void set_function(CUDA_KERNEL_NODE_PARAMS *p, uint64_t handle, CUcontext ctx)
{
    DRIVER_FN(func_module, cuFuncGetModule);
    CUmodule m;
    if (func_module && func_module(&m, (CUfunction)(uintptr_t)handle) == CUDA_SUCCESS) {
        p->func = (CUfunction)(uintptr_t)handle;
        p->kern = NULL;
        p->ctx = NULL;
        return;
    }
    p->func = NULL;
    p->kern = (CUkernel)(uintptr_t)handle;
    p->ctx = ctx;
}

/* A node whose limit the program lowered since it was built cannot be patched under
 * the lower limit: it is lifted around the patch, in the node's context. */
static int patch_kernel(CUgraphExec exec, struct node *n, const struct ag_op *op)
{
    DRIVER(set, cuGraphExecKernelNodeSetParams);
    CUDA_KERNEL_NODE_PARAMS p = n->p.kernel;
    const struct ag_kernel_dims d = ag_kernel_dims_of(op->args);
    struct ag_kernel_args ka;
    struct ag_smem_raised raised = { 0 };
    int pushed = 0, lift = (p.sharedMemBytes || d.smem) &&
                           __atomic_load_n(&ag_smem_limit_changed, __ATOMIC_RELAXED);
    CUresult rc = ag_kernel_args_open(op, &ka);

    if (rc != CUDA_SUCCESS)
        return rc;
    if (lift && ag_cuda_enter_context(n->ctx, &pushed) == CUDA_SUCCESS)
        raise_smem_limits(&raised, op, 1);
    if (d.func != n->func)
        set_function(&p, d.func, n->ctx);
    p.kernelParams = ka.params;
    p.extra = ka.extra;
    p.gridDimX = d.grid[0], p.gridDimY = d.grid[1], p.gridDimZ = d.grid[2];
    p.blockDimX = d.block[0], p.blockDimY = d.block[1], p.blockDimZ = d.block[2];
    p.sharedMemBytes = d.smem;
    rc = set(exec, n->node, &p);
    ag_smem_restore(&raised);
    if (lift)
        ag_cuda_leave_context(pushed);
    ag_kernel_args_close(&ka);
    return rc;
}

/* A host node of exec to the function and userData of op. */
static int patch_host(CUgraphExec exec, const struct node *n, const struct ag_op *op)
{
    DRIVER(set, cuGraphExecHostNodeSetParams);
    struct ag_host_args a;               /* copied: a chunk packs args unaligned */
    CUDA_HOST_NODE_PARAMS p;
    memcpy(&a, op->args, sizeof a);
    p.fn = (CUhostFn)(uintptr_t)a.fn;
    p.userData = (void *)(uintptr_t)a.user;
    return set(exec, n->node, &p);
}

static int backend_patch(void *exec, void *node, const struct ag_op *op)
{
    struct node *n = node;
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (ag_is_event_op(n->kind))       /* the program's event of this replay */
        return op->event ? backend_set_event(exec, n, op->event) : CUDA_ERROR_INVALID_HANDLE;
    if (n->kind == AG_OP_KERNEL)
        return patch_kernel((CUgraphExec)exec, n, op);
    if (n->kind == AG_OP_HOST_FUNC)
        return patch_host((CUgraphExec)exec, n, op);
    if (n->kind == AG_OP_MEMSET) {
        DRIVER(set, cuGraphExecMemsetNodeSetParams);
        struct ag_memset_args a;          /* copied: a chunk packs args unaligned */
        CUDA_MEMSET_NODE_PARAMS p = n->p.memset;
        memcpy(&a, op->args, sizeof a);
        p.dst = a.dst;
        p.value = a.value;
        p.width = a.count;               /* one row */
        if (p.pitch && p.pitch < a.count * p.elementSize)
            p.pitch = a.count * p.elementSize;
        return set((CUgraphExec)exec, n->node, &p, n->ctx);
    } else {
        DRIVER(set, cuGraphExecMemcpyNodeSetParams);
        struct ag_copy_args a;            /* copied: a chunk packs args unaligned */
        CUDA_MEMCPY3D p = n->p.copy;
        memcpy(&a, op->args, sizeof a);
        p.dstDevice = a.dst;
        p.dstHost = (void *)(uintptr_t)a.dst;
        p.srcDevice = a.src;
        p.srcHost = (const void *)(uintptr_t)a.src;
        p.WidthInBytes = a.bytes;        /* one row */
        if (p.srcPitch && p.srcPitch < a.bytes)
            p.srcPitch = a.bytes;
        if (p.dstPitch && p.dstPitch < a.bytes)
            p.dstPitch = a.bytes;
        return set((CUgraphExec)exec, n->node, &p, n->ctx);
    }
}

static int backend_launch(void *exec, uintptr_t ctx, const uintptr_t *streams, int nstreams)
{
    CUstream handles[AG_MAX_SLOTS];
    for (int s = 0; s < nstreams; s++)
        handles[s] = ag_stream_handle(streams[s]);
    return ag_join_launch((CUgraphExec)exec, (CUcontext)ctx, handles, nstreams);
}

static int backend_use_context(uintptr_t ctx)
{
    DRIVER(set_current, cuCtxSetCurrent);
    return set_current((CUcontext)ctx);
}

/* For a while, from a thread of another context (engine_table.c): token 1 pops. */
static int backend_enter_context(uintptr_t ctx, int *token)
{
    *token = 0;
    if (ag_record_current_context() == ctx)
        return 0;                    /* the thread's (as the recorders know it) */
    return ag_cuda_enter_context((CUcontext)ctx, token);
}

static void backend_leave_context(int token)
{
    ag_cuda_leave_context(token);
}

static int backend_current_device(void)
{
    CUdevice dev;
    return ag_current_device(&dev) ? (int)dev : -1;
}

static void backend_release_graph(void *graph, void **nodes, int n)
{
    DRIVER_FN(destroy, cuGraphDestroy);
    free_nodes(nodes, n);
    if (destroy && graph)
        destroy((CUgraph)graph);
}

static void backend_release_exec(void *exec)
{
    DRIVER_FN(destroy, cuGraphExecDestroy);
    if (destroy && exec)
        destroy((CUgraphExec)exec);
}

/* ---- stream kinds ------------------------------------------------------------------ */

static int stream_flags(CUstream s, unsigned *flags)
{
    DRIVER(get_flags, cuStreamGetFlags);
    return get_flags(s, flags);
}

static int backend_stream_blocking(uintptr_t stream)
{
    unsigned flags = 0;
    if (stream_flags(ag_stream_handle(stream), &flags) != CUDA_SUCCESS)
        return 1;                    /* unknown: assume the implicit synchronization */
    return !(flags & CU_STREAM_NON_BLOCKING);
}

/* ---- unloads ----------------------------------------------------------------------- */

static int backend_kernel_unloaded(const struct ag_op *op, int entry, uintptr_t handle)
{
    return ag_record_kernel_unloaded(op, entry, handle);
}

/* ---- collectives ------------------------------------------------------------------- */

static int backend_waits_for_peers(const struct ag_op *op)
{
    return ag_record_kernel_collective(op);
}

const struct ag_backend ag_cuda_backend = {
    .issue = backend_issue,
    .build = backend_build,
    .set_event = backend_set_event,
    .destroy_event = backend_destroy_event,
    .instantiate = backend_instantiate,
    .patch = backend_patch,
    .launch = backend_launch,
    .use_context = backend_use_context,
    .enter_context = backend_enter_context,
    .leave_context = backend_leave_context,
    .current_device = backend_current_device,
    .stream_blocking = backend_stream_blocking,
    .legacy_edges = 1,
    .kernel_unloaded = backend_kernel_unloaded,
    .waits_for_peers = backend_waits_for_peers,
    .release_graph = backend_release_graph,
    .release_exec = backend_release_exec,
    .dump_dot = ag_cuda_dump_dot,           /* backend_cuda_inspect.c */
    .graph_data = ag_cuda_graph_data,
    .function_name = ag_record_function_name,    /* record_ops.c */
};
