/* record_ops.h -- record: turning driver calls into struct ag_op.
 *
 * The recorders (one per kind of call in record_points.def; record_ops.c, kernels in
 * record_kernel.c) copy what identifies a call (its shape) and what parameterizes it
 * (its args) into a per-thread scratch buffer and fill a struct ag_op that points
 * into it; the engine copies what it keeps.  The shapes' layouts are below: the CUDA
 * backend reads them back to make the call again (backend_cuda_issue.c).
 */
#ifndef AG_RECORD_OPS_H
#define AG_RECORD_OPS_H

#include <cuda.h>

#include "op.h"
#include <string.h>

int ag_record_kernel(struct ag_op *op, int entry, CUfunction f, unsigned gx, unsigned gy,
                     unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                     CUstream stream, void **kernel_params, void **extra);
int ag_record_kernel_ex(struct ag_op *op, int entry, const CUlaunchConfig *config,
                        CUfunction f, void **kernel_params, void **extra);
int ag_record_memset(struct ag_op *op, int entry, CUdeviceptr dst, unsigned value,
                     size_t count, CUstream stream, unsigned elem_size);
int ag_record_copy(struct ag_op *op, int entry, uintptr_t dst, uintptr_t src, size_t bytes,
                   CUstream stream);
/* The synchronous cuMemcpy{HtoD,DtoH,DtoD}_v2, cuMemcpy and cuMemsetD{8,16,32}_v2 (and
 * their _ptds forms): recorded as their async twins on the stream NULL means there.  A
 * copy's host side is staged (record_stage.h); a memset of host or managed memory,
 * synchronous for the host, is not recorded. */
int ag_record_copy_sync(struct ag_op *op, int entry, uintptr_t dst, uintptr_t src,
                        size_t bytes);
int ag_record_memset_sync(struct ag_op *op, int entry, CUdeviceptr dst, unsigned value,
                          size_t count, unsigned elem_size);
int ag_record_event_record(struct ag_op *op, int entry, CUevent event, CUstream stream,
                           unsigned flags);
int ag_record_event_wait(struct ag_op *op, int entry, CUstream stream, CUevent event,
                         unsigned flags);
/* cuLaunchHostFunc: the function and its userData are args (patched like a kernel's
 * pointers); a chunk ends after it (build_collective.c). */
int ag_record_host_func(struct ag_op *op, int entry, CUstream stream, CUhostFn fn,
                        void *user);

/* Set by the wrapper before a recorder runs: 1 records the op light (identity only,
 * no args, no context: see record_ops.c), as the engine asks (ag_engine_light_hint). */
extern AG_TLS int ag_record_light;

/* The light fast path of a kernel launch (engine.h): 1 when the launch was queued
 * light (make the call, nothing else), 0 when it must be recorded. */
int ag_record_light_kernel(int entry, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                           unsigned bx, unsigned by, unsigned bz, unsigned smem,
                           CUstream stream, void **kernel_params, void **extra);

/* The replay's fast path of a kernel launch (engine.h, ag_engine_fast_kernel), for a
 * launch with kernelParams (cuLaunchKernelEx: with any recorded launch attributes)
 * while a replay waits: 1 when the launch was held (return success, nothing else), 0
 * when it must be recorded. */
int ag_record_fast_kernel(int entry, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned smem,
                          CUstream stream, void **kernel_params, void **extra);
int ag_record_fast_kernel_ex(int entry, const CUlaunchConfig *config, CUfunction f,
                             void **kernel_params, void **extra);
/* The same for a launch made through the runtime's launch call that is known to reach
 * the driver as `entry` with f and stream in context ctx (intercept_cudart.c, which
 * has read it already); counted apart. */
int ag_record_fast_runtime(int entry, CUfunction f, const unsigned grid[3],
                           const unsigned block[3], unsigned smem, CUstream stream,
                           void **kernel_params, uintptr_t ctx);

/* The replay's fast path of an event record or stream wait (kind AG_OP_EVENT_RECORD
 * or AG_OP_EVENT_WAIT; engine.h, ag_engine_fast_event): 1 when it was held, 0 when it
 * must be recorded. */
int ag_record_fast_event(int entry, int kind, CUevent event, CUstream stream,
                         unsigned flags);

/* The calling thread's current context (cached until a call may change it). */
uintptr_t ag_record_current_context(void);

/* The stream handle that a key stands for, and the key of a handle passed to
 * `entry` (NULL means the legacy or the per-thread stream, by the entry point). */
