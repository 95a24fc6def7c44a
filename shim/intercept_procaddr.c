/* intercept_procaddr.c -- door 3: the driver's resolver, cuGetProcAddress(_v2).
 *
 * cudart (static and shared), cuBLAS, PyTorch and cudaGetDriverEntryPoint* all ask
 * the driver's resolver for entry points, with a cudaVersion and stream flags.  We
 * always ask the real resolver first, with the caller's exact arguments, and then
 * swap the address it returned for the wrapper of that exact symbol: the ABI
 * version and the _ptsz/_ptds flavour are the driver's own choice.  A request for
 * "cuGetProcAddress" itself returns the real resolver's address, which maps to the
 * wrappers below, so every later lookup comes through here too.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "counters.h"
#include "driver.h"
#include "export.h"

static void swap_for_wrapper(CUresult result, const char *symbol, void **pfn)
{
    if (result == CUDA_SUCCESS && pfn && *pfn)
        *pfn = ag_driver_map(*pfn, symbol, AG_DOOR_GETPROCADDRESS);
}

AG_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags)
{
    CUresult (*real)(const char *, void **, int, cuuint64_t) =
        ag_real_fn(AG_EP_cuGetProcAddress);
    CUresult result;
    if (real == NULL)
        return (CUresult)ag_driver_missing(AG_EP_cuGetProcAddress);
    result = real(symbol, pfn, cudaVersion, flags);
    ag_count_call(AG_EP_cuGetProcAddress, result);
    swap_for_wrapper(result, symbol, pfn);
    return result;
}

AG_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *symbolStatus)
{
    CUresult (*real)(const char *, void **, int, cuuint64_t,
                     CUdriverProcAddressQueryResult *) =
        ag_real_fn(AG_EP_cuGetProcAddress_v2);
    CUresult result;
    if (real == NULL)
        return (CUresult)ag_driver_missing(AG_EP_cuGetProcAddress_v2);
    result = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    ag_count_call(AG_EP_cuGetProcAddress_v2, result);
    swap_for_wrapper(result, symbol, pfn);
    return result;
}
