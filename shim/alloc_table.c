/* alloc_table.c -- live and freed allocations, their backtraces, dead-pointer reports.
 *
 * Two arrays sorted by base address, each of non-overlapping ranges: the live
 * allocations, and the most recently freed ones (AG_FREED_KEEP; a newer allocation
 * or free over the same addresses replaces the older record).  Lookups are binary
 * searches, so interior pointers resolve to their allocation.  Allocations and
 * frees are rare next to launches; the arrays are kept under one mutex.
 * Backtraces are taken (glibc backtrace()) only when AUTOGRAPH_CHECK_LIVENESS is
 * warn or error, and symbolized only in a report; the shim's own frames are left
 * out of it.
 */
#include "alloc_table.h"

#include "config.h"
#include "log.h"
#include "op.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BT_DEPTH 24

/* A backtrace, kept out of line so that entries stay small: allocations and frees
 * move entries within the arrays, and most runs take no backtraces at all. */
struct backtrace {
    int n;
    void *pc[BT_DEPTH];
};

struct alloc {
    uintptr_t base;
    size_t size;
    uint64_t seq;                   /* when it was freed (freed list) */
    const char *how, *freed_how;    /* entry point names */
    struct backtrace *bt_alloc, *bt_free;   /* NULL unless liveness checks are on */
    int reported;
};

struct alloc_list { struct alloc *v; size_t n, cap; };

/* The first of the AG_HOT flags in link order (the objects go in name order): aligned
 * to a cache line, it starts their section on one (build.bats checks that they fit). */
AG_HOT __attribute__((aligned(64))) _Atomic int ag_liveness;
static struct alloc_list live, freed;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ag_alloc_stats stats;
static uint64_t free_seq;

void ag_alloc_setup(int liveness)
{
    ag_liveness = liveness;
}

/* ---- sorted lists ------------------------------------------------------------------ */

static size_t end_of(const struct alloc *a)
{
    return a->base + (a->size ? a->size : 1);
}

/* Index of the first entry whose base is > addr. */
static size_t upper_bound(const struct alloc_list *l, uintptr_t addr)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->v[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct alloc *find_in(struct alloc_list *l, uintptr_t addr)
{
    size_t i = upper_bound(l, addr);
    return i > 0 && addr < end_of(&l->v[i - 1]) ? &l->v[i - 1] : NULL;
}

/* A backtrace of the calling thread, or NULL when liveness checks are off. */
static struct backtrace *take_backtrace(void)
{
    struct backtrace *bt;
    if (ag_liveness == AG_LIVENESS_OFF || (bt = malloc(sizeof *bt)) == NULL)
        return NULL;
    bt->n = backtrace(bt->pc, BT_DEPTH);
    return bt;
}

/* A copy of bt for a second owner, or NULL. */
static struct backtrace *copy_backtrace(const struct backtrace *bt)
{
    struct backtrace *copy = bt ? malloc(sizeof *copy) : NULL;
    if (copy)
        *copy = *bt;
    return copy;
}

static void forget_backtraces(struct alloc *a)
{
    free(a->bt_alloc);
    free(a->bt_free);
}

/* Removes every entry overlapping [base, end). */
static void drop_overlapping(struct alloc_list *l, uintptr_t base, uintptr_t end)
{
    size_t i = upper_bound(l, base), from;
    if (i > 0 && end_of(&l->v[i - 1]) > base)
        i--;
    from = i;
    while (i < l->n && l->v[i].base < end)
        forget_backtraces(&l->v[i++]);
    if (i == from)
        return;                 /* nothing overlaps (and l->v may still be NULL) */
    memmove(&l->v[from], &l->v[i], (l->n - i) * sizeof *l->v);
    l->n -= i - from;
}

/* Inserts a (its range must not overlap any entry); 0, or -1 out of memory. */
static int insert(struct alloc_list *l, const struct alloc *a)
{
    size_t i;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct alloc *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    i = upper_bound(l, a->base);
    memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof *l->v);
    l->v[i] = *a;
    l->n++;
    return 0;
}

static void forget_oldest_freed(void)
{
    size_t oldest = 0;
    for (size_t i = 1; i < freed.n; i++)
        if (freed.v[i].seq < freed.v[oldest].seq)
            oldest = i;
    forget_backtraces(&freed.v[oldest]);
    memmove(&freed.v[oldest], &freed.v[oldest + 1], (freed.n - oldest - 1) * sizeof *freed.v);
    freed.n--;
}

/* ---- allocations and frees ------------------------------------------------------- */

void ag_alloc_add(uintptr_t base, size_t size, const char *how)
{
    struct alloc a = { .base = base, .size = size, .how = how, .bt_alloc = take_backtrace() };
    pthread_mutex_lock(&table_lock);
    drop_overlapping(&freed, base, end_of(&a));
    drop_overlapping(&live, base, end_of(&a));   /* a mapping replaced behind our back */
    if (insert(&live, &a) == 0)
        stats.allocs++;
    else
        forget_backtraces(&a);
    pthread_mutex_unlock(&table_lock);
}

