/* vm_hwm.h -- the process's peak resident memory, for test programs that check that
 * the shim's memory stays bounded (tests/sim/progs/decode_long.c, tests/gpu/decode_prog.cu:
 * C and CUDA C++ alike).
 */
#ifndef AG_TESTS_VM_HWM_H
#define AG_TESTS_VM_HWM_H

#include <stdio.h>
#include <string.h>

/* VmHWM of /proc/self/status in kB, -1 when unknown. */
static inline long vm_hwm_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            sscanf(line + 6, "%ld", &kb);
    fclose(f);
    return kb;
}

#endif
