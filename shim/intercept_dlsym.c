/* intercept_dlsym.c -- door 2: dlsym.
 *
 * The exported dlsym is an assembly trampoline (dlsym_trampoline.S) on x86-64:
 * for RTLD_DEFAULT and RTLD_NEXT it tail-jumps into glibc's dlsym, so glibc sees
 * the original caller's return address and resolves "next" and the default scope
 * relative to the caller, exactly as without the shim (a C wrapper would make every
 * RTLD_NEXT lookup relative to the shim: a known bug class of interposers).  Those
 * lookups of wrapped names find the shim's exported wrappers anyway, because the
 * preloaded shim comes first in the global scope.  For a real handle (the usual
 * dlopen("libcuda.so.1") + dlsym), the trampoline jumps to ag_dlsym_handle below,
 * which asks glibc and swaps a wrapped entry point for its wrapper.
 *
 * glibc >= 2.34 has dlsym in libc.so.6 as GLIBC_2.34; older ones as GLIBC_2.2.5.
 */
#include "driver.h"
#include "export.h"

#include <dlfcn.h>

typedef void *(*dlsym_fn)(void *, const char *);

/* Read by the trampoline; hidden like every non-exported symbol of the shim. */
void *ag_real_dlsym;

void *ag_resolve_real_dlsym(void)
{
    void *fn = __atomic_load_n(&ag_real_dlsym, __ATOMIC_ACQUIRE);
    if (fn)
        return fn;
    fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (fn == NULL)
        fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&ag_real_dlsym, fn, __ATOMIC_RELEASE);
    return fn;
}

void *ag_call_real_dlsym(void *handle, const char *name)
{
    dlsym_fn real = (dlsym_fn)ag_resolve_real_dlsym();
    return real ? real(handle, name) : NULL;
}

/* dlsym(handle, name) for a real handle. */
void *ag_dlsym_handle(void *handle, const char *name)
{
    void *fn = ag_call_real_dlsym(handle, name);
    if (fn && name && name[0] == 'c' && name[1] == 'u' && ag_entry_lookup(name) >= 0)
        fn = ag_driver_map(fn, name, AG_DOOR_DLSYM);
    return fn;
}

#if !defined(__x86_64__)
/* Portable fallback: RTLD_NEXT and RTLD_DEFAULT are resolved relative to the shim,
 * not the caller (see README, limitations). */
AG_EXPORT void *dlsym(void *handle, const char *name)
{
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT)
        return ag_call_real_dlsym(handle, name);
    return ag_dlsym_handle(handle, name);
}
#endif
