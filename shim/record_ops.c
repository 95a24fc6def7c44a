/* record_ops.c -- record: from a driver call to a struct ag_op.
 *
 * What every recorder shares: the per-thread scratch buffer, stream keys and the
 * calling thread's current context; and the recorders of the kinds other than
 * kernels (record_kernel.c).  Copies: the shape is the size and the memory types,
 * the args are the two addresses; a pageable side, and the host side of a synchronous
 * copy, goes through the staging ring (record_stage.c).  Memsets: element size and
 * count; args: address and value.  The synchronous copies and memsets are recorded as
 * their async twins on the stream NULL means at their entry point.  Events: the event
 * and flags are the shape.
 *
 * Light recording (ag_record_light, set by the wrapper when the engine asks for it):
 * the op gets its identity (kind, stream, hash) and context but no args and no
 * parameter layout: enough for the engine to notice repeats, and cheaper where nothing
 * repeats.  An op's hash never covers what only a full recording knows (the args'
 * size), so light and full recordings of one call have the same hash.
 */
#include "record_internal.h"

#include "record_stage.h"

#include "alloc_table.h"
#include "config.h"
#include "driver.h"
#include "engine.h"
#include "entry_points.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- driver functions that are not wrapped ---------------------------------------- */

/* The driver's `name` at the ABI of CUDA `version`. */
static void *driver_proc_at(const char *name, int version)
{
    CUresult (*resolve)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        ag_real_fn(AG_EP_cuGetProcAddress_v2);
    CUdriverProcAddressQueryResult status;
    void *fn = NULL;
    if (resolve == NULL || resolve(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != 0)
        return NULL;
    return fn;
}

void *ag_driver_proc(const char *name)
{
    return driver_proc_at(name, CUDA_VERSION);
}

int ag_current_device(CUdevice *dev)
{
    static CUresult (*get_device)(CUdevice *);
    CUresult (*fn)(CUdevice *) = __atomic_load_n(&get_device, __ATOMIC_RELAXED);
    if (fn == NULL) {
        /* at CUDA_VERSION (13.0) the driver hands out cuCtxGetDevice_v2, which takes a
         * context too: ask for the CUDA 2.0 one */
        fn = (CUresult (*)(CUdevice *))driver_proc_at("cuCtxGetDevice", 2000);
        if (fn == NULL)
            return 0;
        __atomic_store_n(&get_device, fn, __ATOMIC_RELAXED);
    }
    return fn(dev) == CUDA_SUCCESS;
}


/* ---- scratch, streams ------------------------------------------------------------ */

AG_TLS int ag_record_light;


static AG_TLS unsigned char *scratch;
static AG_TLS size_t scratch_cap;
static pthread_key_t scratch_key;        /* frees a thread's scratch when it exits */
static pthread_once_t scratch_key_once = PTHREAD_ONCE_INIT;

static void scratch_release(void *p)
{
    free(p);
    scratch = NULL;
    scratch_cap = 0;
}

static void scratch_key_create(void)
{
    pthread_key_create(&scratch_key, scratch_release);
}

unsigned char *ag_rec_scratch(size_t bytes)
{
    if (bytes > scratch_cap) {
        size_t cap = scratch_cap ? scratch_cap : 1024;
        unsigned char *p;
        while (cap < bytes)
            cap *= 2;
        p = realloc(scratch, cap);
        if (p == NULL)
            return NULL;
        scratch = p;
        scratch_cap = cap;
        pthread_once(&scratch_key_once, scratch_key_create);
        pthread_setspecific(scratch_key, p);
    }
    return scratch;
}

static unsigned char per_thread_entry[AG_EP_COUNT];
static pthread_once_t per_thread_once = PTHREAD_ONCE_INIT;

static void find_per_thread_entries(void)
{
    for (int id = 0; id < AG_EP_COUNT; id++) {
        size_t len = strlen(ag_entry_name[id]);
        per_thread_entry[id] = len > 5 && (strcmp(ag_entry_name[id] + len - 5, "_ptsz") == 0 ||
                                           strcmp(ag_entry_name[id] + len - 5, "_ptds") == 0);
    }
}

uintptr_t ag_rec_null_stream_key(int entry)
{
    pthread_once(&per_thread_once, find_per_thread_entries);
    return per_thread_entry[entry] ? AG_STREAM_PER_THREAD : AG_STREAM_LEGACY;
}

CUstream ag_stream_handle(uintptr_t key)
{
    if (key == AG_STREAM_LEGACY)
        return CU_STREAM_LEGACY;
    if (key == AG_STREAM_PER_THREAD)
        return CU_STREAM_PER_THREAD;
    return (CUstream)key;
}

uintptr_t ag_record_stream_key(CUstream stream, int entry)
{
    return ag_rec_stream_key(stream, entry);
}

AG_HOT _Atomic unsigned ag_rec_context_generation = 1;

void ag_record_context_may_change(void)
{
    atomic_fetch_add_explicit(&ag_rec_context_generation, 1, memory_order_release);
}

uintptr_t ag_rec_context_ask(unsigned gen)
{
    struct ag_thread_hot *th = &ag_thread_hot;
    CUcontext ctx = NULL;
    DRIVER_FN(get_current, cuCtxGetCurrent);
    if (get_current == NULL || get_current(&ctx) != CUDA_SUCCESS)
        return (uintptr_t)ctx;      /* not kept: asked again next time */
    th->known_context = (uintptr_t)ctx;
    th->known_generation = gen;
    return th->known_context;
}

uintptr_t ag_record_current_context(void)
{
    return ag_rec_context();
}


/* ---- memsets, copies, events ------------------------------------------------------ */

const char *ag_record_function_name(uint64_t func)
{
    DRIVER_FN(func_name, cuFuncGetName);
    DRIVER_FN(kernel_name, cuKernelGetName);     /* cudart launches CUkernel handles */
    const char *name = NULL;
    if (func == 0)
        return NULL;
    if (func_name && func_name(&name, (CUfunction)(uintptr_t)func) == CUDA_SUCCESS)
        return name;
    if (kernel_name && kernel_name(&name, (CUkernel)(uintptr_t)func) == CUDA_SUCCESS)
        return name;
    return NULL;
}

void ag_record_describe(const struct ag_op *op, char *buf, size_t size)
{
    const char *name = NULL;
    struct ag_kernel_shape ks;
    if (op->kind == AG_OP_KERNEL && op->shape_len >= sizeof ks) {
        memcpy(&ks, op->shape, sizeof ks);
        name = ag_record_function_name(ks.func);
    }
    snprintf(buf, size, "%s%s%s", ag_entry_name[op->entry], name ? " of kernel " : "",
             name ? name : "");
}

/* An initialized op gets a shape and args, copied into the thread's scratch buffer:
 * 1, or 0 (rejected) when out of memory. */
static int finish_with(struct ag_op *op, const void *shape, uint32_t shape_len,
                       const void *args, uint32_t args_len)
{
    unsigned char *buf = ag_rec_scratch(shape_len + args_len);
    if (buf == NULL)
        return ag_rec_reject(op, "out of memory");
    memcpy(buf, shape, shape_len);
    memcpy(buf + shape_len, args, args_len);
    ag_rec_op_finish(op, buf, shape_len, args_len);
    return 1;
}

int ag_record_memset(struct ag_op *op, int entry, CUdeviceptr dst, unsigned value,
                     size_t count, CUstream stream, unsigned elem_size)
{
    struct ag_memset_shape ms = { .elem = elem_size };
    struct ag_memset_args ma = { .dst = dst, .count = count, .value = value };
    ag_rec_op_init(op, AG_OP_MEMSET, entry, stream);
    return finish_with(op, &ms, sizeof ms, &ma, sizeof ma);
}

/* Memory types asked of the driver, per thread, by address: a program copies to and
 * from the same few buffers (a stack scalar, a staging array) every step, and each
 * cuPointerGetAttribute is a driver call.  Not by page: one page may hold memory of
 * two types (a registered host range that ends mid-page and pageable memory after it;
 * on the simulator, device and pinned allocations from one heap), and a copy to
 * pageable memory taken for pinned would be held without its wait.  An address's type
 * changes only when the program allocates, frees, registers or unregisters memory
 * (intercept_lifetime.c tells), in two ways:
 *  - host memory (pinned, registered) or memory the allocation table does not know:
 *    ag_record_memory_changed empties every thread's cache;
 *  - device memory the allocation table holds (a loop that allocates a temporary each
 *    step): ag_record_device_memory_changed.  A cached pageable address stays pageable
 *    unless it now lies in a live allocation of the table (host memory released, and
 *    its addresses given to the device); any other is asked again (managed memory
 *    freed this way may have answered as host memory). */
#define TYPE_CACHE 64
static unsigned memory_generation = 1, device_generation = 1;
static AG_TLS struct {
    uintptr_t ptr;
    unsigned generation, device_generation, type;
    int device;                  /* memory_device's answer; -2: not asked yet */
} type_cache[TYPE_CACHE];

void ag_record_memory_changed(void)
{
    __atomic_add_fetch(&memory_generation, 1, __ATOMIC_RELEASE);
}

void ag_record_device_memory_changed(void)
{
    __atomic_add_fetch(&device_generation, 1, __ATOMIC_RELEASE);
}

static __typeof__(type_cache[0]) *type_entry(uintptr_t ptr)
{
    uintptr_t mix = ptr ^ (ptr >> 12) ^ (ptr >> 24);
    return &type_cache[(mix ^ (mix >> 6)) % TYPE_CACHE];
}

/* Whether entry e, cached for e->ptr at this generation, still holds after the device
 * memory changed (device_generation dgen): a pageable address outside every live
 * allocation of the table does. */
static int pageable_holds(__typeof__(type_cache[0]) *e, unsigned dgen)
{
    uintptr_t base;
    size_t size;
    if (e->type != 0 || ag_alloc_find(e->ptr, &base, &size))
        return 0;
    e->device_generation = dgen;
    return 1;
}

/* Memory type of an address: CU_MEMORYTYPE_DEVICE / _HOST (pinned), 0 if pageable. */
static unsigned memory_type(uintptr_t ptr)
{
    DRIVER_FN(get_attribute, cuPointerGetAttribute);
    unsigned type = 0, generation = __atomic_load_n(&memory_generation, __ATOMIC_ACQUIRE);
    unsigned dgen = __atomic_load_n(&device_generation, __ATOMIC_ACQUIRE);
    __typeof__(type_cache[0]) *e = type_entry(ptr);
    if (e->generation == generation && e->ptr == ptr &&
        (e->device_generation == dgen || pageable_holds(e, dgen)))
        return e->type;
    if (get_attribute == NULL ||
        get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)ptr) != CUDA_SUCCESS)
        type = 0;
    e->ptr = ptr;
    e->type = type;
    e->device = -2;
    e->generation = generation;
    e->device_generation = dgen;
    return type;
}

