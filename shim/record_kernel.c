/* record_kernel.c -- record: kernel launches, from a driver call to a struct ag_op.
 *
 * The shape is the function, grid, block, shared memory, the argument form and the
 * launch attributes; the args are the parameter bytes, laid out as the driver's
 * cuFuncGetParamInfo reports (kernelParams form) or the caller's packed buffer
 * (`extra` form).  Parameter layouts are kept per function (and per thread, the
 * latest few), each with whether its function is a collective (record_collective.c).
 * Here also the light path of a launch (its hash only) and the replay's fast path,
 * which compares a call with the shape a recorder wrote without building the op.
 */
#include "record_internal.h"

#include "driver.h"
#include "engine.h"
#include "entry_points.h"
#include "log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* ---- kernel parameter layouts ----------------------------------------------------- */

struct ag_layout {
    uintptr_t func;
    unsigned generation;
    int count;
    uint32_t total;
    int padded;                      /* the parameters leave bytes of [0, total) uncovered */
    int collective;                  /* the function is a collective (record_collective.c) */
    uint64_t sig;                    /* of the layout (a collective's: of its function) */
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

/* The signature of l: launches of two functions with the same one may share a
 * template's kernel node (record_ops.h).  A collective's is its own. */
static uint64_t layout_signature(const struct ag_layout *l)
{
    uint64_t h = ag_hash_mix(0x6c61796f7574ull, (uint64_t)l->count << 32 | l->total);
    h = ag_hash_mix(h, (uint64_t)l->padded);
    h = ag_hash_bytes(h, l->offset, (size_t)l->count * sizeof *l->offset);
    h = ag_hash_bytes(h, l->size, (size_t)l->count * sizeof *l->size);
    return l->collective ? ag_hash_mix(h, l->func) : h;
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
            l->collective = ag_collective_function(f);   /* its name, asked once */
            l->sig = layout_signature(l);
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

/* Bytes of an attribute's value that mean something; 0: not recorded.  Each recorded
 * one is valid in a captured launch: the backend builds graphs by capturing the
 * launch with its attributes, and the capture turns programmatic stream serialization
 * (XLA launches every kernel with it) into the graph's programmatic edges.  Those
 * naming an event (programmatic or launch completion) are not recorded. */
static size_t attr_size(CUlaunchAttributeID id)
{
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        return sizeof(int);
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
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
static int attr_record_of(const CUlaunchAttribute *a, struct ag_attr_record *r)
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
static struct ag_kernel_shape kernel_shape_of(CUfunction f, unsigned nattrs)
{
    return (struct ag_kernel_shape){ .func = (uint64_t)(uintptr_t)f, .form = AG_FORM_PARAMS,
                                     .nattrs = nattrs };
}

static struct ag_kernel_dims kernel_dims_of(CUfunction f, const unsigned grid[3],
                                            const unsigned block[3], unsigned smem)
{
    struct ag_kernel_dims d = { .smem = smem, .func = (uint64_t)(uintptr_t)f };
    memcpy(d.grid, grid, sizeof d.grid);
    memcpy(d.block, block, sizeof d.block);
    return d;
}

/* AUTOGRAPH_LOG=debug names each launch attribute that kept a launch eager, once. */
static void note_unrecorded_attr(CUlaunchAttributeID id)
{
    static unsigned long told;          /* bit per attribute id below 64 */
    unsigned long bit = (unsigned)id < 64 ? 1ul << (unsigned)id : 0;
    if (bit && (__atomic_fetch_or(&told, bit, __ATOMIC_RELAXED) & bit))
        return;
    ag_log(AG_LOG_DEBUG, "a kernel launch with launch attribute %d, which is not "
           "recorded: such launches go to the driver eagerly", (int)id);
}

/* Writes the shape (args_len still 0) to the start of the scratch buffer. */
static unsigned char *kernel_shape(struct ag_op *op, const struct ag_kernel_shape *ks,
                                   const CUlaunchAttribute *attrs, size_t shape_len)
{
    unsigned char *buf = ag_rec_scratch(shape_len);
    if (buf == NULL) {
        ag_rec_reject(op, "out of memory");
        return NULL;
    }
    memset(buf, 0, shape_len);
    memcpy(buf, ks, sizeof *ks);
    for (unsigned a = 0; a < ks->nattrs; a++) {
        struct ag_attr_record *r = (struct ag_attr_record *)(buf + sizeof *ks) + a;
        if (!attr_record_of(&attrs[a], r)) {
            note_unrecorded_attr(attrs[a].id);
            ag_rec_reject(op, "kernel launch with a launch attribute that is not recorded");
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

/* Adds the args after the shape in the scratch buffer (a full recording): the launch
 * size, then the parameter bytes. */
static int kernel_args(struct ag_op *op, CUfunction f, size_t shape_len,
                       const struct ag_kernel_dims *dims, void **params, const void *packed,
                       long packed_len)
{
    const struct ag_layout *l = NULL;
    long args_len = packed_len;
    unsigned char *buf;
    if (packed == NULL) {
        l = layout_of(f);
        if (l == NULL)
            return ag_rec_reject(op, "kernel whose parameter layout the driver does not report");
        if (l->count && !params)
            return ag_rec_reject(op, "kernel launch without parameters");
        args_len = l->total;
    }
    buf = ag_rec_scratch(shape_len + AG_KERNEL_DIMS + (size_t)args_len);
    if (buf == NULL)
        return ag_rec_reject(op, "out of memory");
    ((struct ag_kernel_shape *)(void *)buf)->args_len = (uint32_t)args_len;
    ((struct ag_kernel_shape *)(void *)buf)->layout_sig = l ? l->sig : 0;
    memcpy(buf + shape_len, dims, AG_KERNEL_DIMS);
    if (l) {
        fill_params(l, params, buf + shape_len + AG_KERNEL_DIMS);
    } else {
        memcpy(buf + shape_len + AG_KERNEL_DIMS, packed, (size_t)args_len);
    }
    op->layout = l;
    op->shape = buf;
    op->shape_len = (uint32_t)shape_len;
    op->args = buf + shape_len;
    op->args_len = AG_KERNEL_DIMS + (uint32_t)args_len;
    return 1;
}

/* Whether a launch asking for smem bytes must not be recorded: only once a limit has
 * changed (ag_smem_limit_changed), checked against f's limit in ctx (0: the current
 * context, asked only then). */
static int smem_refused(CUfunction f, uintptr_t ctx, unsigned smem)
{
    return smem && (__atomic_load_n(&ag_smem_limit_changed, __ATOMIC_RELAXED) ||
                    smem > AG_SMEM_DEFAULT_LIMIT) &&
           ag_smem_over_limit(f, ctx ? ctx : ag_rec_context(), smem);
}

/* Whether a launch of this size breaks the device's limits: then it is not recorded
 * (it goes to the driver and fails at its call, as without the shim).  A launch size
 * is patched into a held launch, not compared with the recorded one, so such a launch
 * must never be held.  (A block over a heavy function's own thread limit, under the
 * device's, is not caught here: mid-replay its error comes late.) */
static AG_INLINE int dims_refused(const unsigned grid[3], const unsigned block[3])
{
    /* each "d - 1 > max - 1" is d == 0 or d > max (unsigned): one test for both */
    unsigned long threads = (unsigned long)block[0] * block[1] * block[2];
    return (grid[0] - 1u > 0x7ffffffeu) | (grid[1] - 1u > 65534u) | (grid[2] - 1u > 65534u) |
           (block[0] - 1u > 1023u) | (block[1] - 1u > 1023u) | (block[2] - 1u > 63u) |
           (threads > 1024u);
}

static int record_kernel_common(struct ag_op *op, CUfunction f, const unsigned grid[3],
                                const unsigned block[3], unsigned smem,
                                const CUlaunchAttribute *attrs, unsigned nattrs,
                                void **params, void **extra)
{
    struct ag_kernel_shape ks = kernel_shape_of(f, nattrs);
    struct ag_kernel_dims dims = kernel_dims_of(f, grid, block, smem);
    void *packed = NULL;
    long packed_len = 0;
    size_t shape_len = sizeof ks + nattrs * sizeof(struct ag_attr_record);
    unsigned char *buf;

    if (smem_refused(f, op->ctx, smem))
        return ag_rec_reject(op, "kernel launch asking for more dynamic shared memory than its "
                          "function's limit");
    if (dims_refused(grid, block))
        return ag_rec_reject(op, "kernel launch of a size the driver refuses");

    if (extra && !params) {
        packed_len = extra_buffer(extra, &packed);
        if (packed_len < 0)
            return ag_rec_reject(op, "kernel launch with an `extra` array other than a packed buffer");
        ks.form = AG_FORM_EXTRA;
    }
    buf = kernel_shape(op, &ks, attrs, shape_len);
    if (buf == NULL)
        return 0;
    op->hash = ag_rec_op_hash(op, buf, (uint32_t)shape_len);     /* args_len is 0 here */
    op->skim = op->hash;
    if (op->light) {
        op->shape = buf;
        op->shape_len = (uint32_t)shape_len;
        return 1;
    }
    return kernel_args(op, f, shape_len, &dims, params, packed, packed_len);
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
    struct ag_kernel_shape ks;
    if (!ag_light_open() || (extra && !kernel_params) ||
        ag_rec_context() != ag_thread_hot.eng_ctx)   /* another context: its engine's */
        return 0;
    if (ag_skim_blind())
        return ag_engine_skim(skim_word(f, grid, block, smem, stream), 1);
    ks = kernel_shape_of(f, 0);
    /* the hash that ag_record_kernel gives the same call (args_len 0 when hashed) */
    return ag_engine_light_queue(ag_rec_shape_hash(AG_OP_KERNEL, entry, &ks, sizeof ks),
                                 skim_word(f, grid, block, smem, stream),
                                 ag_rec_stream_key(stream, entry), entry, AG_OP_KERNEL);
}

/* A recorded launch's skim word: the one skimming folds for the same call (the light
 * fast path's word where that path takes the call, else the hash). */
static int kernel_skimmed_fast(void **params, void **extra, unsigned nattrs)
{
    return !(extra && !params) && nattrs == 0;
}

int ag_record_kernel(struct ag_op *op, int entry, CUfunction f, unsigned gx, unsigned gy,
                     unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                     CUstream stream, void **kernel_params, void **extra)
{
    const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
    ag_rec_op_init(op, AG_OP_KERNEL, entry, stream);
    if (!record_kernel_common(op, f, grid, block, smem, NULL, 0, kernel_params, extra))
        return 0;
    if (kernel_skimmed_fast(kernel_params, extra, 0))
        op->skim = skim_word(f, grid, block, smem, stream);
    return 1;
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
        return ag_rec_reject(op, "cuLaunchKernelEx without a configuration");
    }
    ag_rec_op_init(op, AG_OP_KERNEL, entry, config->hStream);
    config_dims(config, grid, block);
    if (config->numAttrs && config->attrs == NULL)
        return ag_rec_reject(op, "cuLaunchKernelEx with attributes missing");
    if (!record_kernel_common(op, f, grid, block, config->sharedMemBytes, config->attrs,
                              config->numAttrs, kernel_params, extra))
        return 0;
    if (kernel_skimmed_fast(kernel_params, extra, config->numAttrs))
        op->skim = skim_word(f, grid, block, config->sharedMemBytes, config->hStream);
    return 1;
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
        struct ag_attr_record r;
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
    struct ag_kernel_shape ks;
    if (shape_len != sizeof ks + nattrs * sizeof(struct ag_attr_record) || l == NULL ||
        l->func != (uintptr_t)c->f ||
        l->generation != __atomic_load_n(&layout_generation, __ATOMIC_ACQUIRE) ||
        (l->count && !k->params))
        return 0;
    memcpy(&ks, shape, sizeof ks);
    return ks.func == (uint64_t)(uintptr_t)c->f && ks.form == AG_FORM_PARAMS &&
           ks.nattrs == nattrs && ks.args_len == l->total &&
           args_len == AG_KERNEL_DIMS + l->total;
}

/* The held call's args, as kernel_args writes them: its launch size, its parameters. */
static void fill_call(const struct ag_fast_kernel *k, const void *layout, unsigned char *dst)
{
    const struct fast_call *c = k->call;
    struct ag_kernel_dims d = kernel_dims_of(c->f, c->grid, c->block, c->smem);
    memcpy(dst, &d, sizeof d);
    fill_params(layout, k->params, dst + AG_KERNEL_DIMS);
}

static AG_COLD int fast_call_matches_attrs(const struct ag_fast_kernel *k,
                                           const unsigned char *shape, uint32_t shape_len,
                                           const void *layout, uint32_t args_len)
{
    const struct fast_call *c = k->call;
    return fast_shape_matches(k, shape, shape_len, layout, args_len, c->nattrs) &&
           fast_attrs_match(c, shape + sizeof(struct ag_kernel_shape));
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
    if (extra || smem_refused(call->f, ctx, call->smem) ||
        dims_refused(call->grid, call->block))
        return 0;
    struct ag_fast_kernel k = {
        .entry = entry, .stream = ag_rec_stream_key(stream, entry), .ctx = ctx, .call = call,
        .matches = fast_call_matches, .fill_args = fill_call, .params = params,
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
    return fast_kernel(entry, &call, stream, kernel_params, extra, ag_rec_context(), 0);
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
                       ag_rec_context(), 0);
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


unsigned ag_record_kernel_smem(const struct ag_op *op, uintptr_t *f)
{
    const struct ag_kernel_shape *ks = (const void *)op->shape;
    if (op->kind != AG_OP_KERNEL || op->shape_len < sizeof *ks || op->args_len < AG_KERNEL_DIMS)
        return 0;
    const struct ag_kernel_dims d = ag_kernel_dims_of(op->args);
    *f = (uintptr_t)d.func;          /* the args' function: a patch may change it */
    return d.smem;
}

CUresult ag_kernel_args_open(const struct ag_op *op, struct ag_kernel_args *ka)
{
    const struct ag_layout *l = op->layout;
    ka->params = ka->extra = NULL;
    if (l == NULL) {
        ka->extra_size = op->args_len - AG_KERNEL_DIMS;
        ka->extra_buf[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
        ka->extra_buf[1] = (void *)(op->args + AG_KERNEL_DIMS);
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
        ka->params[p] = (void *)(op->args + AG_KERNEL_DIMS + l->offset[p]);
    return CUDA_SUCCESS;
}

void ag_kernel_args_close(struct ag_kernel_args *ka)
{
    if (ka->params != ka->stack)
        free(ka->params);
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

/* A packed launch's op has no layout: its function's is made here, at a template's
 * build (its name asked then, once); where the driver reports no parameter layout,
 * the name is asked at each build. */
int ag_record_kernel_collective(const struct ag_op *op)
{
    const struct ag_layout *l = op->layout;
    struct ag_kernel_shape ks;
    if (op->kind != AG_OP_KERNEL || op->shape_len < sizeof ks)
        return 0;
    memcpy(&ks, op->shape, sizeof ks);
    if (l == NULL)
        l = layout_of((CUfunction)(uintptr_t)ks.func);
    return l ? l->collective : ag_collective_function((CUfunction)(uintptr_t)ks.func);
}

int ag_record_kernel_unloaded(const struct ag_op *op, int entry, uintptr_t handle)
{
    struct ag_kernel_shape ks;
    if (op->kind != AG_OP_KERNEL || op->shape_len < sizeof ks ||
        (entry != AG_EP_cuLibraryUnload && entry != AG_EP_cuModuleUnload))
        return -1;
    memcpy(&ks, op->shape, sizeof ks);
    if (op->args && op->args_len >= AG_KERNEL_DIMS)   /* as patched into a graph */
        ks.func = ag_kernel_dims_of(op->args).func;
    return function_unloaded((uintptr_t)ks.func, op->ctx, entry, handle);
}
