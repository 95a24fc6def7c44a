/* record_ops.c -- record: from a driver call to a struct ag_op, and back.
 *
 * Kernels: the shape is the function, grid, block, shared memory, the argument form
 * and the launch attributes; the args are the parameter bytes, laid out as the
 * driver's cuFuncGetParamInfo reports (kernelParams form) or the caller's packed
 * buffer (`extra` form).  Copies: the shape is the size and the memory types, the
 * args are the two addresses; pageable host memory is refused (the driver reads it
 * at call time, a graph at replay time).  Memsets: element size and count; args:
 * address and value.  Events: the event and flags are the shape.
 *
 * Light recording (ag_record_light, set by the wrapper when the engine asks for it):
 * the op gets its identity (kind, stream, hash) but no args, no parameter layout and
 * no context: enough for the engine to notice repeats, and cheaper where nothing
 * repeats.  An op's hash never covers what only a full recording knows (the args'
 * size), so light and full recordings of one call have the same hash.
 */
#include "record_ops.h"

#include "driver.h"
#include "engine.h"
#include "entry_points.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

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

static unsigned char *scratch_get(size_t bytes)
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

static uintptr_t stream_key(CUstream s, int entry)
{
    if (s == NULL) {
        pthread_once(&per_thread_once, find_per_thread_entries);
        return per_thread_entry[entry] ? AG_STREAM_PER_THREAD : AG_STREAM_LEGACY;
    }
    if (s == CU_STREAM_LEGACY)
        return AG_STREAM_LEGACY;
    if (s == CU_STREAM_PER_THREAD)
        return AG_STREAM_PER_THREAD;
    return (uintptr_t)s;
}

CUstream ag_stream_handle(uintptr_t key)
{
    if (key == AG_STREAM_LEGACY)
        return CU_STREAM_LEGACY;
    if (key == AG_STREAM_PER_THREAD)
        return CU_STREAM_PER_THREAD;
    return (CUstream)key;
}

static AG_HOT _Atomic unsigned context_generation = 1;

void ag_record_context_may_change(void)
{
    atomic_fetch_add_explicit(&context_generation, 1, memory_order_release);
}

static uintptr_t current_context(void)
{
    unsigned gen = atomic_load_explicit(&context_generation, memory_order_acquire);
    struct ag_thread_hot *th = &ag_thread_hot;
    if (th->known_generation == gen && gen != 0)   /* 0: a new thread's, or wrapped round */
        return th->known_context;
    CUcontext ctx = NULL;
    DRIVER_FN(get_current, cuCtxGetCurrent);
    if (get_current == NULL || get_current(&ctx) != CUDA_SUCCESS)
        return (uintptr_t)ctx;      /* not kept: asked again next time */
    th->known_context = (uintptr_t)ctx;
    th->known_generation = gen;
    return th->known_context;
}

static void op_init(struct ag_op *op, int kind, int entry, CUstream stream)
{
    memset(op, 0, sizeof *op);
    op->kind = (unsigned char)kind;
    op->entry = (unsigned short)entry;
    op->stream = stream_key(stream, entry);
    op->light = (unsigned char)ag_record_light;
    if (!op->light)
        op->ctx = current_context();
}

static int reject(struct ag_op *op, const char *why)
{
    op->reject = why;
    op->hash = (uint64_t)op->entry;
    return 0;
}

/* An op's identity: its kind, entry point and shape bytes. */
static uint64_t shape_hash(int kind, int entry, const void *shape, size_t shape_len)
{
    return ag_hash_bytes(ag_hash_mix((uint64_t)kind, (uint64_t)entry), shape, shape_len);
}

static uint64_t op_hash(const struct ag_op *op, const unsigned char *shape, uint32_t shape_len)
{
    return shape_hash(op->kind, op->entry, shape, shape_len);
}

static void op_finish(struct ag_op *op, unsigned char *buf, uint32_t shape_len, uint32_t args_len)
{
    op->shape = buf;
    op->shape_len = shape_len;
    op->args = buf + shape_len;
    op->args_len = args_len;
    op->hash = op_hash(op, buf, shape_len);
}

/* ---- kernel parameter layouts ----------------------------------------------------- */

struct ag_layout {
    uintptr_t func;
    unsigned generation;
    int count;
    uint32_t total;
    int padded;                      /* the parameters leave bytes of [0, total) uncovered */
    uint32_t *offset, *size;
    struct ag_layout *retired_next;  /* on the retired list once stale */
    UT_hash_handle hh;
};

