/* intercept_attributes.c -- intercept: function attribute sets that change nothing.
 *
 * cuFuncSetAttribute and cuKernelSetAttribute are flush points that also drop every
 * graph (flush_points.c: a function reconfigured).  Libraries set attributes again
 * and again to the value they already have: cuDNN sets kernel attributes before
 * launches, several times per training step, which dropped every graph of a PyTorch
 * CNN each step.  These strong wrappers (overriding the weak forwarding ones of
 * intercept_wrappers.c) let a set through without ending the window or dropping
 * anything when it changes nothing: the same value as the last successful set of
 * that (function or kernel, device, attribute), remembered here, or as the driver
 * reports for it now.  A change of the dynamic shared memory limit does not even end
 * the window, one of another resource limit ends it but keeps the graphs (changing(),
 * below); any other change is a flush point as before.  With the
 * engine off, nothing is remembered or read.  AUTOGRAPH_LOG=debug logs each set
 * that flushes.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "config.h"
#include "counters.h"
#include "driver.h"
#include "engine.h"
#include "entry_points.h"
#include "entry_signatures.h"
#include "intercept_wrapper.h"
#include "log.h"
#include "record_ops.h"

#include <pthread.h>

/* ---- the last value set, per (handle, device, attribute) ---------------------- */

#define SETS_SIZE 512                /* power of two; when full, nothing more is kept */

static struct last_set {
    uintptr_t handle;                /* 0: free */
    int dev, attrib, value;
} sets[SETS_SIZE];
static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;

static struct last_set *find_set(uintptr_t handle, int dev, int attrib, int add)
{
    size_t i = (size_t)((handle >> 4) ^ (uintptr_t)(attrib * 131) ^ (uintptr_t)dev);
    for (size_t probe = 0; probe < SETS_SIZE; probe++) {
        struct last_set *e = &sets[(i + probe) & (SETS_SIZE - 1)];
        if (e->handle == handle && e->dev == dev && e->attrib == attrib)
            return e;
        if (e->handle == 0) {
            if (!add)
                return NULL;
            e->handle = handle, e->dev = dev, e->attrib = attrib;
            return e;
        }
    }
    return NULL;
}

static int same_as_last_set(uintptr_t handle, int dev, int attrib, int value)
{
    struct last_set *e;
    int same;
    pthread_mutex_lock(&sets_lock);
    e = find_set(handle, dev, attrib, 0);
    same = e && e->value == value;
    pthread_mutex_unlock(&sets_lock);
    return same;
}

/* A kernel's limit set for the current device reaches the kernel and its function
 * here; set through a function, or for another device, it may reach handles the
 * shim cannot name. */
static void smem_limit_was_set(uintptr_t handle, int dev)
{
    CUdevice cur;
    if (dev >= 0 && ag_current_device(&cur) && (int)cur == dev)
        ag_smem_limit_set_on(handle, 1);
    else
        ag_smem_limits_forget();
}

