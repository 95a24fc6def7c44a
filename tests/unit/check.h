/* check.h -- the smallest unit-test harness: CHECK(cond) and a closing verdict.
 *
 * Each test binary under tests/unit/ calls CHECK for every assertion and returns
 * check_finish() from main: 0 when all held, 1 otherwise.  tests/bats/unit.bats
 * runs every binary as one test.  The counts are atomic: a fake backend may check
 * from the engine's launcher thread while the test's thread checks too.
 */
#ifndef AG_CHECK_H
#define AG_CHECK_H

#include <stdio.h>

static int check_failures, check_count;

#define CHECK(cond)                                                           \
    do {                                                                      \
        __atomic_fetch_add(&check_count, 1, __ATOMIC_RELAXED);                \
        if (!(cond)) {                                                        \
            __atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                     \
    } while (0)

static inline int check_finish(const char *name)
{
    int failures = __atomic_load_n(&check_failures, __ATOMIC_RELAXED);
    printf("%s: %d checks, %d failed\n", name, __atomic_load_n(&check_count, __ATOMIC_RELAXED),
           failures);
    return failures != 0;
}

#endif