int ag_alloc_find(uintptr_t addr, uintptr_t *base, size_t *size)
{
    struct alloc *a;
    pthread_mutex_lock(&table_lock);
    a = find_in(&live, addr);
    if (a) {
        *base = a->base;
        *size = a->size;
    }
    pthread_mutex_unlock(&table_lock);
    return a != NULL;
}

/* Moves live entry i to the freed list; it takes bt (which may be NULL). */
static void retire_entry(size_t i, const char *how, struct backtrace *bt)
{
    struct alloc a = live.v[i];
    memmove(&live.v[i], &live.v[i + 1], (live.n - i - 1) * sizeof *live.v);
    live.n--;
    stats.frees++;
    a.freed_how = how;
    a.seq = ++free_seq;
    a.reported = 0;
    a.bt_free = bt;
    drop_overlapping(&freed, a.base, end_of(&a));
    if (freed.n == AG_FREED_KEEP)
        forget_oldest_freed();
    if (insert(&freed, &a) != 0)
        forget_backtraces(&a);
}

void ag_alloc_remove(uintptr_t base, size_t size, const char *how)
{
    struct backtrace *bt = take_backtrace();
    int retired = 0;
    uintptr_t end = base + (size ? size : 1);
    size_t i, before;
    pthread_mutex_lock(&table_lock);
    i = base ? upper_bound(&live, base - 1) : 0;       /* first entry at or after base */
    before = stats.frees;
    while (i < live.n && live.v[i].base < end)      /* one free may cover several */
        retire_entry(i, how, retired++ ? copy_backtrace(bt) : bt);
    stats.unknown_frees += stats.frees == before;
    pthread_mutex_unlock(&table_lock);
    if (retired == 0)
        free(bt);
}

void ag_alloc_stats(struct ag_alloc_stats *out)
{
    pthread_mutex_lock(&table_lock);
    *out = stats;
    out->live = live.n;
    pthread_mutex_unlock(&table_lock);
}

/* ---- dead pointers ---------------------------------------------------------------- */

/* One line of a dead-pointer report. */
#define say(...) ag_log_topic("liveness: ", __VA_ARGS__)

/* Prints a backtrace, leaving out the frames inside the shim itself. */
static void print_backtrace(const struct backtrace *trace)
{
    void *const *bt = trace ? trace->pc : NULL;
    int n = trace ? trace->n : 0;
    Dl_info self, where;
    char **names;
    int shown = 0, top = 0;
    if (n == 0) {
        say("    (no backtrace)");
        return;
    }
    if (dladdr((void *)print_backtrace, &self) == 0)
        self.dli_fbase = NULL;
    /* frames above the shim's first one are backtrace()'s own (a sanitizer's interceptor
     * when the program is built with one): left out too */
    while (top < n && !(dladdr(bt[top], &where) && where.dli_fbase == self.dli_fbase))
        top++;
    if (top == n)
        top = 0;
    names = backtrace_symbols(bt, n);
    for (int i = top; i < n; i++) {
        if (dladdr(bt[i], &where) && where.dli_fbase == self.dli_fbase)
            continue;
        if (names)
            say("    #%d %s", shown++, names[i]);
        else
            say("    #%d %p", shown++, bt[i]);
    }
    free(names);
}

static void report(const struct alloc *a, uintptr_t value, size_t offset,
                   ag_describe_fn describe, const void *subject)
{
    char what[192];
    describe(subject, what, sizeof what);
    say("%s would touch freed memory: argument bytes %zu..%zu hold 0x%llx, %zu bytes into "
        "an allocation that was freed (a dead pointer)", what, offset, offset + 7,
        (unsigned long long)value, (size_t)(value - a->base));
    say("  allocation 0x%llx, %zu bytes, made by %s at:", (unsigned long long)a->base,
        a->size, a->how);
    print_backtrace(a->bt_alloc);
    say("  freed by %s at:", a->freed_how);
    print_backtrace(a->bt_free);
}

/* The freed allocation value points into, if it is not live; table_lock held. */
static struct alloc *dead_target(uintptr_t value)
{
    if (freed.n == 0 || value < freed.v[0].base || find_in(&live, value))
        return NULL;
    return find_in(&freed, value);
}

int ag_alloc_check_args(const unsigned char *args, size_t len, ag_describe_fn describe,
                        const void *subject)
{
    int dead = 0;
    pthread_mutex_lock(&table_lock);
    for (size_t off = 0; off + 8 <= len; off += 8) {
        uint64_t value;
        struct alloc *a;
        memcpy(&value, args + off, 8);
        if ((a = dead_target((uintptr_t)value)) == NULL)
            continue;
        dead++;
        stats.dead_pointers++;
        if (!a->reported || ag_liveness == AG_LIVENESS_ERROR)
            report(a, (uintptr_t)value, off, describe, subject);
        a->reported = 1;
    }
    pthread_mutex_unlock(&table_lock);
    if (dead && ag_liveness == AG_LIVENESS_ERROR) {
        say("AUTOGRAPH_CHECK_LIVENESS=error: stopping the program with exit status %d",
            AG_EXIT_DEAD_POINTER);
        _exit(AG_EXIT_DEAD_POINTER);
    }
    return dead;
}