static struct ag_layout *layouts;
static struct ag_layout *retired_layouts;   /* stale, kept: ops may still point to them */
static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;
static AG_HOT unsigned layout_generation = 1;
#define LAYOUT_CACHE 16            /* per thread, direct-mapped by function */
static AG_TLS struct ag_layout *recent_layouts[LAYOUT_CACHE];

void ag_record_forget_layouts(void)
{
    __atomic_add_fetch(&layout_generation, 1, __ATOMIC_RELEASE);
}

/* The bytes the parameters of l cover (they do not overlap). */
static uint64_t covered(const struct ag_layout *l)
{
    uint64_t bytes = 0;
    for (int p = 0; p < l->count; p++)
        bytes += l->size[p];
    return bytes;
}

static int query_layout(CUfunction f, struct ag_layout *l)
{
    DRIVER_FN(func_info, cuFuncGetParamInfo);
    DRIVER_FN(kernel_info, cuKernelGetParamInfo);
    size_t cap = 0;
    int use_kernel = 0;
    for (int i = 0;; i++) {
        size_t off, size;
        CUresult rc = CUDA_ERROR_NOT_FOUND;
        if (!use_kernel && func_info)
            rc = func_info(f, (size_t)i, &off, &size);
        if (rc == CUDA_ERROR_INVALID_HANDLE && i == 0 && kernel_info) {
            use_kernel = 1;
            rc = kernel_info((CUkernel)f, (size_t)i, &off, &size);
        } else if (use_kernel) {
            rc = kernel_info((CUkernel)f, (size_t)i, &off, &size);
        }
        if (rc == CUDA_ERROR_INVALID_VALUE) {
            l->padded = covered(l) != l->total;
            return 1;                    /* past the last parameter */
        }
        if (rc != CUDA_SUCCESS)
            return 0;
        if ((size_t)l->count == cap) {
            cap = cap ? 2 * cap : 8;
            l->offset = realloc(l->offset, cap * sizeof *l->offset);
            l->size = realloc(l->size, cap * sizeof *l->size);
            if (l->offset == NULL || l->size == NULL)
                return 0;
        }
        l->offset[l->count] = (uint32_t)off;
        l->size[l->count] = (uint32_t)size;
        if (off + size > l->total)
            l->total = (uint32_t)(off + size);
        l->count++;
    }
}

static const struct ag_layout *layout_of(CUfunction f)
{
    unsigned gen = __atomic_load_n(&layout_generation, __ATOMIC_ACQUIRE);
    uintptr_t key = (uintptr_t)f;
    struct ag_layout **recent = &recent_layouts[(key >> 4) % LAYOUT_CACHE];
    struct ag_layout *l = *recent;

    if (l && l->func == key && l->generation == gen)
        return l;
    pthread_mutex_lock(&layout_lock);
    HASH_FIND(hh, layouts, &key, sizeof key, l);
    if (l && l->generation != gen) {
        HASH_DEL(layouts, l);            /* stale: the old one stays allocated, as */
        l->retired_next = retired_layouts;   /* ops and graphs may still point to it */
        retired_layouts = l;
        l = NULL;
    }
    if (l == NULL) {
        l = calloc(1, sizeof *l);
        if (l && query_layout(f, l)) {
            l->func = key;
            l->generation = gen;
            HASH_ADD(hh, layouts, func, sizeof l->func, l);
        } else if (l) {
            free(l->offset);
            free(l->size);
            free(l);
            l = NULL;
        }
    }
    pthread_mutex_unlock(&layout_lock);
    if (l)
        *recent = l;
    return l;
}

/* ---- kernels ---------------------------------------------------------------------- */

struct kernel_shape {
    uint64_t func;
    uint32_t grid[3], block[3], smem, form, args_len, nattrs;
};
enum { FORM_PARAMS, FORM_EXTRA };

struct attr_record { uint32_t id, pad; unsigned char value[sizeof(CUlaunchAttributeValue)]; };

/* Bytes of an attribute's value that mean something; 0: not recorded. */
static size_t attr_size(CUlaunchAttributeID id)
{
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        return sizeof(int);
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        return 3 * sizeof(unsigned);
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        return sizeof(CUlaunchMemSyncDomainMap);
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        return sizeof(CUaccessPolicyWindow);
    default:
        return 0;
    }
}

