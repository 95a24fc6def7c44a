/* intercept_defer.c -- intercept: the wrappers of the entry points the engine records.
 *
 * For every line of record_points.def this defines the exported wrapper (it
 * overrides the weak forwarding one of intercept_wrappers.c): the call is recorded
 * into a struct ag_op (record_ops.c) and offered to the engine, which holds it back
 * (the program gets CUDA_SUCCESS; the work runs inside a graph) or lets it through
 * now.  With AUTOGRAPH=off, or while the program captures a stream itself, the
 * wrapper just forwards.  While a replay waits for its next op, a kernel launch, an
 * event record or a stream wait is first offered to the replay's fast path (held
 * without being recorded when it is that op; intercept_cudart.c learns here where the
 * runtime's launch calls go, and offers those through ag_intercept_hold_runtime).
 * When the engine records light (engine.c) the call is recorded light first, and
 * again in full if the engine asks for it.  Also here: starting the engine with the
 * CUDA backend (and AUTOGRAPH_TRACE, just after it), and the hooks that the
 * forwarding wrappers call at flush points.  AUTOGRAPH_TIMING
 * (timing.c) sees every call: held back, or passed with its time inside the driver.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "alloc_table.h"
#include "backend_cuda.h"
#include "config.h"
#include "counters.h"
#include "driver.h"
#include "engine.h"
#include "entry_signatures.h"
#include "fault_inject.h"
#include "plugin.h"
#include "intercept_cudart.h"
#include "intercept_wrapper.h"
#include "log.h"
#include "match_speed.h"
#include "record_ops.h"
#include "record_stage.h"
#include "trace_cupti.h"

#include <pthread.h>


extern const struct ag_backend ag_cuda_backend;

static AG_HOT int engine_state;        /* 0: not decided, 1: on, -1: off */
static pthread_once_t decide_once = PTHREAD_ONCE_INIT;

/* Run once: threads racing to their first CUDA call wait for the first one (so nothing
 * here may call a CUDA wrapper before engine_state is set: pthread_once would deadlock). */
static void decide_engine(void)
{
    const struct ag_config *cfg = ag_config();
    struct ag_engine_params p = {
        .warmup = cfg->warmup, .min_ops = cfg->min_ops, .chunk_first = cfg->chunk_first,
        .chunk_growth = cfg->chunk_growth,
        .chunk_max = cfg->chunk_max, .chunk_slow_ns = cfg->chunk_slow_us * 1000,
        .tune_replays = cfg->chunk_tune == AG_CHUNK_TUNE_AUTO ? AG_TUNE_AUTO : cfg->chunk_tune,
        .max_variants = cfg->max_variants,
        .period_min = cfg->period_min, .light_after = cfg->light_after,
        .skim_after = cfg->skim_after,
        .explain = cfg->explain, .keep_graph = cfg->keep_graph,
        .cut_anywhere = cfg->cut_anywhere, .max_graphs = cfg->max_graphs,
        .max_graph_mb = cfg->max_graph_mb, .dump_dir = cfg->debug_dump,
        .destroy_flush = cfg->destroy_flush, .launch_thread = cfg->launch_thread,
        .launch_spin_ns = cfg->launch_spin_us * 1000,
        .launch_poll_ns = cfg->launch_poll_us * 1000,
    };
    if (cfg->mode != AG_MODE_ON) {
        __atomic_store_n(&engine_state, -1, __ATOMIC_RELEASE);
        ag_trace_start(cfg->trace);    /* after: CUPTI may call CUDA */
        ag_plugin_start(cfg->plugin);
        return;
    }
    if (cfg->liveness != AG_LIVENESS_OFF)
        p.light_after = 0;        /* light ops carry no args to check */
    ag_faults_setup(cfg->inject_faults);
    ag_alloc_setup(cfg->liveness);
    ag_stage_setup(cfg->stage_mb);
    ag_engine_setup(&ag_cuda_backend, &p);
    ag_speed_setup(cfg->guard_ms, ag_count_work,
                   cfg->guard_ms > 0 ? ag_speed_job_map(cfg->guard_job) : NULL);
    __atomic_store_n(&engine_state, 1, __ATOMIC_RELEASE);
    ag_trace_start(cfg->trace);        /* after (CUPTI may call CUDA), before any graph */
    ag_plugin_start(cfg->plugin);      /* after: its init may call CUDA */
}

