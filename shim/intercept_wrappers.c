/* intercept_wrappers.c -- door 1: an exported wrapper for every table entry.
 *
 * Programs linked to libcuda bind to these symbols first (the shim is preloaded);
 * the dlsym and cuGetProcAddress doors hand out the same functions.  Each wrapper
 * is generated from entry_points.def with the exact prototype cuda.h gives its
 * symbol (cuda.h is included in its "internal" mode, which declares every exported
 * name with its own ABI, so the compiler checks every signature).  In passthrough
 * mode a wrapper forwards to the driver's function and counts the call.
 * The class decides the body: RESOLVE entries are written by hand in
 * intercept_procaddr.c.  These wrappers are weak: the entry points the engine
 * records (record_points.def) get strong ones in intercept_defer.c.  A call with a
 * flush policy (flush_points.c; all zero until the engine starts) first lets the
 * engine issue its held work.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "counters.h"
#include "driver.h"
#include "engine.h"
#include "entry_signatures.h"

#include <stdint.h>

void ag_intercept_before(int entry, uintptr_t arg0);   /* intercept_defer.c */

#define AG_EXPORT __attribute__((visibility("default")))

#define AG_FORWARD(sym)                                                        \
    __attribute__((weak)) AG_EXPORT CUresult sym AG_PARAMS_##sym               \
    {                                                                          \
        CUresult (*real) AG_PARAMS_##sym = ag_real_fn(AG_EP_##sym);            \
        unsigned policy = ag_call_policy[AG_EP_##sym];                         \
        CUresult result;                                                       \
        if (real == NULL)                                                      \
            return (CUresult)ag_driver_missing(AG_EP_##sym);                   \
        if (policy)                                                            \
            ag_intercept_before(AG_EP_##sym, (uintptr_t)AG_ARG0_##sym);       \
        result = real AG_ARGS_##sym;                                           \
        if (policy & (AG_POLICY_CAPTURE_BEGIN | AG_POLICY_CAPTURE_END))        \
            ag_engine_after(AG_EP_##sym, result);                              \
        ag_count_call(AG_EP_##sym, result);                                    \
        return result;                                                         \
    }

#define AG_WRAP_LAUNCH(sym)  AG_FORWARD(sym)
#define AG_WRAP_HOSTFN(sym)  AG_FORWARD(sym)
#define AG_WRAP_COPY(sym)    AG_FORWARD(sym)
#define AG_WRAP_SET(sym)     AG_FORWARD(sym)
#define AG_WRAP_EVENT(sym)   AG_FORWARD(sym)
#define AG_WRAP_STREAM(sym)  AG_FORWARD(sym)
#define AG_WRAP_CAPTURE(sym) AG_FORWARD(sym)
#define AG_WRAP_CONTEXT(sym) AG_FORWARD(sym)
#define AG_WRAP_ALLOC(sym)   AG_FORWARD(sym)
#define AG_WRAP_FREE(sym)    AG_FORWARD(sym)
#define AG_WRAP_MEMWORK(sym) AG_FORWARD(sym)
#define AG_WRAP_GRAPH(sym)   AG_FORWARD(sym)
#define AG_WRAP_MODULE(sym)  AG_FORWARD(sym)
#define AG_WRAP_RESOLVE(sym) /* intercept_procaddr.c */

#define AG_ENTRY(sym, cls) AG_WRAP_##cls(sym)
#include "entry_points.def"
#undef AG_ENTRY

/* The address of every wrapper, by id, for the doors that hand out pointers. */
void *const ag_wrapper[AG_EP_COUNT] = {
#define AG_ENTRY(sym, cls) (void *)sym,
#include "entry_points.def"
#undef AG_ENTRY
};
