/* engine_lock.h -- the engine's one lock (engine.c), taken on every recordable call.
 *
 * A futex word rather than a pthread mutex: uncontended, taking and giving it back is
 * one atomic instruction each and no call, where pthread_mutex_lock and _unlock add
 * calls and many instructions to a held launch (make bench-cold).  Contended,
 * a thread sleeps in the kernel as on a mutex (0 free, 1 taken, 2 taken with sleepers:
 * U. Drepper, "Futexes Are Tricky", mutex 3).  Not recursive.  Under ThreadSanitizer
 * it is a pthread mutex, which the sanitizer understands.
 */
#ifndef AG_ENGINE_LOCK_H
#define AG_ENGINE_LOCK_H

#if defined(__SANITIZE_THREAD__)
#define AG_LOCK_PTHREAD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AG_LOCK_PTHREAD 1
#endif
#endif

#ifdef AG_LOCK_PTHREAD
#include <pthread.h>

struct ag_lock { pthread_mutex_t m; };
#define AG_LOCK_INIT { PTHREAD_MUTEX_INITIALIZER }

static inline void ag_lock_take(struct ag_lock *l) { pthread_mutex_lock(&l->m); }
static inline void ag_lock_give(struct ag_lock *l) { pthread_mutex_unlock(&l->m); }

#else
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ag_lock { _Atomic int word; };
#define AG_LOCK_INIT { 0 }

static void ag_lock_wait(struct ag_lock *l)
{
    int c = atomic_exchange_explicit(&l->word, 2, memory_order_acquire);
    while (c != 0) {
        syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange_explicit(&l->word, 2, memory_order_acquire);
    }
}

static inline void ag_lock_take(struct ag_lock *l)
{
    int free_word = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->word, &free_word, 1,
                                                 memory_order_acquire, memory_order_relaxed))
        ag_lock_wait(l);
}

static inline void ag_lock_give(struct ag_lock *l)
{
    if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
        syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif

#endif