/* Whether ptr is managed memory (asked of the driver every time: only synchronous
 * copies and memsets ask, whose driver rules differ for it). */
static int managed_memory(uintptr_t ptr)
{
    DRIVER_FN(get_attribute, cuPointerGetAttribute);
    unsigned managed = 0;
    if (get_attribute == NULL ||
        get_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)ptr) != CUDA_SUCCESS)
        return 0;
    return managed != 0;
}

/* The devices of the process, asked once (1 when it cannot be asked). */
static int device_count(void)
{
    static int count;
    int n = __atomic_load_n(&count, __ATOMIC_RELAXED);
    if (n == 0) {
        DRIVER_FN(get_count, cuDeviceGetCount);
        if (get_count == NULL || get_count(&n) != CUDA_SUCCESS || n < 1)
            n = 1;
        __atomic_store_n(&count, n, __ATOMIC_RELAXED);
    }
    return n;
}

/* The device of the calling thread's context ctx, or -1: cached per thread until the
 * program allocates or frees memory (a context made at a destroyed one's address, on
 * another device, has memory allocated in it before any copy of its memory). */
static int context_device(uintptr_t ctx)
{
    static AG_TLS uintptr_t known_ctx;
    static AG_TLS unsigned known_generation;
    static AG_TLS int known_device = -1;
    unsigned generation = __atomic_load_n(&memory_generation, __ATOMIC_ACQUIRE) +
                          __atomic_load_n(&device_generation, __ATOMIC_ACQUIRE);
    CUdevice dev;
    if (ctx != known_ctx || generation != known_generation || known_device < 0) {
        known_ctx = ctx;
        known_generation = generation;
        known_device = ag_current_device(&dev) ? (int)dev : -1;
    }
    return known_device;
}

