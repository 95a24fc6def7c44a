/* counters.h -- per-entry-point call counters and the exit summary. */
#ifndef AG_COUNTERS_H
#define AG_COUNTERS_H

#include "driver.h"

#include <stdio.h>

/* One counter per entry point, each on its own cache line. */
struct ag_counter {
    _Alignas(64) unsigned long calls;
    unsigned long succeeded;
};
extern struct ag_counter ag_counters[AG_EP_COUNT];

/* Counts one call of `id` that returned `result` (0 is CUDA_SUCCESS). */
static inline void ag_count_call(int id, int result)
{
    __atomic_fetch_add(&ag_counters[id].calls, 1, __ATOMIC_RELAXED);
    if (result == 0)
        __atomic_fetch_add(&ag_counters[id].succeeded, 1, __ATOMIC_RELAXED);
}

void ag_count_door(enum ag_door door);
void ag_count_unmapped(void);

/* Writes the summary (see README) to `out`, each line preceded by `prefix`. */
void ag_summary_write(FILE *out, const char *prefix);

#endif
