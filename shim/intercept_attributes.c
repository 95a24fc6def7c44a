/* intercept_attributes.c -- intercept: function attribute sets that change nothing.
 *
 * cuFuncSetAttribute and cuKernelSetAttribute are flush points that also drop every
 * graph (flush_points.c: a function reconfigured).  Libraries set attributes again
 * and again to the value they already have: cuDNN sets a kernel's dynamic shared
 * memory size before each launch of it, several times per training step, which
 * dropped every graph of a PyTorch CNN each step.  These strong wrappers (overriding
 * the weak forwarding ones of intercept_wrappers.c) first ask the driver for the
 * attribute's current value: when it already is the value being set, the call goes
 * to the driver without ending the window or dropping anything (nothing held can
 * see a difference).  Otherwise, or when the value cannot be read, the call is a
 * flush point as before.  With the engine off, no value is read.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "counters.h"
#include "driver.h"
#include "engine.h"
#include "entry_points.h"
#include "entry_signatures.h"
#include "intercept_wrapper.h"
#include "record_ops.h"

typedef CUresult (*func_get_fn)(int *, CUfunction_attribute, CUfunction);
typedef CUresult (*kernel_get_fn)(int *, CUfunction_attribute, CUkernel, CUdevice);

static void *getter(void **cache, const char *name)
{
    void *fn = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (fn == NULL) {
        fn = ag_driver_proc(name);
        __atomic_store_n(cache, fn, __ATOMIC_RELAXED);
    }
    return fn;
}

static int func_attribute_is(CUfunction f, CUfunction_attribute attrib, int value)
{
    static void *cache;
    func_get_fn get = (func_get_fn)getter(&cache, "cuFuncGetAttribute");
    int now = 0;
    return get && get(&now, attrib, f) == CUDA_SUCCESS && now == value;
}

static int kernel_attribute_is(CUkernel k, CUdevice dev, CUfunction_attribute attrib,
                               int value)
{
    static void *cache;
    kernel_get_fn get = (kernel_get_fn)getter(&cache, "cuKernelGetAttribute");
    int now = 0;
    return get && get(&now, attrib, k, dev) == CUDA_SUCCESS && now == value;
}

/* The body of both wrappers: a flush point unless UNCHANGED holds. */
#define AG_ATTRIBUTE_SET(sym, UNCHANGED)                                        \
    CUresult (*real) AG_PARAMS_##sym = ag_real_fn(AG_EP_##sym);                \
    CUresult result;                                                           \
    if (real == NULL)                                                          \
        return (CUresult)ag_driver_missing(AG_EP_##sym);                       \
    if (!(ag_engine_running() && (UNCHANGED)))                                 \
        ag_intercept_before(AG_EP_##sym, (uintptr_t)AG_ARG0_##sym);           \
    AG_TIMED_CALL(AG_EP_##sym, result, real AG_ARGS_##sym);                    \
    ag_call_done(AG_EP_##sym, result);                                         \
    return result

AG_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                      int value)
{
    AG_ATTRIBUTE_SET(cuFuncSetAttribute, func_attribute_is(hfunc, attrib, value));
}

AG_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                        CUkernel kernel, CUdevice dev)
{
    AG_ATTRIBUTE_SET(cuKernelSetAttribute, kernel_attribute_is(kernel, dev, attrib, val));
}
