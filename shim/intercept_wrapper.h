/* intercept_wrapper.h -- the body shared by the exported wrappers of entry points.
 *
 * AG_WRAPPER(attrs, sym, BEFORE, AFTER) defines the exported function `sym` with
 * the exact prototype cuda.h gives it (entry_signatures.h): it finds the driver's
 * own function, lets the engine issue held work first when the entry has a flush
 * policy (flush_points.c), runs BEFORE, makes the call (timed for AUTOGRAPH_TIMING
 * when the entry submits work or waits for it: timing.h), runs AFTER (which sees
 * `result`), tells the engine about the program's own captures and about a failed
 * call (a sticky error stops the engine), counts the call.
 * intercept_wrappers.c makes the weak forwarding wrapper of every entry with it,
 * intercept_lifetime.c the strong ones that track memory and streams.
 * Include after <cuda.h> (internal mode), counters.h, driver.h, engine.h and
 * entry_signatures.h.
 */
#ifndef AG_INTERCEPT_WRAPPER_H
#define AG_INTERCEPT_WRAPPER_H

#include "export.h"
#include "match_speed.h"
#include "timing.h"

#include <stdint.h>

/* intercept_defer.c: the engine's part of a call with a flush policy (nonzero: the
 * CUresult to return, the driver not called), and of a call the driver failed. */
int ag_intercept_before(int entry, uintptr_t arg0);
void ag_intercept_failed(int entry, int result);

/* The end of every wrapped call: a failure is shown to the engine, the call counted. */
static inline void ag_call_done(int entry, CUresult result)
{
    if (result != CUDA_SUCCESS)
        ag_intercept_failed(entry, result);
    ag_count_call(entry, result);
}

#define AG_WRAPPER(attrs, sym, BEFORE, AFTER)                                  \
    attrs AG_EXPORT CUresult sym AG_PARAMS_##sym                               \
    {                                                                          \
        CUresult (*real) AG_PARAMS_##sym = ag_real_fn(AG_EP_##sym);            \
        unsigned policy = ag_call_policy[AG_EP_##sym];                         \
        CUresult result;                                                       \
        if (real == NULL)                                                      \
            return (CUresult)ag_driver_missing(AG_EP_##sym);                   \
        if (policy && (result = (CUresult)ag_intercept_before(                 \
                           AG_EP_##sym, (uintptr_t)AG_ARG0_##sym))) {         \
            ag_count_call(AG_EP_##sym, result);                                \
            return result;          /* answered by the engine */               \
        }                                                                      \
        BEFORE;                                                                \
        AG_TIMED_CALL(AG_EP_##sym, result, real AG_ARGS_##sym);                \
        AFTER;                                                                 \
        if (policy & (AG_POLICY_CAPTURE_BEGIN | AG_POLICY_CAPTURE_END))        \
            ag_engine_after(AG_EP_##sym, result);                              \
        if ((policy & AG_POLICY_REASON_MASK) == AG_FLUSH_SYNC ||               \
            ((policy & AG_POLICY_REASON_MASK) == AG_FLUSH_QUERY && !result))    \
            ag_speed_sync();        /* the device caught up: a block may end */ \
        ag_call_done(AG_EP_##sym, result);                                     \
        return result;                                                         \
    }

#endif