/* Writes attribute a's record into r (zeroed by the caller: the bytes past its value
 * stay 0, so records compare whole): 0 when a is not recorded. */
static int attr_record_of(const CUlaunchAttribute *a, struct attr_record *r)
{
    size_t size = attr_size(a->id);
    if (size == 0)
        return 0;
    r->id = a->id;
    memcpy(r->value, &a->value, size);
    return 1;
}

/* Size of the packed buffer of an `extra` array, or -1 if it has other keys. */
static long extra_buffer(void **extra, void **buf)
{
    long size = -1;
    *buf = NULL;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            *buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = (long)*(size_t *)extra[i + 1];
        else
            return -1;
    }
    return *buf ? size : -1;
}

/* A kernel-params launch's shape, args_len 0: what its hash covers (full and light). */
static struct kernel_shape kernel_shape_of(CUfunction f, const unsigned grid[3],
                                           const unsigned block[3], unsigned smem,
                                           unsigned nattrs)
{
    struct kernel_shape ks = { .func = (uint64_t)(uintptr_t)f, .smem = smem,
                               .form = FORM_PARAMS, .nattrs = nattrs };
    memcpy(ks.grid, grid, sizeof ks.grid);
    memcpy(ks.block, block, sizeof ks.block);
    return ks;
}

/* Writes the shape (args_len still 0) to the start of the scratch buffer. */
static unsigned char *kernel_shape(struct ag_op *op, const struct kernel_shape *ks,
                                   const CUlaunchAttribute *attrs, size_t shape_len)
{
    unsigned char *buf = scratch_get(shape_len);
    if (buf == NULL) {
        reject(op, "out of memory");
        return NULL;
    }
    memset(buf, 0, shape_len);
    memcpy(buf, ks, sizeof *ks);
    for (unsigned a = 0; a < ks->nattrs; a++) {
        struct attr_record *r = (struct attr_record *)(buf + sizeof *ks) + a;
        if (!attr_record_of(&attrs[a], r)) {
            reject(op, "kernel launch with a launch attribute that is not recorded");
            return NULL;
        }
    }
    return buf;
}

/* One parameter's bytes: the common sizes copied inline, not through a call. */
static inline void copy_param(unsigned char *dst, const void *src, uint32_t size)
{
    switch (size) {
    case 8: memcpy(dst, src, 8); break;
    case 4: memcpy(dst, src, 4); break;
    case 16: memcpy(dst, src, 16); break;
    case 2: memcpy(dst, src, 2); break;
    case 1: memcpy(dst, src, 1); break;
    default: memcpy(dst, src, size); break;
    }
}

/* A launch's parameter bytes as laid out by `layout` (a struct ag_layout), padding
 * zeroed. */
static void fill_params(const void *layout, void *const *params, unsigned char *dst)
{
    const struct ag_layout *l = layout;
    if (l->padded)
        memset(dst, 0, l->total);
    for (int p = 0; p < l->count; p++)
        copy_param(dst + l->offset[p], params[p], l->size[p]);
}

/* Adds the args after the shape in the scratch buffer (a full recording). */
static int kernel_args(struct ag_op *op, CUfunction f, size_t shape_len, void **params,
                       const void *packed, long packed_len)
{
    const struct ag_layout *l = NULL;
    long args_len = packed_len;
    unsigned char *buf;
    if (packed == NULL) {
        l = layout_of(f);
        if (l == NULL)
            return reject(op, "kernel whose parameter layout the driver does not report");
        if (l->count && !params)
            return reject(op, "kernel launch without parameters");
        args_len = l->total;
    }
    buf = scratch_get(shape_len + (size_t)args_len);
    if (buf == NULL)
        return reject(op, "out of memory");
    ((struct kernel_shape *)(void *)buf)->args_len = (uint32_t)args_len;
    if (l) {
        fill_params(l, params, buf + shape_len);
    } else {
        memcpy(buf + shape_len, packed, (size_t)args_len);
    }
    op->layout = l;
    op->shape = buf;
    op->shape_len = (uint32_t)shape_len;
    op->args = buf + shape_len;
    op->args_len = (uint32_t)args_len;
    return 1;
}

/* Whether a launch asking for smem bytes must not be recorded: only once a limit has
 * changed (ag_smem_limit_changed), checked against f's limit in ctx (0: the current
 * context, asked only then). */
