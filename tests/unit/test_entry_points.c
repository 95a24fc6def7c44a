/* test_entry_points.c -- the table: ids, names, classes and name lookups. */
#include "check.h"
#include "../../shim/entry_points.h"

#include <string.h>

int main(void)
{
    CHECK(AG_EP_COUNT > 250);
    CHECK(ag_entry_lookup("cuLaunchKernel") == AG_EP_cuLaunchKernel);
    CHECK(ag_entry_lookup("cuLaunchKernel_ptsz") == AG_EP_cuLaunchKernel_ptsz);
    CHECK(ag_entry_lookup("cuMemAlloc_v2") == AG_EP_cuMemAlloc_v2);
    CHECK(ag_entry_lookup("cuMemAlloc") == AG_EP_cuMemAlloc);
    CHECK(ag_entry_lookup("cuLaunchKernelX") == -1);
    CHECK(ag_entry_lookup("cublasCreate_v2") == -1);
    CHECK(ag_entry_lookup("") == -1);
    CHECK(ag_entry_class[AG_EP_cuLaunchKernelEx_ptsz] == AG_CLASS_LAUNCH);
    CHECK(ag_entry_class[AG_EP_cuMemcpyHtoDAsync_v2_ptsz] == AG_CLASS_COPY);
    CHECK(ag_entry_class[AG_EP_cuGetProcAddress_v2] == AG_CLASS_RESOLVE);
    CHECK(strcmp(ag_entry_name[AG_EP_cuStreamSynchronize_ptsz],
                 "cuStreamSynchronize_ptsz") == 0);
    /* Base names whose versioned variants are wrapped. */
    CHECK(ag_entry_family_known("cuMemcpyHtoD"));
    CHECK(ag_entry_family_known("cuStreamGetCaptureInfo"));
    CHECK(ag_entry_family_known("cuGetProcAddress"));
    CHECK(!ag_entry_family_known("cuDeviceGetName"));
    CHECK(!ag_entry_family_known("cuLaunch_bogus"));
    /* Every name is unique and found again. */
    for (int id = 0; id < AG_EP_COUNT; id++)
        CHECK(ag_entry_lookup(ag_entry_name[id]) == id);
    return check_finish("test_entry_points");
}
