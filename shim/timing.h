/* timing.h -- AUTOGRAPH_TIMING: how long the host waited for each window of work.
 *
 * Per thread, a window runs from the first call that submits work to a stream (after
 * the thread's previous host synchronization) to the return of the call with which
 * the host waited for the device (timing.c says which calls are which); its counts
 * are those of every thread since the previous window ended.  The wrappers
 * tell timing.c about every such call: ag_timing_on is 0 while AUTOGRAPH_TIMING is
 * unset, so the cost then is one load (from the line of flags every call reads
 * anyway) and one well-predicted branch per call.  No CUDA types here.
 */
#ifndef AG_TIMING_H
#define AG_TIMING_H

#include "entry_points.h"

#include <stdint.h>
#include <time.h>

/* What a call does to the calling thread's window (all NONE while timing is off). */
enum ag_timing_role {
    AG_TIMING_NONE,     /* neither */
    AG_TIMING_SUBMIT,   /* submits work: opens the window if none is open, counts */
    AG_TIMING_SYNC,     /* the host waited for the device: ends the window */
};

/* Role of every entry point, by AG_EP_ id; filled once by ag_timing_start, which
 * then sets ag_timing_on (beside the other flags every call reads: op.h, AG_HOT). */
extern _Atomic unsigned char ag_timing_role[AG_EP_COUNT];
extern int ag_timing_on;

/* Whether a call of `entry` is timed. */
static inline int ag_timing_timed(int entry)
{
    return __builtin_expect(__atomic_load_n(&ag_timing_on, __ATOMIC_RELAXED), 0) &&
           ag_timing_role[entry] != AG_TIMING_NONE;
}

static inline uint64_t ag_timing_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Starts timing into `pattern` (%p: the pid; NULL: timing stays off) with header mode
 * "on" or "off"; called once, when the process first uses the driver. */
void ag_timing_start(const char *pattern, int mode_on);

/* A forwarded call of `entry` whose real function ran from t_call to t_ret. */
void ag_timing_call(int entry, uint64_t t_call, uint64_t t_ret);

/* A recordable call of `entry` that entered the shim at t_in: passed to the driver,
 * which ran from t_call to t_ret (the shim's own time so far: t_call - t_in), then
 * ag_timing_shim_since(t_ret) as the wrapper returns (its own time after the driver);
 * or held back by the engine (it runs inside a graph): its whole time in the shim,
 * from t_in to now, is the shim's own.  A recordable call the host waits on (a
 * synchronous copy to or from host memory: role AG_TIMING_SYNC) is no submit: it
 * ends the window, at t_ret (passed) or at its return (held, its wait done). */
void ag_timing_submit(int entry, uint64_t t_in, uint64_t t_call, uint64_t t_ret);
void ag_timing_shim_since(int entry, uint64_t t_ret);
void ag_timing_held(int entry, uint64_t t_in);

/* result = call, timed when `entry` plays a role (the forwarding wrappers). */
#define AG_TIMED_CALL(entry, result, call)                                     \
    do {                                                                       \
        if (ag_timing_timed(entry)) {                                         \
            uint64_t t_call_ = ag_timing_now();                                \
            result = call;                                                     \
            ag_timing_call(entry, t_call_, ag_timing_now());                   \
        } else {                                                               \
            result = call;                                                     \
        }                                                                      \
    } while (0)

#endif