CUstream ag_stream_handle(uintptr_t key);
uintptr_t ag_record_stream_key(CUstream stream, int entry);

/* A kernel op's args in the two forms the driver takes: `params` (kernelParams, with
 * the layout the recorder found) or `extra` (the packed buffer); the other is NULL. */
struct ag_kernel_args {
    void **params, **extra;
    void *stack[64], *extra_buf[5];
    size_t extra_size;
};
CUresult ag_kernel_args_open(const struct ag_op *op, struct ag_kernel_args *ka);
void ag_kernel_args_close(struct ag_kernel_args *ka);

/* Shapes and args as the recorders write them (read by the backend to patch and to
 * issue).  A kernel's shape is its function, argument form and parameter size,
 * followed by nattrs attribute records; its args are its launch size (struct
 * ag_kernel_dims) and then its parameter bytes (form AG_FORM_PARAMS: laid out as
 * op->layout says) or the caller's packed buffer (AG_FORM_EXTRA).  The launch size
 * is an argument, not part of the identity: a window whose launches change size (a
 * decoder's attention as its cache grows, a batch of another size) repeats, and a
 * replay patches the sizes as it patches changed parameters.  The function is in
 * both: the hash covers it (windows repeat by their functions), but the args carry it
 * too, and a replay may patch it (op.h: AG_KERNEL_FUNC_BYTES) where the rest of the
 * shape is the template's, its parameter layout included (layout_sig: launches of
 * two functions whose parameters lie alike; a batch size that makes a library pick
 * another kernel of the same form).  Collectives have a layout_sig of their own. */
struct ag_kernel_shape {
    uint64_t func;
    uint32_t form, args_len, nattrs, pad;   /* args_len: parameter bytes, after the dims */
    uint64_t layout_sig;        /* of the parameter layout; not hashed, like args_len */
};
_Static_assert(sizeof(((struct ag_kernel_shape *)0)->func) == AG_KERNEL_FUNC_BYTES &&
               __builtin_offsetof(struct ag_kernel_shape, func) == 0,
               "a kernel shape begins with the function a replay may patch");
struct ag_kernel_dims { uint32_t grid[3], block[3], smem, pad; uint64_t func; };
#define AG_KERNEL_DIMS ((uint32_t)sizeof(struct ag_kernel_dims))

/* The launch size at the start of a kernel op's args (copied: a chunk packs args
 * unaligned). */
static inline struct ag_kernel_dims ag_kernel_dims_of(const unsigned char *args)
{
    struct ag_kernel_dims d;
    memcpy(&d, args, sizeof d);
    return d;
}
enum { AG_FORM_PARAMS, AG_FORM_EXTRA };
struct ag_attr_record { uint32_t id, pad; unsigned char value[sizeof(CUlaunchAttributeValue)]; };
/* A memset's and a copy's size are arguments, like a kernel's launch size: a replay
 * patches them (cuGraphExecMemsetNodeSetParams and cuGraphExecMemcpyNodeSetParams take
 * another width; tests/gpu/rules_prog.cu tries it on the GPU). */
struct ag_memset_shape { uint32_t elem, pad; };
struct ag_memset_args { uint64_t dst, count; uint32_t value, pad; };
struct ag_copy_shape { uint32_t dst_type, src_type; };
struct ag_copy_args { uint64_t dst, src, bytes; };
struct ag_host_args { uint64_t fn, user; };    /* a host function and its userData */

/* Functions of the driver that are not wrapped entry points, resolved by name
 * through the real cuGetProcAddress (for this header's CUDA version). */
void *ag_driver_proc(const char *name);

/* var (of `type`) = the driver's function named `symbol`, looked up once (threads
 * may race to: atomic).  DRIVER_FN(var, name) gives the name as written: `name` may be
 * a macro of cuda.h for a versioned symbol, which ag_driver_proc must not be given. */