static inline int engine_wanted(void)
{
    int state = __atomic_load_n(&engine_state, __ATOMIC_ACQUIRE);
    if (__builtin_expect(state == 0, 0)) {
        pthread_once(&decide_once, decide_engine);
        state = __atomic_load_n(&engine_state, __ATOMIC_ACQUIRE);
    }
    return state > 0 && !ag_engine_is_paused();
}

/* Whether a call with a flush policy of this reason may put work on a stream
 * (backend_cuda_join.c: then a stream the last chunk launch joined must be joined
 * again); a synchronize, a query, an allocation or a destroy puts none. */
static int adds_stream_work(unsigned reason)
{
    return reason != AG_FLUSH_SYNC && reason != AG_FLUSH_QUERY && reason != AG_FLUSH_ALLOC &&
           reason != AG_FLUSH_LIFETIME && reason != AG_FLUSH_MODULE;
}

/* What a flush point scoped to a stream or context is about (flush_points.h): the
 * stream's key, and the context the calling thread means (the legacy and per-thread
 * streams are its current context's; cuCtxSynchronize_v2 names one).  *ctx 0: not
 * needed, or unknown (then every engine's window ends). */
static uintptr_t scope_of(int entry, uintptr_t arg0, uintptr_t *ctx)
{
    unsigned policy = ag_call_policy[entry];
    *ctx = 0;
    if (policy & AG_POLICY_SCOPE_STREAM) {
        arg0 = ag_record_stream_key((CUstream)arg0, entry);
        if (arg0 == AG_STREAM_LEGACY || arg0 == AG_STREAM_PER_THREAD)
            *ctx = ag_record_current_context();
    } else if (policy & AG_POLICY_SCOPE_CONTEXT) {
        *ctx = entry == AG_EP_cuCtxSynchronize_v2 && arg0 ? arg0
                                                          : ag_record_current_context();
    }
    return arg0;
}

/* Whether this thread ever offered work to the engine: a thread that never did (a
 * watchdog that polls events) is an observer, whose queries need not end windows. */
static __thread int thread_submits;

/* The policies whose calls change what the engine knows (handles gone, captures,
 * modules): never skipped while paused and quiet. */
#define KNOWS (AG_POLICY_DROP_GRAPHS | AG_POLICY_EVENT_GONE | AG_POLICY_CAPTURE_BEGIN |     \
               AG_POLICY_CAPTURE_END | AG_POLICY_STREAM_GONE | AG_POLICY_FORGET_LAYOUTS |   \
               AG_POLICY_UNLOAD)

/* Called by forwarding wrappers whose entry point has a flush policy: nonzero (the
 * CUresult to return without calling the driver) when the engine answers the call.
 * While graphing is paused and no engine holds anything (ag_engine_quiet), a call
 * that changes nothing the engine knows passes it by. */