/* The device whose memory ptr is (device memory, not managed), or -1: asked of the
 * driver only in a process of several devices, cached with the memory type. */
static int memory_device(uintptr_t ptr)
{
    DRIVER_FN(get_attribute, cuPointerGetAttribute);
    int ordinal = -1;
    if (get_attribute == NULL || device_count() < 2 || managed_memory(ptr) ||
        get_attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)ptr) !=
            CUDA_SUCCESS)
        return -1;
    return ordinal;
}

/* memory_device(ptr), kept beside the type memory_type(ptr) has just cached. */
static int memory_device_cached(uintptr_t ptr)
{
    __typeof__(type_cache[0]) *e = type_entry(ptr);
    if (e->ptr != ptr)
        return memory_device(ptr);
    if (e->device == -2)
        e->device = memory_device(ptr);
    return e->device;
}

/* Whether a copy with a side in the memory of another device than its context's (a
 * peer copy through unified addressing) must go to the driver as made: on the legacy
 * stream, or synchronous, the driver starts it only once the work issued before it to
 * either device is done, an order between two engines that no graph of one can keep.
 * So it is not recorded, and every engine's window ends first (ag_engine_unrecorded).
 * The per-thread default stream, a program's NULL stream too, is taken the same way.
 * An asynchronous one on a created stream is ordered by the program's own events. */
