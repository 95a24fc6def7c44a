/* sim_pace.c -- the host time a launch call costs, on demand: SIM_LAUNCH_US makes every
 * kernel launch call (cuLaunchKernel and its kin) spin that many microseconds before it
 * returns, SIM_GRAPH_LAUNCH_US every cuGraphLaunch.  The simulator's own calls cost
 * next to nothing either way; these make graphed work slower or faster than eager work
 * on purpose, for the shim's speed guard (tests/bats/engine_sim.bats).
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <time.h>

static long read_us(const char *name, long *cache)
{
    if (*cache < 0) {
        const char *e = getenv(name);
        long v = e && *e ? strtol(e, NULL, 10) : 0;
        *cache = v > 0 && v < 1000000 ? v : 0;
    }
    return *cache;
}

static void spin_us(long us)
{
    struct timespec t0, t;
    if (us <= 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

void sim_pace_launch(void)
{
    static long us = -1;
    spin_us(read_us("SIM_LAUNCH_US", &us));
}

void sim_pace_graph_launch(void)
{
    static long us = -1;
    spin_us(read_us("SIM_GRAPH_LAUNCH_US", &us));
}
