/* driver.h -- the real CUDA driver: loading it, its functions, and the map from a
 * real function's address to the shim's wrapper of it.
 */
#ifndef AG_DRIVER_H
#define AG_DRIVER_H

#include <stddef.h>

#include "entry_points.h"

/* Real address of every wrapped entry point (NULL: not resolved yet, or absent). */
extern void *ag_real[AG_EP_COUNT];

/* Ensures the driver is loaded and every ag_real[] slot resolved.  `hint` names an
 * address inside an already loaded driver object (from a dlsym answer), or NULL to
 * dlopen("libcuda.so.1").  Returns 1 when ready, 0 when the driver cannot be had
 * (or when called re-entrantly during loading). */
int ag_driver_ensure(const void *hint);

/* True once this process has used the driver (any wrapper, or a dlsym/resolver
 * answer that named a wrapped entry point).  Processes that never did print
 * nothing at all: no summary, no configuration complaints. */
int ag_driver_used(void);

/* The real function of `id`, loading the driver on first use; NULL if absent. */
static inline void *ag_real_fn(int id)
{
    void *fn = __atomic_load_n(&ag_real[id], __ATOMIC_ACQUIRE);
    if (__builtin_expect(fn == NULL, 0) && ag_driver_ensure(NULL))
        fn = __atomic_load_n(&ag_real[id], __ATOMIC_ACQUIRE);
    return fn;
}

/* Called by a wrapper whose real function is absent: logs once, returns the error. */
int ag_driver_missing(int id);

/* Where a handed-out pointer came from (counted in the exit summary). */
enum ag_door { AG_DOOR_DLSYM, AG_DOOR_GETPROCADDRESS, AG_DOOR_COUNT };

/* If `fn` is the real address of a wrapped entry point, the wrapper's address;
 * otherwise `fn` itself.  `name` is the symbol that was asked for: when it names a
 * wrapped family but `fn` cannot be mapped, the miss is logged and counted. */
void *ag_driver_map(void *fn, const char *name, enum ag_door door);

/* The wrapper of entry point `id` (defined with the wrappers). */
extern void *const ag_wrapper[AG_EP_COUNT];

/* The glibc dlsym (defined in intercept_dlsym.c). */
void *ag_call_real_dlsym(void *handle, const char *name);

#endif
