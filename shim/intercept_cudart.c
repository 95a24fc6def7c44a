/* intercept_cudart.c -- intercept: the CUDA runtime's kernel launch calls.
 *
 * A program linked with the shared libcudart launches through cudaLaunchKernel (or,
 * built by nvcc >= 13, __cudaLaunchKernel with a kernel handle; both with _ptsz
 * twins for the per-thread default stream).  libcudart then calls the driver, where
 * intercept_defer.c holds the launch; but libcudart's own work costs a held launch
 * most of its host time.  These exported wrappers override the runtime's (the
 * preloaded shim comes first in the global scope; a static libcudart never sees them)
 * and skip libcudart for a launch that a replay waits for:
 *
 *   - Every call goes to the real libcudart, with the probe on (intercept_cudart.h):
 *     the one driver launch it makes tells which entry point, function and stream
 *     this (runtime call, handle, stream, context) reaches.  That is learnt, per
 *     thread, in a small table.
 *   - While a replay waits (ag_replay_open) a learnt call is offered to the replay's
 *     fast path as that driver call (ag_intercept_hold_runtime): held, it returns
 *     cudaSuccess without libcudart.  Anything else goes to libcudart as before, and
 *     from there to the driver wrappers, which decide as always.
 *
 * Only launches whose driver call already succeeded are learnt, so the first launch
 * of anything goes through libcudart.  A module unloaded or a context gone forgets
 * everything (ag_runtime_forget).  AUTOGRAPH_HOLD_RUNTIME=0 turns the table off.
 */
#include "intercept_cudart.h"

#include "config.h"
#include "driver.h"
#include "engine.h"
#include "export.h"
#include "log.h"
#include "record_ops.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* dim3 as the runtime passes it (three unsigned: the same registers as cuda's). */
struct ag_dim3 {
    unsigned x, y, z;
};
typedef int (*runtime_launch_fn)(const void *handle, struct ag_dim3 grid,
                                 struct ag_dim3 block, void **args, size_t smem,
                                 const void *stream);

enum { RT_LAUNCH, RT_LAUNCH_PTSZ, RT_KERNEL, RT_KERNEL_PTSZ, RT_COUNT };
static const char *const runtime_name[RT_COUNT] = {
    "cudaLaunchKernel", "cudaLaunchKernel_ptsz", "__cudaLaunchKernel",
    "__cudaLaunchKernel_ptsz",
};
static runtime_launch_fn runtime_real[RT_COUNT];
static int hold_runtime;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

AG_TLS struct ag_runtime_probe ag_runtime_probe;

/* ---- the real libcudart ------------------------------------------------------------ */

/* dl_iterate_phdr callback: the first loaded object named libcudart.so*. */
static int find_libcudart(struct dl_phdr_info *info, size_t size, void *out)
{
    const char *base = strrchr(info->dlpi_name, '/');
    (void)size;
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, "libcudart.so", 12) != 0)
        return 0;
    *(void **)out = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    return *(void **)out != NULL;
}

/* The next definition after the shim; a libcudart loaded out of the global scope
 * (dlopen'ed RTLD_LOCAL) is found by its name. */
static void resolve_all(void)
{
    void *cudart = NULL;
    for (int i = 0; i < RT_COUNT; i++)
        runtime_real[i] = (runtime_launch_fn)ag_call_real_dlsym(RTLD_NEXT, runtime_name[i]);
    if (runtime_real[RT_LAUNCH] == NULL && dl_iterate_phdr(find_libcudart, &cudart))
        for (int i = 0; i < RT_COUNT; i++)
            runtime_real[i] = (runtime_launch_fn)ag_call_real_dlsym(cudart, runtime_name[i]);
    hold_runtime = ag_config()->hold_runtime;
}

/* ---- what the runtime's calls reach: learnt per thread ------------------------------ */

#define LEARNT_SLOTS 512              /* a power of two; two slots tried per key */

struct ag_learnt {
    const void *handle, *stream;      /* the runtime call's */
    uintptr_t ctx;
    unsigned generation;              /* 0: empty; stale when not forget_generation */
    int which, entry;
    CUfunction f;
    CUstream driver_stream;
};

static AG_HOT _Atomic unsigned forget_generation = 1;
static pthread_key_t table_key;
static pthread_once_t table_key_once = PTHREAD_ONCE_INIT;

void ag_runtime_forget(void)
{
    unsigned g = atomic_fetch_add_explicit(&forget_generation, 1, memory_order_acq_rel) + 1;
    if (g == 0)                        /* wrapped: 0 means empty */
        atomic_fetch_add_explicit(&forget_generation, 1, memory_order_acq_rel);
}

static void make_table_key(void)
{
    (void)pthread_key_create(&table_key, free);
}

static unsigned slot_of(int which, const void *handle, const void *stream, uintptr_t ctx)
{
    uint64_t h = (uint64_t)(uintptr_t)handle * 0x9E3779B97F4A7C15ull +
                 (uint64_t)(uintptr_t)stream * 0xC2B2AE3D27D4EB4Full +
                 (uint64_t)ctx * 0x165667B19E3779F9ull + (uint64_t)which;
    return (unsigned)(h >> 40) & (LEARNT_SLOTS - 1);
}

