/* alloc_table.h -- the program's memory, as far as graphs are concerned.
 *
 * Every allocation the program makes through the driver (device, async/pool,
 * managed, pitched, VMM mappings, pinned and registered host memory, IPC and pool
 * imports) is entered here by intercept_lifetime.c, and removed when freed.  Freed
 * ones are kept for a while (AG_FREED_KEEP) so that a pointer into one can be told
 * apart from any other number.  With AUTOGRAPH_CHECK_LIVENESS=warn or error, the
 * allocation and free backtraces are kept too, and every recorded op's pointer-
 * sized arguments are checked (ag_alloc_check_args): one into freed memory gives a
 * report, as PyTorch's check_input_liveness does for graph replays.
 * No CUDA types: the engine includes this header.
 */
#ifndef AG_ALLOC_TABLE_H
#define AG_ALLOC_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define AG_FREED_KEEP 4096          /* freed allocations remembered */
#define AG_EXIT_DEAD_POINTER 87     /* exit status of AUTOGRAPH_CHECK_LIVENESS=error */

/* enum ag_liveness (config.h), set at start (atomic: by whichever thread first calls CUDA,
 * while others read it) */
extern _Atomic int ag_liveness;

void ag_alloc_setup(int liveness);

/* A successful allocation of [base, base + size) by entry point `how`. */
void ag_alloc_add(uintptr_t base, size_t size, const char *how);

/* The live allocation containing addr: 1 and its range, or 0. */
int ag_alloc_find(uintptr_t addr, uintptr_t *base, size_t *size);

/* A successful free of the allocation starting at base (every one inside
 * [base, base + size) when size > 0: a VMM unmap); they move to the freed list. */
void ag_alloc_remove(uintptr_t base, size_t size, const char *how);

/* Checks the 8-byte-aligned words of args (an op's argument bytes) for pointers
 * into freed memory; reports each (at most once per freed allocation in warn mode)
 * naming what describe(subject) writes (called only for a report), and in error mode
 * exits with AG_EXIT_DEAD_POINTER.  Returns the number of dead pointers found. */
typedef void (*ag_describe_fn)(const void *subject, char *buf, size_t size);
int ag_alloc_check_args(const unsigned char *args, size_t len, ag_describe_fn describe,
                        const void *subject);

/* Counters for the exit summary. */
struct ag_alloc_stats { unsigned long allocs, frees, live, dead_pointers, unknown_frees; };
void ag_alloc_stats(struct ag_alloc_stats *out);

#endif
