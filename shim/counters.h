/* counters.h -- per-entry-point call counters and the exit summary. */
#ifndef AG_COUNTERS_H
#define AG_COUNTERS_H

#include "driver.h"

#include <stdint.h>
#include <stdio.h>

/* One counter per entry point, each on its own cache line. */
struct ag_counter {
    _Alignas(64) unsigned long calls;
    unsigned long failed;
};
extern struct ag_counter ag_counters[AG_EP_COUNT];

/* Counts one call of `id` that returned `result` (0 is CUDA_SUCCESS).  One
 * atomic add on the usual path: failures are rare and counted apart. */
static inline void ag_count_call(int id, int result)
{
    __atomic_fetch_add(&ag_counters[id].calls, 1, __ATOMIC_RELAXED);
    if (__builtin_expect(result != 0, 0))
        __atomic_fetch_add(&ag_counters[id].failed, 1, __ATOMIC_RELAXED);
}

void ag_count_door(enum ag_door door);

/* The calls so far that submit work (classes LAUNCH, COPY, SET: *work) and the kernel
 * launches among them, held or not: the speed guard's clock of work (match_speed.h). */
void ag_count_work(uint64_t *work, unsigned long *launches);
void ag_count_unmapped(void);

/* Writes the summary (see README) to `out`, each line preceded by `prefix`. */
void ag_summary_write(FILE *out, const char *prefix);

#endif