static void remember_set(CUresult result, uintptr_t handle, int dev, int attrib, int value)
{
    struct last_set *e;
    if (result == CUDA_SUCCESS && attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        smem_limit_was_set(handle, dev); /* after the call: none asked before it stays */
    if (result != CUDA_SUCCESS || !ag_engine_running())
        return;
    pthread_mutex_lock(&sets_lock);
    if ((e = find_set(handle, dev, attrib, 1)) != NULL)
        e->value = value;
    pthread_mutex_unlock(&sets_lock);
}

/* ---- what the driver says now ---------------------------------------------------- */

static int func_attribute_is(CUfunction f, CUfunction_attribute attrib, int value)
{
    DRIVER_FN(get, cuFuncGetAttribute);
    int now = -1;
    CUresult rc = CUDA_ERROR_NOT_FOUND;
    if (same_as_last_set((uintptr_t)f, -1, attrib, value))
        return 1;
    if (get && (rc = get(&now, attrib, f)) == CUDA_SUCCESS && now == value)
        return 1;
    ag_log(AG_LOG_DEBUG, "cuFuncSetAttribute(%p, %d, %d): a change (the driver says %d, "
           "error %d): flush", (void *)f, (int)attrib, value, now, (int)rc);
    return 0;
}

static int kernel_attribute_is(CUkernel k, CUdevice dev, CUfunction_attribute attrib,
                               int value)
{
    DRIVER_FN(get, cuKernelGetAttribute);
    int now = -1;
    CUresult rc = CUDA_ERROR_NOT_FOUND;
    if (same_as_last_set((uintptr_t)k, (int)dev, attrib, value))
        return 1;
    if (get && (rc = get(&now, attrib, k, dev)) == CUDA_SUCCESS && now == value)
        return 1;
    ag_log(AG_LOG_DEBUG, "cuKernelSetAttribute(%d, %d, %p, %d): a change (the driver says "
           "%d, error %d): flush", (int)attrib, value, (void *)k, (int)dev, now, (int)rc);
    return 0;
}

/* A change.  A kernel's dynamic shared memory limit does not end the window: cuDNN
 * moves some kernels' limits up and down around their launches, several times every
 * PyTorch training step, which cut each step into short windows.  A launch over a
 * lowered limit is never held (record_smem.c, ag_smem_limit_changed): it fails at its
 * call, as without the shim.  A held op made under the higher limit runs in its graph
 * as it is (a launched graph is not checked against limits lowered since it was
 * built), and the backend lifts the limit around its own capture, issue or patch of
 * that op (AUTOGRAPH_SMEM_FLUSH=1: the window ends there, as below).  The carveout
 * preference and permission for non-portable cluster sizes do not change what a
 * kernel computes either: the window ends there (held work goes out first, under
 * the limits it was made under) but graphs stay.  Any other attribute:
 * a flush point that drops every graph, as before. */
static void changing(int entry, uintptr_t arg0, CUfunction_attribute attrib)
{
    if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        __atomic_store_n(&ag_smem_limit_changed, 1, __ATOMIC_RELAXED);
        if (ag_config()->smem_flush)
            ag_engine_flush(AG_FLUSH_MODULE);
    } else if (attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT ||
               attrib == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)
        ag_engine_flush(AG_FLUSH_MODULE);
    else
        ag_intercept_before(entry, arg0);
}

/* The body of both wrappers: a flush point unless UNCHANGED holds; REMEMBER after.  A
 * set of the dynamic shared memory limit takes the raise lock (record_smem.c): it
 * never lands while the backend has a limit lifted. */
#define AG_ATTRIBUTE_SET(sym, UNCHANGED, REMEMBER)                              \
    CUresult (*real) AG_PARAMS_##sym = ag_real_fn(AG_EP_##sym);                \
    CUresult result;                                                           \
    int smem_limit = attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; \
    if (real == NULL)                                                          \
        return (CUresult)ag_driver_missing(AG_EP_##sym);                       \
    if (!ag_engine_running())                                                  \
        ag_intercept_before(AG_EP_##sym, (uintptr_t)AG_ARG0_##sym);           \
    else if (!(UNCHANGED))                                                     \
        changing(AG_EP_##sym, (uintptr_t)AG_ARG0_##sym, attrib);               \
    if (smem_limit)                                                            \
        ag_smem_lock();                                                        \
    AG_TIMED_CALL(AG_EP_##sym, result, real AG_ARGS_##sym);                    \
    REMEMBER;                                                                  \
    if (smem_limit)                                                            \
        ag_smem_unlock();                                                      \
    ag_call_done(AG_EP_##sym, result);                                         \
    return result

AG_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                      int value)
{
    AG_ATTRIBUTE_SET(cuFuncSetAttribute, func_attribute_is(hfunc, attrib, value),
                     remember_set(result, (uintptr_t)hfunc, -1, attrib, value));
}

AG_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                        CUkernel kernel, CUdevice dev)
{
    AG_ATTRIBUTE_SET(cuKernelSetAttribute, kernel_attribute_is(kernel, dev, attrib, val),
                     remember_set(result, (uintptr_t)kernel, (int)dev, attrib, val));
}
