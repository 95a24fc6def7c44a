/* test_alloc.c -- unit tests of the allocation table (shim/alloc_table.c): interior
 * pointers, frees by base and by range (VMM unmap), addresses reused, the freed
 * list's bound, and dead-pointer checks of argument bytes (warn mode: reports go
 * to stderr, the count comes back).
 */
#include "alloc_table.h"
#include "config.h"

#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void describe(const void *subject, char *buf, size_t size)
{
    snprintf(buf, size, "%s", (const char *)subject);
}

static int dead_in(uint64_t value)
{
    unsigned char args[24] = { 0 };
    memcpy(args + 8, &value, 8);               /* the second word of three */
    return ag_alloc_check_args(args, sizeof args, describe, "test");
}

int main(void)
{
    uintptr_t base;
    size_t size;
    struct ag_alloc_stats st;

    ag_alloc_setup(AG_LIVENESS_WARN);
    ag_alloc_add(0x100000, 0x1000, "cuMemAlloc_v2");
    ag_alloc_add(0x200000, 0x100, "cuMemHostAlloc");
    CHECK(ag_alloc_find(0x100fff, &base, &size) && base == 0x100000 && size == 0x1000);
    CHECK(!ag_alloc_find(0x101000, &base, &size));
    CHECK(dead_in(0x100010) == 0);              /* live */
    CHECK(dead_in(7) == 0 && dead_in(0x300000) == 0);   /* not memory we know */

    ag_alloc_remove(0x100000, 0, "cuMemFree_v2");
    CHECK(!ag_alloc_find(0x100010, &base, &size));
    CHECK(dead_in(0x100010) == 1);              /* interior pointer into freed memory */
    CHECK(dead_in(0x100010) == 1);              /* reported once, counted each time */
    CHECK(dead_in(0x200010) == 0);

    ag_alloc_add(0x100000, 0x800, "cuMemAlloc_v2");   /* the address is reused */
    CHECK(dead_in(0x100010) == 0);
    CHECK(dead_in(0x100900) == 0);              /* the old record went with the reuse */

    /* VMM: two mappings, one unmap over both */
    ag_alloc_add(0x400000, 0x10000, "cuMemMap");
    ag_alloc_add(0x410000, 0x10000, "cuMemMap");
    ag_alloc_remove(0x400000, 0x20000, "cuMemUnmap");
    CHECK(!ag_alloc_find(0x400000, &base, &size) && !ag_alloc_find(0x41ffff, &base, &size));
    CHECK(dead_in(0x41fff0) == 1 && dead_in(0x400000) == 1);

    /* a free of memory the table never saw is counted, nothing else */
    ag_alloc_remove(0x900000, 0, "cuMemFree_v2");
    ag_alloc_stats(&st);
    CHECK(st.unknown_frees == 1 && st.frees == 3 && st.live == 2 && st.dead_pointers == 4);

    /* the freed list keeps the most recent AG_FREED_KEEP */
    for (uintptr_t i = 0; i < AG_FREED_KEEP + 10; i++) {
        ag_alloc_add(0x10000000 + i * 0x100, 0x100, "cuMemAlloc_v2");
        ag_alloc_remove(0x10000000 + i * 0x100, 0, "cuMemFree_v2");
    }
    CHECK(dead_in(0x10000000 + (AG_FREED_KEEP + 9) * 0x100) == 1);
    CHECK(dead_in(0x10000000 + 0x100) == 0);    /* forgotten */
    return check_finish("test_alloc");
}
