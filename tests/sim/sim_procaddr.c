/* sim_procaddr.c -- cuGetProcAddress (4 arguments, CUDA 11.3) and
 * cuGetProcAddress_v2 (5 arguments, CUDA 12.0).
 *
 * Resolves a base name ("cuMemAlloc") the way the driver does: among the ABIs
 * of that name (build/sim/gen/sim_procaddr.h, generated from the
 * PFN_<name>_v<version> typedefs of cudaTypedefs.h) it returns the address of
 * the export introduced last at or before cudaVersion -- the _ptds/_ptsz twin
 * when flags ask for the per-thread default stream and one exists.  The address
 * is the exported symbol itself (the library links with -Bsymbolic-functions,
 * so an interposed wrapper of the same name is never handed out).
 */
#include "sim_internal.h"

#include <string.h>

typedef struct sim_proc {
    const char *name;
    int version, per_thread;
    void *addr;
} sim_proc;

static const sim_proc procs[] = {
#define SIM_PROC(base, version, per_thread, sym) { base, version, per_thread, (void *)&sym },
#include "sim_procaddr.h"
#undef SIM_PROC
};

/* The best entry of one flavour for name at version; *seen: the name exists. */
static const sim_proc *best(const char *symbol, int version, int per_thread, int *seen)
{
    const sim_proc *pick = NULL;
    for (size_t i = 0; i < sizeof procs / sizeof *procs; i++) {
        const sim_proc *p = &procs[i];
        if (strcmp(p->name, symbol) != 0)
            continue;
        *seen = 1;
        if (p->per_thread == per_thread && p->version <= version &&
            (!pick || p->version > pick->version))
            pick = p;
    }
    return pick;
}

CUresult sim_api_get_proc_address_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    const sim_proc *p = NULL;
    int seen = 0;
    if (!symbol || !pfn || (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                                                  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
        p = best(symbol, cudaVersion, 1, &seen);
    if (!p)
        p = best(symbol, cudaVersion, 0, &seen);
    *pfn = p ? p->addr : NULL;
    if (symbolStatus)
        *symbolStatus = p ? CU_GET_PROC_ADDRESS_SUCCESS
                        : seen ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                               : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult sim_api_get_proc_address(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags)
{
    return sim_api_get_proc_address_v2(symbol, pfn, cudaVersion, flags, NULL);
}