static int smem_refused(CUfunction f, uintptr_t ctx, unsigned smem)
{
    return smem && __atomic_load_n(&ag_smem_limit_changed, __ATOMIC_RELAXED) &&
           ag_smem_over_limit(f, ctx ? ctx : current_context(), smem);
}

static int record_kernel_common(struct ag_op *op, CUfunction f, const unsigned grid[3],
                                const unsigned block[3], unsigned smem,
                                const CUlaunchAttribute *attrs, unsigned nattrs,
                                void **params, void **extra)
{
    struct kernel_shape ks = kernel_shape_of(f, grid, block, smem, nattrs);
    void *packed = NULL;
    long packed_len = 0;
    size_t shape_len = sizeof ks + nattrs * sizeof(struct attr_record);
    unsigned char *buf;

    if (smem_refused(f, op->ctx, smem))
        return reject(op, "kernel launch asking for more dynamic shared memory than its "
                          "function's limit");

    if (extra && !params) {
        packed_len = extra_buffer(extra, &packed);
        if (packed_len < 0)
            return reject(op, "kernel launch with an `extra` array other than a packed buffer");
        ks.form = FORM_EXTRA;
    }
    buf = kernel_shape(op, &ks, attrs, shape_len);
    if (buf == NULL)
        return 0;
    op->hash = op_hash(op, buf, (uint32_t)shape_len);     /* args_len is 0 here */
    if (op->light) {
        op->shape = buf;
        op->shape_len = (uint32_t)shape_len;
        return 1;
    }
    return kernel_args(op, f, shape_len, params, packed, packed_len);
}

/* A launch's fingerprint word while skimming (record_skim.c): cheap, not the shape hash. */
static uint64_t skim_word(CUfunction f, const unsigned grid[3], const unsigned block[3],
                          unsigned smem, CUstream stream)
{
    uint64_t w = (uint64_t)(uintptr_t)f * 0x9e3779b97f4a7c15ull;
    w ^= ((uint64_t)grid[0] << 32 | block[0]) + ((uint64_t)grid[1] << 40 ^ (uint64_t)grid[2] << 20);
    w ^= ((uint64_t)block[1] << 48 ^ (uint64_t)block[2] << 36 ^ smem) * 0xbf58476d1ce4e5b9ull;
    return w ^ (uint64_t)(uintptr_t)stream;
}

int ag_record_light_kernel(int entry, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                           unsigned bx, unsigned by, unsigned bz, unsigned smem,
                           CUstream stream, void **kernel_params, void **extra)
{
    const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
    struct kernel_shape ks;
    if (!ag_light_open() || (extra && !kernel_params))
        return 0;
    if (ag_skim_blind())
        return ag_engine_skim(skim_word(f, grid, block, smem, stream), 1);
    ks = kernel_shape_of(f, grid, block, smem, 0);
    /* the hash that ag_record_kernel gives the same call (args_len 0 when hashed) */
    return ag_engine_light_queue(shape_hash(AG_OP_KERNEL, entry, &ks, sizeof ks),
                                 stream_key(stream, entry), entry, AG_OP_KERNEL);
}

int ag_record_kernel(struct ag_op *op, int entry, CUfunction f, unsigned gx, unsigned gy,
                     unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                     CUstream stream, void **kernel_params, void **extra)
{
    const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
    op_init(op, AG_OP_KERNEL, entry, stream);
    return record_kernel_common(op, f, grid, block, smem, NULL, 0, kernel_params, extra);
}

static void config_dims(const CUlaunchConfig *config, unsigned grid[3], unsigned block[3])
{
    grid[0] = config->gridDimX, grid[1] = config->gridDimY, grid[2] = config->gridDimZ;
    block[0] = config->blockDimX, block[1] = config->blockDimY, block[2] = config->blockDimZ;
}

int ag_record_kernel_ex(struct ag_op *op, int entry, const CUlaunchConfig *config,
                        CUfunction f, void **kernel_params, void **extra)
{
    unsigned grid[3], block[3];
    if (config == NULL) {
        memset(op, 0, sizeof *op);
        op->entry = (unsigned short)entry;
        return reject(op, "cuLaunchKernelEx without a configuration");
    }
    op_init(op, AG_OP_KERNEL, entry, config->hStream);
    config_dims(config, grid, block);
    if (config->numAttrs && config->attrs == NULL)
        return reject(op, "cuLaunchKernelEx with attributes missing");
    return record_kernel_common(op, f, grid, block, config->sharedMemBytes, config->attrs,
                                config->numAttrs, kernel_params, extra);
}

