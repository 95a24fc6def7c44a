/* intercept_wrappers.c -- door 1: an exported wrapper for every table entry.
 *
 * Programs linked to libcuda bind to these symbols first (the shim is preloaded);
 * the dlsym and cuGetProcAddress doors hand out the same functions.  Each wrapper
 * is generated from entry_points.def with the exact prototype cuda.h gives its
 * symbol (cuda.h is included in its "internal" mode, which declares every exported
 * name with its own ABI, so the compiler checks every signature).  In passthrough
 * mode a wrapper forwards to the driver's function and counts the call.
 * The class decides the body: a CONTEXT call also tells record_ops.c that the
 * thread's current context may have changed; RESOLVE entries are written by hand in
 * intercept_procaddr.c.  These wrappers are weak: the entry points the engine
 * records (record_points.def) get strong ones in intercept_defer.c, the ones that
 * allocate or free memory, or create streams, in intercept_lifetime.c.  A call with a flush policy
 * (flush_points.c; all zero until the engine starts) first lets the engine issue
 * its held work (intercept_wrapper.h).
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "counters.h"
#include "driver.h"
#include "engine.h"
#include "entry_signatures.h"
#include "intercept_wrapper.h"
#include "record_ops.h"

#define AG_FORWARD(sym) AG_WRAPPER(__attribute__((weak)), sym, (void)0, (void)0)

#define AG_WRAP_LAUNCH(sym)  AG_FORWARD(sym)
#define AG_WRAP_HOSTFN(sym)  AG_FORWARD(sym)
#define AG_WRAP_COPY(sym)    AG_FORWARD(sym)
#define AG_WRAP_SET(sym)     AG_FORWARD(sym)
#define AG_WRAP_EVENT(sym)   AG_FORWARD(sym)
#define AG_WRAP_STREAM(sym)  AG_FORWARD(sym)
#define AG_WRAP_CAPTURE(sym) AG_FORWARD(sym)
#define AG_WRAP_CONTEXT(sym) \
    AG_WRAPPER(__attribute__((weak)), sym, (void)0, ag_record_context_may_change())
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