static int peer_copy_ordered(const struct ag_op *op, uintptr_t dst, unsigned dst_type,
                             uintptr_t src, unsigned src_type, int sync)
{
    int mine, dst_dev, src_dev;
    if (!sync && op->stream != AG_STREAM_LEGACY && op->stream != AG_STREAM_PER_THREAD)
        return 0;
    if (dst_type != CU_MEMORYTYPE_DEVICE && src_type != CU_MEMORYTYPE_DEVICE)
        return 0;
    dst_dev = dst_type == CU_MEMORYTYPE_DEVICE ? memory_device_cached(dst) : -1;
    src_dev = src_type == CU_MEMORYTYPE_DEVICE ? memory_device_cached(src) : -1;
    if (dst_dev < 0 && src_dev < 0)
        return 0;
    mine = context_device(op->ctx);
    return mine >= 0 && ((dst_dev >= 0 && dst_dev != mine) || (src_dev >= 0 && src_dev != mine));
}

/* The async entry point that does what a synchronous one does on the stream NULL means
 * there (legacy or per-thread): a held synchronous call is issued and graphed as that. */
static int async_twin(int entry)
{
    switch (entry) {
    case AG_EP_cuMemcpyHtoD_v2:      return AG_EP_cuMemcpyHtoDAsync_v2;
    case AG_EP_cuMemcpyHtoD_v2_ptds: return AG_EP_cuMemcpyHtoDAsync_v2_ptsz;
    case AG_EP_cuMemcpyDtoH_v2:      return AG_EP_cuMemcpyDtoHAsync_v2;
    case AG_EP_cuMemcpyDtoH_v2_ptds: return AG_EP_cuMemcpyDtoHAsync_v2_ptsz;
    case AG_EP_cuMemcpyDtoD_v2:      return AG_EP_cuMemcpyDtoDAsync_v2;
    case AG_EP_cuMemcpyDtoD_v2_ptds: return AG_EP_cuMemcpyDtoDAsync_v2_ptsz;
    case AG_EP_cuMemcpy:             return AG_EP_cuMemcpyAsync;
    case AG_EP_cuMemcpy_ptds:        return AG_EP_cuMemcpyAsync_ptsz;
    case AG_EP_cuMemsetD8_v2:        return AG_EP_cuMemsetD8Async;
    case AG_EP_cuMemsetD8_v2_ptds:   return AG_EP_cuMemsetD8Async_ptsz;
    case AG_EP_cuMemsetD16_v2:       return AG_EP_cuMemsetD16Async;
    case AG_EP_cuMemsetD16_v2_ptds:  return AG_EP_cuMemsetD16Async_ptsz;
    case AG_EP_cuMemsetD32_v2:       return AG_EP_cuMemsetD32Async;
    case AG_EP_cuMemsetD32_v2_ptds:  return AG_EP_cuMemsetD32Async_ptsz;
    default:                         return entry;
    }
}

