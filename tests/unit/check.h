/* check.h -- the smallest unit-test harness: CHECK(cond) and a closing verdict.
 *
 * Each test binary under tests/unit/ calls CHECK for every assertion and returns
 * check_finish() from main: 0 when all held, 1 otherwise.  tests/bats/unit.bats
 * runs every binary as one test.
 */
#ifndef AG_CHECK_H
#define AG_CHECK_H

#include <stdio.h>

static int check_failures, check_count;

#define CHECK(cond)                                                           \
    do {                                                                      \
        check_count++;                                                        \
        if (!(cond)) {                                                        \
            check_failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                     \
    } while (0)

static inline int check_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures != 0;
}

#endif
