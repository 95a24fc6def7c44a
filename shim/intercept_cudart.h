/* intercept_cudart.h -- intercept: what the driver's launch wrappers (intercept_defer.c)
 * tell the runtime's launch wrappers (intercept_cudart.c), and back.
 *
 * While a runtime launch call runs the real libcudart, the probe is on: the driver
 * launch it makes is noted (which entry point, function, stream), so that the next
 * such runtime call can be offered to the replay's fast path without libcudart.
 */
#ifndef AG_INTERCEPT_CUDART_H
#define AG_INTERCEPT_CUDART_H

#include <cuda.h>

#include "op.h"

struct ag_runtime_probe {
    int on;             /* a runtime launch call is in libcudart on this thread */
    int seen;           /* driver launches it made */
    int usable;         /* the last one had kernelParams and no attributes */
    int entry;          /* its entry point (AG_EP_) */
    CUfunction f;
    CUstream stream;    /* as passed to the driver */
};
extern AG_TLS struct ag_runtime_probe ag_runtime_probe;

static inline void ag_runtime_probe_saw(int entry, CUfunction f, CUstream stream, int usable)
{
    struct ag_runtime_probe *p = &ag_runtime_probe;
    if (__builtin_expect(p->on, 0)) {
        p->seen++;
        p->usable = usable;
        p->entry = entry;
        p->f = f;
        p->stream = stream;
    }
}

/* intercept_defer.c: the fast path for such a launch; 1: held. */
int ag_intercept_hold_runtime(int entry, CUfunction f, const unsigned grid[3],
                              const unsigned block[3], unsigned smem, CUstream s,
                              void **params, uintptr_t ctx);

/* Forgets what was learnt (a module unloaded, a context gone: handles may come back). */
void ag_runtime_forget(void);

#endif
