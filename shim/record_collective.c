/* record_collective.c -- record: which kernels are collectives, by name.
 *
 * A collective kernel waits on the GPU for the same kernel of the other ranks, other
 * processes: the engine never holds one past its own call (build_collective.c).  A
 * function is one when the driver's name for it (cuFuncGetName; cuKernelGetName for
 * the CUkernel handles cudart launches) starts with NCCL's ncclDevKernel or
 * ncclKernel, or with one of the comma-separated prefixes of
 * AUTOGRAPH_COLLECTIVE_PREFIXES (other communication libraries: NVSHMEM, MSCCL++,
 * ...).  Asked once per function, when record_kernel.c makes its parameter layout
 * (or, for a function only launched with a packed `extra` buffer, when a template
 * with it is first built): never per launch.
 */
#include "record_internal.h"

#include "config.h"

#include <string.h>

static const char *const nccl_prefixes[] = { "ncclDevKernel", "ncclKernel" };

/* Whether `name` starts with one of the comma-separated prefixes of `list`. */
static int starts_with_listed(const char *name, const char *list)
{
    while (list && *list) {
        const char *comma = strchr(list, ',');
        size_t len = comma ? (size_t)(comma - list) : strlen(list);
        if (len && strncmp(name, list, len) == 0)
            return 1;
        list = comma ? comma + 1 : NULL;
    }
    return 0;
}

int ag_collective_name(const char *name)
{
    if (name == NULL)
        return 0;
    for (size_t i = 0; i < sizeof nccl_prefixes / sizeof *nccl_prefixes; i++)
        if (strncmp(name, nccl_prefixes[i], strlen(nccl_prefixes[i])) == 0)
            return 1;
    return starts_with_listed(name, ag_config()->collective_prefixes);
}

int ag_collective_function(CUfunction f)
{
    const char *name = ag_record_function_name((uint64_t)(uintptr_t)f);
    return name ? ag_collective_name(name) : 0;   /* nameless: not known as one */
}