#define DRIVER_PROC(var, type, symbol) \
    static type var##_cached; \
    type var = __atomic_load_n(&var##_cached, __ATOMIC_RELAXED); \
    if (var == NULL) \
        __atomic_store_n(&var##_cached, var = (type)ag_driver_proc(symbol), __ATOMIC_RELAXED)
#define DRIVER_FN(var, name) DRIVER_PROC(var, __typeof__(&name), #name)

/* The current context's device: 1, or 0 when there is none or it cannot be asked. */
int ag_current_device(CUdevice *dev);

/* ---- dynamic shared memory limits (record_smem.c) ---- */

/* A function's dynamic shared memory limit until the program raises it. */
#define AG_SMEM_DEFAULT_LIMIT 49152u

/* Set (intercept_attributes.c) once a function's dynamic shared memory limit has been
 * changed: from then on a kernel launch asking for dynamic shared memory is checked
 * against its function's limit now, and one over it is not recorded (it goes to the
 * driver at its call, and fails there as it would without the shim); and the backend
 * lifts a limit lowered since an op was held around its own uses of that op. */
extern int ag_smem_limit_changed;

/* 1 when launch handle f (a CUfunction or CUkernel) may not ask for smem bytes in
 * context ctx now, or its limit cannot be read. */
int ag_smem_over_limit(CUfunction f, uintptr_t ctx, unsigned smem);

/* The limits kept per thread are stale: all of them (before a module or library is
 * unloaded, before a context goes, after a limit is set through a CUfunction, which
 * a CUkernel may share), or those of `handle` (after a limit is set through it; a
 * CUkernel's function in the current context with it). */
void ag_smem_limits_forget(void);
void ag_smem_limit_set_on(uintptr_t handle, int kernel);

/* The raise lock, held by the attribute wrappers around the program's own set of a
 * limit, so that it never lands between a raise and its restore. */
void ag_smem_lock(void);
void ag_smem_unlock(void);

/* Limits lifted for one use of held ops: zero-initialized before the first raise,
 * restored (in reverse) by ag_smem_restore, which must follow even when no raise
 * returned 1 (the lock may be held). */
#define AG_SMEM_RAISED_MAX 32
struct ag_smem_raised {
    int n, locked;
    uintptr_t handle[AG_SMEM_RAISED_MAX];
    unsigned char kernel[AG_SMEM_RAISED_MAX];
    int old[AG_SMEM_RAISED_MAX];
};

/* Lifts launch handle f's limit (a CUfunction's, or a CUkernel's on the current
 * device) to smem bytes when it is lower now (only once some limit has changed): 1
 * when lifted, 0 when not needed or not possible (the op's own call then fails as the
 * program's would have). */
int ag_smem_raise(struct ag_smem_raised *r, uintptr_t f, unsigned smem);
void ag_smem_restore(struct ag_smem_raised *r);

/* Kernel op's launch handle and dynamic shared memory bytes; 0 for other ops. */
unsigned ag_record_kernel_smem(const struct ag_op *op, uintptr_t *f);

/* Whether kernel op's function goes with the module or library that a call of `entry`
 * (cuModuleUnload, cuLibraryUnload) unloads: 1 yes, 0 no, -1 cannot tell. */
int ag_record_kernel_unloaded(const struct ag_op *op, int entry, uintptr_t handle);

/* Whether kernel op's function is a collective (NCCL's, or named by
 * AUTOGRAPH_COLLECTIVE_PREFIXES): 1 or 0, from its parameter layout's flag (asked
 * once per function); the backend's waits_for_peers. */
int ag_record_kernel_collective(const struct ag_op *op);

/* record_collective.c: whether a kernel of this name is a collective, and whether
 * function f is one (its name asked of the driver: once per function, by
 * record_kernel.c). */
int ag_collective_name(const char *name);
int ag_collective_function(CUfunction f);

/* The driver's name of a kernel op's function handle (a CUfunction, or the CUkernel
 * that cudart launches), or NULL; also the CUDA backend's function_name. */
const char *ag_record_function_name(uint64_t func);

/* "cuLaunchKernel of kernel _Z4stepPfi" (or just the entry point's name), for reports. */
void ag_record_describe(const struct ag_op *op, char *buf, size_t size);

/* Forgets kernel parameter layouts (a module was unloaded: handles may be reused). */
void ag_record_forget_layouts(void);

/* The calling thread's current context is asked of the driver once, then taken from
 * a per-thread copy until this is called: after every context call (create, destroy,
 * push, pop, set current, primary context calls) and every flush point, so that the
 * first op of each window asks again: asking on every op costs a driver call, which
 * misses the caches when they are cold (between a Python program's ops). */
void ag_record_context_may_change(void);

/* The program allocated, freed, registered or unregistered memory: memory types
 * the recorder remembers are asked again.  The device variant, for device memory the
 * allocation table (alloc_table.h) already holds: only device addresses, and host
 * addresses now inside a live allocation, are asked again. */
void ag_record_memory_changed(void);
void ag_record_device_memory_changed(void);

#endif