/* A full recording's host side of a copy with one side on the device (record_stage.h):
 * a pageable source, and every synchronous copy's host source, is snapshot into the
 * staging ring; a pageable destination gets a slot and the call owes a wait and the
 * copy back; a synchronous copy into pinned memory owes the wait.  Nothing is staged
 * while the engine would not take the op (the program captures, or autograph_disable):
 * it is not recorded then, so that it can never be held with the program's pointer.
 * NULL, or why the copy cannot be held. */
static const char *stage_host_side(const struct ag_op *op, const struct ag_copy_shape *cs,
                                   struct ag_copy_args *ca, int sync)
{
    const char *why = NULL;
    int from_host = cs->src_type != CU_MEMORYTYPE_DEVICE;
    int to_host = cs->dst_type != CU_MEMORYTYPE_DEVICE;
    if (!ag_engine_takes_ops())
        return "a copy that needs staging while the engine steps aside";
    if (sync && (managed_memory(ca->dst) || managed_memory(ca->src)))
        return "a synchronous copy of managed memory";
    if (from_host && (cs->src_type == 0 || sync))
        ca->src = ag_stage_in((const void *)(uintptr_t)ca->src, ca->bytes, op->stream,
                              op->ctx, &why);
    else if (to_host && cs->dst_type == 0)
        ca->dst = ag_stage_out((void *)(uintptr_t)ca->dst, ca->bytes, op->stream, op->ctx,
                               &why);
    else if (to_host && sync)
        ag_stage_owe_wait(op->stream);
    return why;
}

static int record_copy_as(struct ag_op *op, int entry, uintptr_t dst, uintptr_t src,
                          size_t bytes, CUstream stream, int sync)
{
    struct ag_copy_shape cs = { 0 };
    struct ag_copy_args ca = { .dst = dst, .src = src, .bytes = bytes };
    unsigned char *buf;
    const char *why;
    int staged;
    ag_rec_op_init(op, AG_OP_MEMCPY, entry, stream);
    cs.dst_type = memory_type(dst);
    cs.src_type = memory_type(src);
    buf = ag_rec_scratch(sizeof cs + sizeof ca);
    if (buf == NULL)
        return ag_rec_reject(op, "out of memory");
    if (peer_copy_ordered(op, dst, cs.dst_type, src, cs.src_type, sync))
        return ag_rec_reject(op, "a copy between two devices' memory, synchronous or on a "
                                 "default stream (ordered after both devices' work)");
    staged = sync || cs.dst_type == 0 || cs.src_type == 0;
    if (staged && cs.dst_type != CU_MEMORYTYPE_DEVICE && cs.src_type != CU_MEMORYTYPE_DEVICE)
        return ag_rec_reject(op, "a copy between two host buffers, one of them pageable or "
                                 "synchronous");
    if (staged && !op->light && (why = stage_host_side(op, &cs, &ca, sync)) != NULL)
        return ag_rec_reject(op, why);
    memcpy(buf, &cs, sizeof cs);
    memcpy(buf + sizeof cs, &ca, sizeof ca);
    ag_rec_op_finish(op, buf, sizeof cs, sizeof ca);
    return 1;
}