/* The replay's fast path: a launch with kernelParams (and any launch attributes), as
 * struct ag_fast_kernel's call.  fast_call_matches compares it with the shape a
 * recorder wrote (kernel_shape_of, then kernel_shape's attribute records) and checks
 * the recorded layout is still f's, as record_kernel_common and layout_of would,
 * without building either. */
struct fast_call {
    CUfunction f;
    unsigned grid[3], block[3], smem, nattrs;
    const CUlaunchAttribute *attrs;
};

/* Whether the call's attributes are those recorded after the shape: each one's
 * record, as kernel_shape writes it, is the one recorded in its place. */
static int fast_attrs_match(const struct fast_call *c, const unsigned char *records)
{
    for (unsigned a = 0; a < c->nattrs; a++) {
        struct attr_record r;
        memset(&r, 0, sizeof r);
        if (!attr_record_of(&c->attrs[a], &r) ||
            memcmp(&r, records + a * sizeof r, sizeof r) != 0)
            return 0;
    }
    return 1;
}

/* The comparison of a call with nattrs attributes, the attributes themselves apart. */
static AG_INLINE int fast_shape_matches(const struct ag_fast_kernel *k,
                                        const unsigned char *shape, uint32_t shape_len,
                                        const void *layout, uint32_t args_len,
                                        unsigned nattrs)
{
    const struct fast_call *c = k->call;
    const struct ag_layout *l = layout;
    struct kernel_shape ks;
    if (shape_len != sizeof ks + nattrs * sizeof(struct attr_record) || l == NULL ||
        l->func != (uintptr_t)c->f ||
        l->generation != __atomic_load_n(&layout_generation, __ATOMIC_ACQUIRE) ||
        (l->count && !k->params))
        return 0;
    memcpy(&ks, shape, sizeof ks);
    return ks.func == (uint64_t)(uintptr_t)c->f && ks.smem == c->smem &&
           ks.form == FORM_PARAMS && ks.nattrs == nattrs && ks.args_len == l->total &&
           args_len == l->total && ks.grid[0] == c->grid[0] && ks.grid[1] == c->grid[1] &&
           ks.grid[2] == c->grid[2] && ks.block[0] == c->block[0] &&
           ks.block[1] == c->block[1] && ks.block[2] == c->block[2];
}

static AG_COLD int fast_call_matches_attrs(const struct ag_fast_kernel *k,
                                           const unsigned char *shape, uint32_t shape_len,
                                           const void *layout, uint32_t args_len)
{
    const struct fast_call *c = k->call;
    return fast_shape_matches(k, shape, shape_len, layout, args_len, c->nattrs) &&
           fast_attrs_match(c, shape + sizeof(struct kernel_shape));
}

/* A call without attributes (nearly all) compares as before they were allowed. */
static int fast_call_matches(const struct ag_fast_kernel *k, const unsigned char *shape,
                             uint32_t shape_len, const void *layout, uint32_t args_len)
{
    if (((const struct fast_call *)k->call)->nattrs)
        return fast_call_matches_attrs(k, shape, shape_len, layout, args_len);
    return fast_shape_matches(k, shape, shape_len, layout, args_len, 0);
}

/* Offers call (f, dimensions and dynamic shared memory) to the replay's fast path. */
static int fast_kernel(int entry, const struct fast_call *call, CUstream stream,
                       void **params, void **extra, uintptr_t ctx, int above_driver)
{
    if (extra || smem_refused(call->f, ctx, call->smem))
        return 0;
    struct ag_fast_kernel k = {
        .entry = entry, .stream = stream_key(stream, entry), .ctx = ctx, .call = call,
        .matches = fast_call_matches, .fill_args = fill_params, .params = params,
        .above_driver = above_driver,
    };
    return ag_engine_fast_kernel(&k);
}

int ag_record_fast_kernel(int entry, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned smem,
                          CUstream stream, void **kernel_params, void **extra)
{
    const struct fast_call call = { .f = f, .grid = { gx, gy, gz }, .block = { bx, by, bz },
                                    .smem = smem };
    return fast_kernel(entry, &call, stream, kernel_params, extra, current_context(), 0);
}