int ag_intercept_before(int entry, uintptr_t arg0)
{
    unsigned reason = ag_call_policy[entry] & AG_POLICY_REASON_MASK;
    uintptr_t ctx, key;
    if (!(ag_call_policy[entry] & KNOWS) && ag_engine_quiet()) {
        ag_record_context_may_change();     /* paused, nothing held: nothing to end */
        __atomic_add_fetch(&ag_quiet_flush_points, 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (ag_call_policy[entry] & AG_POLICY_CAPTURE_BEGIN)
        (void)engine_wanted();          /* started first: it must count this capture */
    key = scope_of(entry, arg0, &ctx);
    /* its locks collect the chunk launches out */
    if (ag_engine_before(entry, key, ctx, !thread_submits) == AG_ANSWER_NOT_READY)
        return CUDA_ERROR_NOT_READY;
    if (reason != AG_FLUSH_MODULE) {    /* anything that can see a stream: */
        ag_join_settle(adds_stream_work(reason));   /* the fork backs owed first */
        ag_stage_fence();               /* what was held went out: staged slots fenced */
    }
    ag_record_context_may_change();     /* the next window asks the driver again */
    if (ag_call_policy[entry] & (AG_POLICY_UNLOAD | AG_POLICY_DROP_GRAPHS)) {
        ag_smem_limits_forget();        /* a function's handle may come back */
        ag_runtime_forget();            /* so may a runtime's handle or a context */
    }
    if (ag_call_policy[entry] & AG_POLICY_FORGET_LAYOUTS)
        ag_record_forget_layouts();
    if (ag_engine_is_paused())
        ag_engine_note_quiet();
    return 0;
}

/* Errors after which the context is unusable (a kernel faulted, ...): every later
 * call fails with it, and the driver returns it at the call, so nothing may be held. */
static int sticky_error(int result)
{
    switch (result) {
    case CUDA_ERROR_ECC_UNCORRECTABLE: case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT: case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR: case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS: case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC: case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return 1;
    default:
        return 0;
    }
}

/* Called by every wrapper after a call the driver failed: after a sticky error the
 * engine issues what it holds and steps aside for good (AUTOGRAPH=off from here). */
void ag_intercept_failed(int entry, int result)
{
    if (!sticky_error(result) || __atomic_load_n(&engine_state, __ATOMIC_ACQUIRE) < 0)
        return;
    __atomic_store_n(&engine_state, -1, __ATOMIC_RELEASE);
    if (ag_engine_running()) {
        ag_engine_flush(AG_FLUSH_CONTEXT);
        ag_log(AG_LOG_WARN, "%s returned sticky error %d: the context is unusable; "
               "graphing stops, every later call goes straight to the driver",
               ag_entry_name[entry], result);
    }
}

static inline int offer_unrecorded(const struct ag_op *op)
{
    ag_engine_unrecorded(op);
    return AG_PASS;
}

/* AUTOGRAPH_CHECK_LIVENESS: an op about to run (now or in a graph) is checked for
 * pointers into freed memory (alloc_table.c reports them, describing the op only then). */
static void describe_op(const void *op, char *buf, size_t size)
{
    ag_record_describe(op, buf, size);
}

static void check_liveness(const struct ag_op *op)
{
    uint32_t skip = op->kind == AG_OP_KERNEL ? AG_KERNEL_DIMS : 0;   /* the launch size */
    if (op->args_len > skip)
        ag_alloc_check_args(op->args + skip, op->args_len - skip, describe_op, op);
}

static inline int offer(struct ag_op *op)
{
    if (__builtin_expect(ag_liveness != AG_LIVENESS_OFF, 0) && op->args_len)
        check_liveness(op);
    return op->light && ag_engine_light_push(op) ? AG_QUEUED : ag_engine_offer(op);
}

/* A held copy that returns only once it is done (record_stage.h): the window ends
 * as at a cuStreamSynchronize of its stream, the stream is waited for, and a staged
 * copy is copied into the program's memory.  The call's result. */
static CUresult stage_wait(void)
{
    CUresult (*sync)(CUstream) = ag_real_fn(AG_EP_cuStreamSynchronize);
    CUstream stream = ag_stream_handle(ag_stage_call.stream);
    CUresult rc;
    ag_intercept_before(AG_EP_cuStreamSynchronize, (uintptr_t)stream);
    rc = sync ? sync(stream) : CUDA_ERROR_NOT_FOUND;
    ag_speed_sync();                    /* as after the synchronize it is */
    ag_stage_finish(rc == CUDA_SUCCESS);
    if (rc != CUDA_SUCCESS)
        ag_intercept_failed(AG_EP_cuStreamSynchronize, rc);
    return rc;
}

/* Whether a call recorded in full that goes to the driver (how: AG_EAGER) returns only
 * once its stream is done, as a held one does through stage_wait (*stream: its key).
 * Such a call ends the window after it as stage_wait does: the windows recorded while
 * copies go to the driver (a window's first sightings, a replay that stopped) must end
 * where replays that hold the copy end, else a window recorded across the copy (the
 * copy, then the next iteration's ops) makes a template whose every replay stops.  A
 * light record stages nothing (record_ops.c) and owes nothing: light windows only tell
 * repeats, and full recording takes over where they repeat. */
static inline int eager_wait(int how, uintptr_t *stream)
{
    if (how != AG_EAGER || !ag_stage_call.owed || !ag_stage_call.wait)
        return 0;
    *stream = ag_stage_call.stream;
    return 1;
}

/* ---- recorder adapters: one per kind of call ---------------------------------------- */

static inline int record_memset8(struct ag_op *op, int id, CUdeviceptr dst, unsigned char v,
                                 size_t n, CUstream s)
{
    return ag_record_memset(op, id, dst, v, n, s, 1);
}
static inline int record_memset16(struct ag_op *op, int id, CUdeviceptr dst, unsigned short v,
                                  size_t n, CUstream s)
{
    return ag_record_memset(op, id, dst, v, n, s, 2);
}
static inline int record_memset32(struct ag_op *op, int id, CUdeviceptr dst, unsigned v,
                                  size_t n, CUstream s)
{
    return ag_record_memset(op, id, dst, v, n, s, 4);
}
static inline int record_copy(struct ag_op *op, int id, CUdeviceptr dst, CUdeviceptr src,
                              size_t n, CUstream s)
{
    return ag_record_copy(op, id, (uintptr_t)dst, (uintptr_t)src, n, s);
}
static inline int record_copy_htod(struct ag_op *op, int id, CUdeviceptr dst, const void *src,
                                   size_t n, CUstream s)
{
    return ag_record_copy(op, id, (uintptr_t)dst, (uintptr_t)src, n, s);
}
static inline int record_copy_dtoh(struct ag_op *op, int id, void *dst, CUdeviceptr src,
                                   size_t n, CUstream s)
{
    return ag_record_copy(op, id, (uintptr_t)dst, (uintptr_t)src, n, s);
}
static inline int record_copy_sync(struct ag_op *op, int id, CUdeviceptr dst,
                                   CUdeviceptr src, size_t n)
{
    return ag_record_copy_sync(op, id, (uintptr_t)dst, (uintptr_t)src, n);
}
static inline int record_copy_htod_sync(struct ag_op *op, int id, CUdeviceptr dst,
                                        const void *src, size_t n)
{
    return ag_record_copy_sync(op, id, (uintptr_t)dst, (uintptr_t)src, n);
}
static inline int record_copy_dtoh_sync(struct ag_op *op, int id, void *dst, CUdeviceptr src,
                                        size_t n)
{
    return ag_record_copy_sync(op, id, (uintptr_t)dst, (uintptr_t)src, n);
}
static inline int record_memset8_sync(struct ag_op *op, int id, CUdeviceptr dst,
                                      unsigned char v, size_t n)
{
    return ag_record_memset_sync(op, id, dst, v, n, 1);
}
static inline int record_memset16_sync(struct ag_op *op, int id, CUdeviceptr dst,
                                       unsigned short v, size_t n)
{
    return ag_record_memset_sync(op, id, dst, v, n, 2);
}
static inline int record_memset32_sync(struct ag_op *op, int id, CUdeviceptr dst, unsigned v,
                                       size_t n)
{
    return ag_record_memset_sync(op, id, dst, v, n, 4);
}
static inline int record_event(struct ag_op *op, int id, CUevent e, CUstream s)
{
    return ag_record_event_record(op, id, e, s, 0);
}

/* The light fast path (engine.h), for kernel launches only; others take the recorder. */
static inline int fast_kernel(struct ag_op *op, int id, CUfunction f, unsigned gx,
                              unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned smem, CUstream s, void **params,
                              void **extra)
{
    (void)op;
    return ag_record_light_kernel(id, f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}
static inline int fast_kernel_ex(struct ag_op *op, int id, const CUlaunchConfig *c,
                                 CUfunction f, void **params, void **extra)
{
    (void)op;
    return c && c->numAttrs == 0 &&
           ag_record_light_kernel(id, f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                                  c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream,
                                  params, extra);
}
static inline int fast_none(struct ag_op *op, int id, ...)
{
    (void)op, (void)id;
    return 0;
}

/* The replay's fast path (engine.h), for kernel launches, event records and stream
 * waits: held without being recorded when the call is the next op of the replay under
 * way.  Liveness checks need the recorded op, so they take the recorder. */
static inline int replay_open(void)
{
    return ag_replay_open() && ag_liveness == AG_LIVENESS_OFF;
}
static inline int hold_kernel(struct ag_op *op, int id, CUfunction f, unsigned gx,
                              unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned smem, CUstream s, void **params,
                              void **extra)
{
    (void)op;
    ag_runtime_probe_saw(id, f, s, extra == NULL);
    return replay_open() &&
           ag_record_fast_kernel(id, f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}
static inline int hold_kernel_ex(struct ag_op *op, int id, const CUlaunchConfig *c,
                                 CUfunction f, void **params, void **extra)
{
    (void)op;
    ag_runtime_probe_saw(id, f, c ? c->hStream : NULL, c && !c->numAttrs && !extra);
    return replay_open() && ag_record_fast_kernel_ex(id, c, f, params, extra);
}

/* The same way for event records and stream waits without flags. */
static inline int hold_event_record_flags(struct ag_op *op, int id, CUevent e, CUstream s,
                                          unsigned flags)
{
    (void)op;
    return replay_open() && ag_record_fast_event(id, AG_OP_EVENT_RECORD, e, s, flags);
}
static inline int hold_event_record(struct ag_op *op, int id, CUevent e, CUstream s)
{
    return hold_event_record_flags(op, id, e, s, 0);
}
static inline int hold_event_wait(struct ag_op *op, int id, CUstream s, CUevent e,
                                  unsigned flags)
{
    (void)op;
    return replay_open() && ag_record_fast_event(id, AG_OP_EVENT_WAIT, e, s, flags);
}

/* A launch through the runtime's launch call (intercept_cudart.c) that is known to
 * reach the driver as `entry` with f and s in context ctx: offered to the replay's fast path as that
 * driver call would be, and counted and timed as that call held. */
int ag_intercept_hold_runtime(int entry, CUfunction f, const unsigned grid[3],
                              const unsigned block[3], unsigned smem, CUstream s,
                              void **params, uintptr_t ctx)
{
    int timed = ag_timing_timed(entry);
    uint64_t t_in = timed ? ag_timing_now() : 0;
    if (!engine_wanted() || !replay_open() ||
        !ag_record_fast_runtime(entry, f, grid, block, smem, s, params, ctx))
        return 0;
    thread_submits = 1;
    if (timed)
        ag_timing_held(entry, t_in);
    ag_count_call(entry, 0);
    return 1;
}

#define AG_HOLD_KERNEL             hold_kernel
#define AG_HOLD_KERNEL_EX          hold_kernel_ex
#define AG_HOLD_MEMSET8            fast_none
#define AG_HOLD_MEMSET16           fast_none
#define AG_HOLD_MEMSET32           fast_none
#define AG_HOLD_COPY               fast_none
#define AG_HOLD_COPY_HTOD          fast_none
#define AG_HOLD_COPY_DTOH          fast_none
#define AG_HOLD_COPY_SYNC          fast_none
#define AG_HOLD_COPY_HTOD_SYNC     fast_none
#define AG_HOLD_COPY_DTOH_SYNC     fast_none
#define AG_HOLD_MEMSET8_SYNC       fast_none
#define AG_HOLD_MEMSET16_SYNC      fast_none
#define AG_HOLD_MEMSET32_SYNC      fast_none
#define AG_HOLD_EVENT_RECORD       hold_event_record
#define AG_HOLD_EVENT_RECORD_FLAGS hold_event_record_flags
#define AG_HOLD_EVENT_WAIT         hold_event_wait
#define AG_HOLD_HOST_FUNC          fast_none

#define AG_FAST_KERNEL             fast_kernel
#define AG_FAST_KERNEL_EX          fast_kernel_ex
#define AG_FAST_MEMSET8            fast_none
#define AG_FAST_MEMSET16           fast_none
#define AG_FAST_MEMSET32           fast_none
#define AG_FAST_COPY               fast_none
#define AG_FAST_COPY_HTOD          fast_none
#define AG_FAST_COPY_DTOH          fast_none
#define AG_FAST_COPY_SYNC          fast_none
#define AG_FAST_COPY_HTOD_SYNC     fast_none
#define AG_FAST_COPY_DTOH_SYNC     fast_none
#define AG_FAST_MEMSET8_SYNC       fast_none
#define AG_FAST_MEMSET16_SYNC      fast_none
#define AG_FAST_MEMSET32_SYNC      fast_none
#define AG_FAST_EVENT_RECORD       fast_none
#define AG_FAST_EVENT_RECORD_FLAGS fast_none
#define AG_FAST_EVENT_WAIT         fast_none
#define AG_FAST_HOST_FUNC          fast_none

#define AG_RECORDER_KERNEL             ag_record_kernel
#define AG_RECORDER_KERNEL_EX          ag_record_kernel_ex
#define AG_RECORDER_MEMSET8            record_memset8
#define AG_RECORDER_MEMSET16           record_memset16
#define AG_RECORDER_MEMSET32           record_memset32
#define AG_RECORDER_COPY               record_copy
#define AG_RECORDER_COPY_HTOD          record_copy_htod
#define AG_RECORDER_COPY_DTOH          record_copy_dtoh
#define AG_RECORDER_COPY_SYNC          record_copy_sync
#define AG_RECORDER_COPY_HTOD_SYNC     record_copy_htod_sync
#define AG_RECORDER_COPY_DTOH_SYNC     record_copy_dtoh_sync
#define AG_RECORDER_MEMSET8_SYNC       record_memset8_sync
#define AG_RECORDER_MEMSET16_SYNC      record_memset16_sync
#define AG_RECORDER_MEMSET32_SYNC      record_memset32_sync
#define AG_RECORDER_EVENT_RECORD       record_event
#define AG_RECORDER_EVENT_RECORD_FLAGS ag_record_event_record
#define AG_RECORDER_EVENT_WAIT         ag_record_event_wait
#define AG_RECORDER_HOST_FUNC          ag_record_host_func

/* recorder(&op, AG_EP_sym, <the call's arguments>) */
#define AG_SPREAD(...) __VA_ARGS__
#define AG_RECORD_CALL(recorder, sym, args) recorder(&op, AG_EP_##sym, AG_SPREAD args)
#define AG_RECORD(kind, sym) AG_RECORD_CALL(AG_RECORDER_##kind, sym, AG_ARGS_##sym)
#define AG_FAST(kind, sym) AG_RECORD_CALL(AG_FAST_##kind, sym, AG_ARGS_##sym)
#define AG_HOLD(kind, sym) AG_RECORD_CALL(AG_HOLD_##kind, sym, AG_ARGS_##sym)

/* Whether a call of this kind that reached the driver waited for the device's work, as
 * a synchronize does (a copy into host memory: into pageable memory it returns once
 * done, and the host reads what came back): a block end for the speed guard
 * (match_speed.h) also when the engine is paused or issued the copy eagerly (a held
 * one ends the window through stage_wait, which calls the guard too). */
#define AG_WAITS_KERNEL             0
#define AG_WAITS_KERNEL_EX          0
#define AG_WAITS_MEMSET8            0
#define AG_WAITS_MEMSET16           0
#define AG_WAITS_MEMSET32           0
#define AG_WAITS_COPY               0
#define AG_WAITS_COPY_HTOD          0
#define AG_WAITS_COPY_DTOH          1
#define AG_WAITS_COPY_SYNC          1
#define AG_WAITS_COPY_HTOD_SYNC     0
#define AG_WAITS_COPY_DTOH_SYNC     1
#define AG_WAITS_MEMSET8_SYNC       0
#define AG_WAITS_MEMSET16_SYNC      0
#define AG_WAITS_MEMSET32_SYNC      0
#define AG_WAITS_EVENT_RECORD       0
#define AG_WAITS_EVENT_RECORD_FLAGS 0
#define AG_WAITS_EVENT_WAIT         0
#define AG_WAITS_HOST_FUNC          0

/* The body of a recordable call's wrapper; TIMED (a constant) adds AUTOGRAPH_TIMING's
 * clock reads: at entry, around the driver's function, and at the return (timing.h). */
#define AG_DEFER_BODY(sym, kind, TIMED)                                        \
        CUresult (*real) AG_PARAMS_##sym = ag_real_fn(AG_EP_##sym);            \
        CUresult result, held_result = CUDA_SUCCESS;                           \
        struct ag_op op;                                                       \
        int how = AG_PASS, waited = 0;                                         \
        uintptr_t wait_stream = 0;                                             \
        uint64_t t_in = TIMED ? ag_timing_now() : 0;                           \
        if (real == NULL)                                                      \
            return (CUresult)ag_driver_missing(AG_EP_##sym);                   \
        if (engine_wanted()) {                                                 \
            thread_submits = 1;                                                \
            if (AG_HOLD(kind, sym)) {                                          \
                how = AG_HELD;                                                 \
            } else if (AG_FAST(kind, sym)) {                                   \
                how = AG_QUEUED;                                               \
            } else {                                                           \
                ag_record_light = ag_engine_light_hint();                      \
                while ((how = AG_RECORD(kind, sym) ? offer(&op)                \
                                                   : offer_unrecorded(&op))    \
                       == AG_RECORD_FULL)                                      \
                    ag_record_light = 0;                                       \
                waited = eager_wait(how, &wait_stream);                        \
                held_result = ag_stage_settle(how == AG_HELD) ?                \
                              stage_wait() : CUDA_SUCCESS;                     \
            }                                                                  \
        }                                                                      \
        if (how == AG_HELD) {                                                  \
            if (TIMED)                                                         \
                ag_timing_held(AG_EP_##sym, t_in);                             \
            ag_count_call(AG_EP_##sym, held_result);                           \
            return held_result;                                                \
        }                                                                      \
        ag_launch_settle();         /* a chunk launch handed off, the fork */  \
        ag_join_settle(1);          /* backs owed: they come first */          \
        ag_stage_fence_if_wanted(); /* the ring was full: fence what went */   \
        uint64_t t_ret = 0;                                                    \
        if (TIMED) {                                                           \
            uint64_t t_call = ag_timing_now();                                 \
            result = real AG_ARGS_##sym;                                       \
            t_ret = ag_timing_now();                                           \
            ag_timing_submit(AG_EP_##sym, t_in, t_call, t_ret);                \
        } else {                                                               \
            result = real AG_ARGS_##sym;                                       \
        }                                                                      \
        if (how == AG_EAGER)                                                   \
            ag_engine_done(&op, result);                                       \
        else if (how == AG_QUEUED && result != CUDA_SUCCESS)                   \
            ag_engine_light_failed();                                          \
        ag_call_done(AG_EP_##sym, result);                                     \
        if (waited && result == CUDA_SUCCESS)                                  \
            ag_intercept_before(AG_EP_cuStreamSynchronize,                     \
                                (uintptr_t)ag_stream_handle(wait_stream));     \
        if (AG_WAITS_##kind)                                                   \
            ag_speed_sync();                                                   \
        if (TIMED)                                                             \
            ag_timing_shim_since(AG_EP_##sym, t_ret);                          \
        return result;

/* Two copies of the body: the exported wrapper, whose one branch on AUTOGRAPH_TIMING
 * sends timed calls to the static copy with the clock reads. */
#define AG_DEFER(sym, kind)                                                    \
    static CUresult sym##_timed AG_PARAMS_##sym                                \
    {                                                                          \
        AG_DEFER_BODY(sym, kind, 1)                                            \
    }                                                                          \
    AG_EXPORT CUresult sym AG_PARAMS_##sym                                     \
    {                                                                          \
        if (ag_timing_timed(AG_EP_##sym))                                      \
            return sym##_timed AG_ARGS_##sym;                                  \
        AG_DEFER_BODY(sym, kind, 0)                                            \
    }

#include "record_points.def"
#undef AG_DEFER