int ag_record_copy(struct ag_op *op, int entry, uintptr_t dst, uintptr_t src, size_t bytes,
                   CUstream stream)
{
    return record_copy_as(op, entry, dst, src, bytes, stream, 0);
}

int ag_record_copy_sync(struct ag_op *op, int entry, uintptr_t dst, uintptr_t src,
                        size_t bytes)
{
    return record_copy_as(op, async_twin(entry), dst, src, bytes, NULL, 1);
}

int ag_record_memset_sync(struct ag_op *op, int entry, CUdeviceptr dst, unsigned value,
                          size_t count, unsigned elem_size)
{
    int twin = async_twin(entry);
    if (memory_type((uintptr_t)dst) != CU_MEMORYTYPE_DEVICE ||
        (!ag_record_light && managed_memory((uintptr_t)dst))) {
        ag_rec_op_init(op, AG_OP_MEMSET, twin, NULL);
        return ag_rec_reject(op, "a synchronous memset of host or managed memory");
    }
    return ag_record_memset(op, twin, dst, value, count, NULL, elem_size);
}

/* The event is an argument, not part of the shape: a program that makes a new event
 * for every step (PyTorch, cuDNN) repeats the same shape, and the graph's event node
 * is patched to the new event like a kernel node to new pointers (replay_events.c). */
struct event_shape { uint32_t flags, pad; };

static int record_event_op(struct ag_op *op, int kind, int entry, CUevent event,
                           CUstream stream, unsigned flags)
{
    struct event_shape es = { .flags = flags };
    uint64_t handle = (uint64_t)(uintptr_t)event;
    ag_rec_op_init(op, kind, entry, stream);
    op->event = (uintptr_t)event;
    if (flags != 0)
        return ag_rec_reject(op, "event record or wait with flags");
    return finish_with(op, &es, sizeof es, &handle, sizeof handle);
}

/* The replay's fast path of an event record or wait (engine.h, ag_engine_fast_event):
 * the shape record_event_op would write, offered without building the op. */
int ag_record_fast_event(int entry, int kind, CUevent event, CUstream stream,
                         unsigned flags)
{
    struct event_shape es = { .flags = flags };
    if (flags != 0)
        return 0;
    return ag_engine_fast_event(&(struct ag_fast_event){
        .entry = entry, .kind = kind, .stream = ag_rec_stream_key(stream, entry),
        .ctx = ag_rec_context(), .event = (uintptr_t)event,
        .shape = (const unsigned char *)&es, .shape_len = sizeof es });
}

int ag_record_event_record(struct ag_op *op, int entry, CUevent event, CUstream stream,
                           unsigned flags)
{
    return record_event_op(op, AG_OP_EVENT_RECORD, entry, event, stream, flags);
}

int ag_record_event_wait(struct ag_op *op, int entry, CUstream stream, CUevent event,
                         unsigned flags)
{
    return record_event_op(op, AG_OP_EVENT_WAIT, entry, event, stream, flags);
}

/* A host function's shape is only its kind (a fixed word): which function runs and
 * on what data are args, as a kernel's pointers are. */
int ag_record_host_func(struct ag_op *op, int entry, CUstream stream, CUhostFn fn,
                        void *user)
{
    static const uint64_t shape = 0x686f737466756e63ull;    /* "hostfunc" */
    struct ag_host_args a = { (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)user };
    ag_rec_op_init(op, AG_OP_HOST_FUNC, entry, stream);
    if (!ag_config()->host_funcs)
        return ag_rec_reject(op, "a host function (AUTOGRAPH_HOST_FUNCS=0)");
    if (fn == NULL)
        return ag_rec_reject(op, "a host function that is NULL");
    return finish_with(op, &shape, sizeof shape, &a, sizeof a);
}