int ag_record_fast_kernel_ex(int entry, const CUlaunchConfig *config, CUfunction f,
                             void **kernel_params, void **extra)
{
    struct fast_call call = { .f = f };
    if (config == NULL || (config->numAttrs && config->attrs == NULL))
        return 0;
    config_dims(config, call.grid, call.block);
    call.smem = config->sharedMemBytes;
    call.nattrs = config->numAttrs;
    call.attrs = config->attrs;
    return fast_kernel(entry, &call, config->hStream, kernel_params, extra,
                       current_context(), 0);
}

int ag_record_fast_runtime(int entry, CUfunction f, const unsigned grid[3],
                           const unsigned block[3], unsigned smem, CUstream stream,
                           void **kernel_params, uintptr_t ctx)
{
    struct fast_call call = { .f = f, .smem = smem };
    memcpy(call.grid, grid, sizeof call.grid);
    memcpy(call.block, block, sizeof call.block);
    return fast_kernel(entry, &call, stream, kernel_params, NULL, ctx, 1);
}

uintptr_t ag_record_current_context(void)
{
    return current_context();
}

unsigned ag_record_kernel_smem(const struct ag_op *op, uintptr_t *f)
{
    const struct kernel_shape *ks = (const void *)op->shape;
    if (op->kind != AG_OP_KERNEL || op->shape_len < sizeof *ks)
        return 0;
    *f = (uintptr_t)ks->func;
    return ks->smem;
}