static int learnt_matches(const struct ag_learnt *l, unsigned gen, int which,
                          const void *handle, const void *stream, uintptr_t ctx)
{
    return l->generation == gen && l->handle == handle && l->stream == stream &&
           l->ctx == ctx && l->which == which;
}

static const struct ag_learnt *find_learnt(int which, const void *handle,
                                           const void *stream, uintptr_t ctx)
{
    unsigned gen = atomic_load_explicit(&forget_generation, memory_order_acquire);
    unsigned slot = slot_of(which, handle, stream, ctx);
    const struct ag_learnt *table = ag_thread_hot.learnt;
    if (table == NULL)
        return NULL;
    for (unsigned i = 0; i < 2; i++) {
        const struct ag_learnt *l = &table[(slot + i) & (LEARNT_SLOTS - 1)];
        if (learnt_matches(l, gen, which, handle, stream, ctx))
            return l;
    }
    return NULL;
}

static void learn(int which, const void *handle, const void *stream,
                  const struct ag_runtime_probe *p)
{
    unsigned gen = atomic_load_explicit(&forget_generation, memory_order_acquire);
    uintptr_t ctx = ag_record_current_context();
    unsigned slot = slot_of(which, handle, stream, ctx);
    struct ag_learnt *table = ag_thread_hot.learnt, *l, *second;

    if (ctx == 0)
        return;
    if (table == NULL) {
        pthread_once(&table_key_once, make_table_key);
        table = ag_thread_hot.learnt = calloc(LEARNT_SLOTS, sizeof *table);
        if (table == NULL)
            return;
        (void)pthread_setspecific(table_key, table);   /* freed at thread exit */
    }
    l = &table[slot];
    second = &table[(slot + 1) & (LEARNT_SLOTS - 1)];
    if (l->generation == gen && second->generation != gen)
        l = second;                    /* taken: the second slot, if that is free */
    *l = (struct ag_learnt){
        .handle = handle, .stream = stream, .ctx = ctx, .generation = gen,
        .which = which, .entry = p->entry, .f = p->f, .driver_stream = p->stream,
    };
}

/* ---- the wrappers ------------------------------------------------------------------ */

static int try_hold(int which, const void *handle, struct ag_dim3 grid, struct ag_dim3 block,
                    void **args, size_t smem, const void *stream)
{
    uintptr_t ctx = ag_record_current_context();
    const struct ag_learnt *l;
    if (!hold_runtime || ctx == 0 || smem > UINT_MAX)
        return 0;
    l = find_learnt(which, handle, stream, ctx);
    if (l == NULL)
        return 0;
    const unsigned g[3] = { grid.x, grid.y, grid.z }, b[3] = { block.x, block.y, block.z };
    return ag_intercept_hold_runtime(l->entry, l->f, g, b, (unsigned)smem, l->driver_stream,
                                     args, ctx);
}

/* The real call, learning where it went when it reached the driver once, cleanly. */
static int call_and_learn(int which, const void *handle, struct ag_dim3 grid,
                          struct ag_dim3 block, void **args, size_t smem, const void *stream)
{
    struct ag_runtime_probe *p = &ag_runtime_probe;
    int result, nested = p->on;

    if (nested)
        return runtime_real[which](handle, grid, block, args, smem, stream);
    p->on = 1;
    p->seen = 0;
    result = runtime_real[which](handle, grid, block, args, smem, stream);
    p->on = 0;
    if (result == 0 && p->seen == 1 && p->usable && hold_runtime)
        learn(which, handle, stream, p);
    return result;
}

static int runtime_launch(int which, const void *handle, struct ag_dim3 grid,
                          struct ag_dim3 block, void **args, size_t smem, const void *stream)
{
    pthread_once(&resolve_once, resolve_all);
    if (runtime_real[which] == NULL) {
        ag_log(AG_LOG_ERROR, "%s: no libcudart defines it (the call fails)",
               runtime_name[which]);
        return 500;                    /* cudaErrorSymbolNotFound */
    }
    if (ag_replay_open() && try_hold(which, handle, grid, block, args, smem, stream))
        return 0;
    return call_and_learn(which, handle, grid, block, args, smem, stream);
}

#define RUNTIME_LAUNCH(name, which)                                                   \
    AG_EXPORT int name(const void *handle, struct ag_dim3 grid, struct ag_dim3 block, \
                       void **args, size_t smem, const void *stream)                  \
    {                                                                                 \
        return runtime_launch(which, handle, grid, block, args, smem, stream);        \
    }

RUNTIME_LAUNCH(cudaLaunchKernel, RT_LAUNCH)
RUNTIME_LAUNCH(cudaLaunchKernel_ptsz, RT_LAUNCH_PTSZ)
RUNTIME_LAUNCH(__cudaLaunchKernel, RT_KERNEL)
RUNTIME_LAUNCH(__cudaLaunchKernel_ptsz, RT_KERNEL_PTSZ)