CUresult ag_kernel_args_open(const struct ag_op *op, struct ag_kernel_args *ka)
{
    const struct ag_layout *l = op->layout;
    ka->params = ka->extra = NULL;
    if (l == NULL) {
        ka->extra_size = op->args_len;
        ka->extra_buf[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
        ka->extra_buf[1] = (void *)op->args;
        ka->extra_buf[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
        ka->extra_buf[3] = &ka->extra_size;
        ka->extra_buf[4] = CU_LAUNCH_PARAM_END;
        ka->extra = ka->extra_buf;
        return CUDA_SUCCESS;
    }
    ka->params = ka->stack;
    if (l->count > 64 && (ka->params = malloc((size_t)l->count * sizeof *ka->params)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (int p = 0; p < l->count; p++)
        ka->params[p] = (void *)(op->args + l->offset[p]);
    return CUDA_SUCCESS;
}

void ag_kernel_args_close(struct ag_kernel_args *ka)
{
    if (ka->params != ka->stack)
        free(ka->params);
}

/* ---- memsets, copies, events ------------------------------------------------------ */

struct memset_shape { uint64_t count; uint32_t elem, pad; };

void ag_record_describe(const struct ag_op *op, char *buf, size_t size)
{
    DRIVER_FN(func_name, cuFuncGetName);
    DRIVER_FN(kernel_name, cuKernelGetName);     /* cudart launches CUkernel handles */
    const char *name = NULL;
    struct kernel_shape ks;
    if (op->kind == AG_OP_KERNEL && op->shape_len >= sizeof ks) {
        memcpy(&ks, op->shape, sizeof ks);
        if ((func_name == NULL || func_name(&name, (CUfunction)(uintptr_t)ks.func) != CUDA_SUCCESS) &&
            (kernel_name == NULL || kernel_name(&name, (CUkernel)(uintptr_t)ks.func) != CUDA_SUCCESS))
            name = NULL;
    }
    snprintf(buf, size, "%s%s%s", ag_entry_name[op->entry], name ? " of kernel " : "",
             name ? name : "");
}

/* A CUfunction knows its module (for a library's kernel: the library's module in the
 * context it was got for); a CUkernel, which cudart launches, knows its library. */
static int function_unloaded(uintptr_t f, uintptr_t ctx, int entry, uintptr_t handle)
{
    DRIVER_FN(func_module, cuFuncGetModule);
    DRIVER_FN(kernel_library, cuKernelGetLibrary);
    DRIVER_FN(library_module, cuLibraryGetModule);
    DRIVER_FN(ctx_current, cuCtxGetCurrent);
    CUmodule fm, lm;
    CUlibrary kl;
    CUcontext cur;
    int library = entry == AG_EP_cuLibraryUnload;
    if (func_module && func_module(&fm, (CUfunction)f) == CUDA_SUCCESS) {
        if (!library)
            return fm == (CUmodule)handle;
        if (library_module == NULL || ctx_current == NULL ||
            ctx_current(&cur) != CUDA_SUCCESS || (uintptr_t)cur != ctx ||
            library_module(&lm, (CUlibrary)handle) != CUDA_SUCCESS)
            return -1;               /* the library's module of another context */
        return fm == lm;
    }
    if (kernel_library && kernel_library(&kl, (CUkernel)f) == CUDA_SUCCESS)
        return library ? kl == (CUlibrary)handle : 0;   /* a module holds no CUkernel */
    return -1;
}

int ag_record_kernel_unloaded(const struct ag_op *op, int entry, uintptr_t handle)
{
    struct kernel_shape ks;
    if (op->kind != AG_OP_KERNEL || op->shape_len < sizeof ks ||
        (entry != AG_EP_cuLibraryUnload && entry != AG_EP_cuModuleUnload))
        return -1;
    memcpy(&ks, op->shape, sizeof ks);
    return function_unloaded((uintptr_t)ks.func, op->ctx, entry, handle);
}

int ag_record_memset(struct ag_op *op, int entry, CUdeviceptr dst, unsigned value,
                     size_t count, CUstream stream, unsigned elem_size)
{
    struct memset_shape ms = { .count = count, .elem = elem_size };
    struct ag_memset_args ma = { .dst = dst, .value = value };
    unsigned char *buf = scratch_get(sizeof ms + sizeof ma);
    op_init(op, AG_OP_MEMSET, entry, stream);
    if (buf == NULL)
        return reject(op, "out of memory");
    memcpy(buf, &ms, sizeof ms);
    memcpy(buf + sizeof ms, &ma, sizeof ma);
    op_finish(op, buf, sizeof ms, sizeof ma);
    return 1;
}

/* Memory type of an address: CU_MEMORYTYPE_DEVICE / _HOST (pinned), 0 if pageable. */
static unsigned memory_type(uintptr_t ptr)
{
    DRIVER_FN(get_attribute, cuPointerGetAttribute);
    unsigned type = 0;
    if (get_attribute == NULL ||
        get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)ptr) != CUDA_SUCCESS)
        return 0;
    return type;
}

struct copy_shape { uint64_t bytes; uint32_t dst_type, src_type; };

int ag_record_copy(struct ag_op *op, int entry, uintptr_t dst, uintptr_t src, size_t bytes,
                   CUstream stream)
{
    struct copy_shape cs = { .bytes = bytes };
    struct ag_copy_args ca = { .dst = dst, .src = src };
    unsigned char *buf;
    op_init(op, AG_OP_MEMCPY, entry, stream);
    cs.dst_type = memory_type(dst);
    cs.src_type = memory_type(src);
    if (cs.dst_type == 0 || cs.src_type == 0)
        return reject(op, "asynchronous copy to or from pageable host memory");
    buf = scratch_get(sizeof cs + sizeof ca);
    if (buf == NULL)
        return reject(op, "out of memory");
    memcpy(buf, &cs, sizeof cs);
    memcpy(buf + sizeof cs, &ca, sizeof ca);
    op_finish(op, buf, sizeof cs, sizeof ca);
    return 1;
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
    unsigned char *buf = scratch_get(sizeof es + sizeof handle);
    op_init(op, kind, entry, stream);
    op->event = (uintptr_t)event;
    if (buf == NULL)
        return reject(op, "out of memory");
    if (flags != 0)
        return reject(op, "event record or wait with flags");
    memcpy(buf, &es, sizeof es);
    memcpy(buf + sizeof es, &handle, sizeof handle);
    op_finish(op, buf, sizeof es, sizeof handle);
    return 1;
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
        .entry = entry, .kind = kind, .stream = stream_key(stream, entry),
        .ctx = current_context(), .event = (uintptr_t)event,
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

/* ---- issuing an op again ---------------------------------------------------------- */

static CUresult issue_kernel(const struct ag_op *op, CUstream stream)
{
    const struct kernel_shape *ks = (const void *)op->shape;
    struct ag_kernel_args ka;
    CUresult rc = ag_kernel_args_open(op, &ka);

    if (rc != CUDA_SUCCESS)
        return rc;
    if (ks->nattrs == 0 && (op->entry == AG_EP_cuLaunchKernel || op->entry == AG_EP_cuLaunchKernel_ptsz)) {
        __typeof__(&cuLaunchKernel) launch = ag_real_fn(op->entry);
        rc = launch((CUfunction)(uintptr_t)ks->func, ks->grid[0], ks->grid[1], ks->grid[2],
                    ks->block[0], ks->block[1], ks->block[2], ks->smem, stream,
                    ka.params, ka.extra);
    } else {
        __typeof__(&cuLaunchKernelEx) launch = ag_real_fn(op->entry);
        CUlaunchAttribute attrs[16];
        const struct attr_record *r = (const void *)(op->shape + sizeof *ks);
        CUlaunchConfig cfg = {
            .gridDimX = ks->grid[0], .gridDimY = ks->grid[1], .gridDimZ = ks->grid[2],
            .blockDimX = ks->block[0], .blockDimY = ks->block[1], .blockDimZ = ks->block[2],
            .sharedMemBytes = ks->smem, .hStream = stream, .attrs = attrs,
            .numAttrs = ks->nattrs < 16 ? ks->nattrs : 16,
        };
        for (unsigned a = 0; a < cfg.numAttrs; a++) {
            memset(&attrs[a], 0, sizeof attrs[a]);
            attrs[a].id = (CUlaunchAttributeID)r[a].id;
            memcpy(&attrs[a].value, r[a].value, sizeof attrs[a].value);
        }
        rc = launch(&cfg, (CUfunction)(uintptr_t)ks->func, ka.params, ka.extra);
    }
    ag_kernel_args_close(&ka);
    return rc;
}

static CUresult issue_memset(const struct ag_op *op, CUstream stream)
{
    const struct memset_shape *ms = (const void *)op->shape;
    struct ag_memset_args ma;             /* copied: a chunk packs args unaligned */
    void *fn = ag_real_fn(op->entry);
    memcpy(&ma, op->args, sizeof ma);
    switch (ms->elem) {
    case 1: return ((__typeof__(&cuMemsetD8Async))fn)(ma.dst, (unsigned char)ma.value, ms->count, stream);
    case 2: return ((__typeof__(&cuMemsetD16Async))fn)(ma.dst, (unsigned short)ma.value, ms->count, stream);
    default: return ((__typeof__(&cuMemsetD32Async))fn)(ma.dst, ma.value, ms->count, stream);
    }
}

static CUresult issue_copy(const struct ag_op *op, CUstream stream)
{
    const struct copy_shape *cs = (const void *)op->shape;
    struct ag_copy_args ca;               /* copied: a chunk packs args unaligned */
    void *fn = ag_real_fn(op->entry);
    memcpy(&ca, op->args, sizeof ca);
    switch (op->entry) {
    case AG_EP_cuMemcpyHtoDAsync_v2:
    case AG_EP_cuMemcpyHtoDAsync_v2_ptsz:
        return ((__typeof__(&cuMemcpyHtoDAsync))fn)(ca.dst, (const void *)(uintptr_t)ca.src,
                                                   cs->bytes, stream);
    case AG_EP_cuMemcpyDtoHAsync_v2:
    case AG_EP_cuMemcpyDtoHAsync_v2_ptsz:
        return ((__typeof__(&cuMemcpyDtoHAsync))fn)((void *)(uintptr_t)ca.dst, ca.src,
                                                   cs->bytes, stream);
    default:   /* cuMemcpyAsync and cuMemcpyDtoDAsync share this prototype */
        return ((__typeof__(&cuMemcpyAsync))fn)(ca.dst, ca.src, cs->bytes, stream);
    }
}

CUresult ag_record_issue(const struct ag_op *op, CUstream stream)
{
    void *fn = ag_real_fn(op->entry);
    if (fn == NULL)
        return CUDA_ERROR_NOT_FOUND;
    switch (op->kind) {
    case AG_OP_KERNEL:
        return issue_kernel(op, stream);
    case AG_OP_MEMSET:
        return issue_memset(op, stream);
    case AG_OP_MEMCPY:
        return issue_copy(op, stream);
    case AG_OP_EVENT_RECORD:
        if (op->entry == AG_EP_cuEventRecord || op->entry == AG_EP_cuEventRecord_ptsz)
            return ((__typeof__(&cuEventRecord))fn)((CUevent)op->event, stream);
        return ((__typeof__(&cuEventRecordWithFlags))fn)((CUevent)op->event, stream, 0);
    case AG_OP_EVENT_WAIT:
        return ((__typeof__(&cuStreamWaitEvent))fn)(stream, (CUevent)op->event, 0);
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}
