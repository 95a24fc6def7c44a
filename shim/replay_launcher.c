/* replay_launcher.c -- replay: chunk launches on the shim's own thread.
 *
 * A chunk's launch (patching its executable to this replay's args, the graph launch,
 * the stream joins) is a few driver calls, costly to a Python program's thread with
 * the caches cold, several times a training step.  With
 * AUTOGRAPH_LAUNCH_THREAD=1 a replay hands the prepared launch (replay_chunk.c:
 * variant picked under the engine lock) to one launcher thread and returns to the
 * program at once; the launcher patches and launches while the program goes on.
 * Only for paced windows (build_template.c: the program spends more than
 * AUTOGRAPH_CHUNK_SLOW_US of its own between its calls): there the launch is done
 * long before the next chunk's ops are in.  A tight loop (a C program, under a
 * microsecond between launches) would wait for it at the next hand-off and pay the
 * hand-off on top: tiny kernels run slower through the launcher.  By default (auto)
 * only while one thread of the program has offered work: where several do (PyTorch's
 * backward runs on its autograd thread) the chunks are launched by the thread whose
 * op ends them, in fewer chunks (build_tune.c), which measured faster for training
 * loops with mixed precision (docs/benchmarks.md).
 *
 * Order is kept by two rules, so the driver sees the calls it would see without the
 * thread, in the same order, some of them from another thread:
 *   - one launch at a time: a hand-off first collects the one before;
 *   - before anything else of the engine (every ag_engine_lock; not the replay's
 *     fast path, nor an op that the replay holds as its next (engine.c:
 *     replay_may_hold), nor the destroy of an event that only the launch out names,
 *     which is held until it is collected: replay_events.c) and before any other
 *     call of the program reaches the driver (ag_launch_settle, engine.h, where the
 *     stream joins are settled), the launch handed off is collected: done by the
 *     launcher, or, when the launcher has not started it yet, taken back and done
 *     by the thread that needs it.
 * While a launch is out, only its own data is touched: its variant's args and
 * executable, the pending args of its chunk (a replay writes the next chunk's
 * elsewhere; a new replay starts under the lock, after a collect), its counters (the
 * summary gets them when it is collected).  Collecting also makes the event destroys
 * held for its ops (replay_events.c); a launch that failed has its ops issued eagerly
 * from the window, in order, and the replay and the graph end as after any failed
 * launch.  A chunk on a per-thread default stream is launched inline: that stream is
 * the calling thread's.  So is a chunk that ends with a collective: it is launched
 * before the collective's call returns (build_collective.c).  So is every chunk when
 * the thread cannot be started.
 * The launcher never takes the engine lock.  It waits on a futex word (the launch's
 * state); the program's thread wakes it only when it sleeps.
 * Each engine (one per context: engine_table.c) has its own launcher thread and state,
 * started at its first hand-off, whose context is that engine's: a launch of one
 * device never waits for another's.  The rules above hold per engine; a call of the
 * program is ordered after the launch of its own thread's engine (ag_launch_settle),
 * and after another engine's where it depends on that engine's work, at the flush
 * point that ends that engine's window (engine_scope.c).
 */
#include "config.h"
#include "engine_internal.h"
#include "log.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { IDLE = AG_LAUNCH_IDLE, QUEUED = AG_LAUNCH_QUEUED, RUNNING = AG_LAUNCH_RUNNING,
       DONE = AG_LAUNCH_DONE };
#define SPINS 4000                    /* a waiter's tries before it sleeps */
#define SPIN_MIN_CPUS 4               /* the launcher waits awake only with this many */

/* Outside ag_eng: every held launch reads it (ag_launch_settle), in the AG_HOT line:
 * the engines whose launch is out (not IDLE). */
AG_HOT int ag_launch_state;

/* ag_eng's state, sequentially consistent: a sleeper's flag and the state are each
 * stored before the other is read (a wake-up is never missed). */
static int load(void)
{
    return __atomic_load_n(&ag_eng.launcher.state, __ATOMIC_SEQ_CST);
}

static void store(int state)
{
    int was = __atomic_exchange_n(&ag_eng.launcher.state, state, __ATOMIC_SEQ_CST);
    if ((was == IDLE) != (state == IDLE))
        __atomic_add_fetch(&ag_launch_state, state == IDLE ? -1 : 1, __ATOMIC_SEQ_CST);
}

/* from -> to (neither IDLE); else *seen gets the state. */
static int cas(int from, int to, int *seen)
{
    *seen = from;
    return __atomic_compare_exchange_n(&ag_eng.launcher.state, seen, to, 0,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

static void futex_wait(int expected)
{
    syscall(SYS_futex, &ag_eng.launcher.state, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(void)
{
    syscall(SYS_futex, &ag_eng.launcher.state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* On the launcher: the context of the launch current first (its thread has none). */
static void fire_on_launcher(struct ag_launch *job)
{
    uintptr_t ctx = job->t->ctx;
    if (ctx != ag_eng.launcher.ctx) {
        int rc = ag_eng.be->use_context(ctx);
        if (rc != 0) {
            job->rc = rc;
            return;
        }
        ag_eng.launcher.ctx = ctx;
    }
    ag_chunk_fire(job);
}

/* Waiting awake in naps of AUTOGRAPH_LAUNCH_POLL_US: a look at the state after each,
 * which keeps no CPU busy (a busy one may slow the program's own, as a sibling of its
 * core or by the power they share), while the program's thread, seeing the launcher
 * awake, still makes no wake-up call.  The thread's timer slack is cut to a
 * microsecond (launcher_main) so that a nap is about as long as asked. */
static void wait_napping(double until)
{
    struct timespec nap = { 0, ag_eng.p.launch_poll_ns };
    while (load() != QUEUED && ag_now_us() < until)
        nanosleep(&nap, NULL);
}

/* After a launch, the launcher waits awake up to AUTOGRAPH_LAUNCH_SPIN_US for the
 * next one, as CUDA's own synchronize spins while there are more CPUs than contexts:
 * a sleeping thread takes tens of microseconds to wake, often longer than the
 * program takes to reach its next call, which then takes the launch back, and the
 * program's thread pays the wake-up call.  Spinning only when the process may run on
 * SPIN_MIN_CPUS CPUs or more (a Python program's own thread, PyTorch's autograd
 * thread, the launcher and one to spare); it yields now and then, should its CPU be
 * wanted.  With AUTOGRAPH_LAUNCH_POLL_US it naps instead, whatever the CPUs. */
static void wait_awake(void)
{
    double until;
    if (ag_eng.p.launch_spin_ns <= 0)
        return;
    until = ag_now_us() + ag_eng.p.launch_spin_ns / 1e3;
    if (ag_eng.p.launch_poll_ns > 0) {
        wait_napping(until);
        return;
    }
    if (!ag_eng.launcher.may_spin)
        return;
    for (unsigned k = 1; load() != QUEUED; k++) {
        if (k % 256 == 0) {
            if (ag_now_us() >= until)
                return;
            sched_yield();
        }
        cpu_relax();
    }
}

static void *launcher_main(void *engine)
{
    ag_thread_hot.eng = engine;      /* this thread's engine for good */
    if (ag_eng.p.launch_poll_ns > 0)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);   /* naps as long as asked */
    for (;;) {
        int expected;
        if (cas(QUEUED, RUNNING, &expected)) {
            fire_on_launcher(&ag_eng.launcher.job);
            store(DONE);
            futex_wake();             /* a thread collecting it may sleep */
            wait_awake();
            continue;
        }
        __atomic_store_n(&ag_eng.launcher.sleeping, 1, __ATOMIC_SEQ_CST);
        if (load() != QUEUED)
            futex_wait(expected);
        __atomic_store_n(&ag_eng.launcher.sleeping, 0, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void forget_in_child(void)
{
    int n = ag_engines_count();
    for (int i = 0; i < n; i++) {    /* the threads are the parent's */
        struct ag_engine *e = ag_engine_at(i);
        e->launcher.started = 0;
        e->launcher.ctx = 0;
        e->launcher.state = IDLE;
    }
    ag_launch_state = 0;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_register(void)
{
    pthread_atfork(NULL, NULL, forget_in_child);
}

/* The launcher thread, started at the first hand-off, with every signal blocked (the
 * program's handlers run on the program's threads).  1 when it runs. */
static int launcher_ready(void)
{
    sigset_t all, old;
    cpu_set_t affinity;
    pthread_t thread;
    int rc;
    if (ag_eng.launcher.started)
        return ag_eng.launcher.started > 0;
    ag_eng.launcher.may_spin = sched_getaffinity(0, sizeof affinity, &affinity) == 0 &&
                        CPU_COUNT(&affinity) >= SPIN_MIN_CPUS;   /* before it starts */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&thread, NULL, launcher_main, &ag_eng);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        ag_log(AG_LOG_WARN, "the launcher thread could not be started (error %d): "
               "chunks are launched by the program's threads", rc);
        ag_eng.launcher.started = -1;
        return 0;
    }
    pthread_detach(thread);
    pthread_setname_np(thread, "autograph-launch");
    pthread_once(&atfork_once, atfork_register);  /* a child's: registered already */
    ag_eng.launcher.started = 1;
    return 1;
}

/* A launch taken back by the thread that handed it off: that thread ran in its
 * context then; with several engines it may have moved to another since. */
static void fire_taken_back(struct ag_launch *job)
{
    int token = 0, entered = ag_engines_count() > 1 && ag_eng.be->enter_context &&
                             ag_eng.be->enter_context(job->t->ctx, &token) == 0;
    ag_chunk_fire(job);
    if (entered)
        ag_eng.be->leave_context(token);
}

static int per_thread_stream(const struct ag_launch *job)
{
    for (int k = 0; k < job->c->nslots; k++)
        if (job->streams[k] == AG_STREAM_PER_THREAD)
            return 1;
    return 0;
}

/* Waits for the launch handed off to be done (taking it back if the launcher has not
 * started it), then counts it.  Engine lock held. */
void ag_launch_collect(void)
{
    struct ag_launch job;
    int state = load(), seen;
    if (state == IDLE)
        return;
    if (state == QUEUED && ag_eng.launcher.by_thread == ag_thread_id() &&
        cas(QUEUED, RUNNING, &seen)) {
        fire_taken_back(&ag_eng.launcher.job);
        ag_eng.s.launches_taken_back++;
    } else {
        double waited_from = load() != DONE ? ag_now_us() : 0;
        for (int spin = 0; (state = load()) != DONE; spin++)
            if (spin >= SPINS)
                futex_wait(state);
            else
                cpu_relax();
        if (waited_from)
            ag_eng.s.launch_wait_us += ag_now_us() - waited_from;
        ag_eng.s.launches_threaded++;
    }
    job = ag_eng.launcher.job;
    store(IDLE);
    if (ag_chunk_count(&job) != 0)
        ag_engine_launch_failed(&job);   /* the coordinator ends what it must */
    ag_events_release_held();        /* held for its ops: they went out */
}

/* Whether the launch handed off, if still out, names `event`: an op of its chunk
 * records or waits on it (the launcher reads none of the window).  Engine lock held. */
int ag_launch_names_event(uintptr_t event)
{
    if (load() == IDLE)
        return 0;
    for (size_t i = ag_eng.launcher.job.win_from; i < ag_eng.launcher.job.win_to; i++) {
        const struct ag_wop *o = &ag_eng.w.ops[i];
        if (ag_is_event_op(o->kind) && o->event == event)
            return 1;
    }
    return 0;
}

int ag_launch_pending(void)
{
    return __atomic_load_n(&ag_eng.launcher.state, __ATOMIC_RELAXED) != IDLE;
}

/* Whether paced chunks go to the launcher thread: the switch is on (auto: while only
 * one of the program's threads has offered work), the backend can make a context
 * current there, and the thread did not fail to start. */
int ag_launcher_available(void)
{
    int wanted = ag_eng.p.launch_thread == AG_LAUNCH_THREAD_ON ||
                 (ag_eng.p.launch_thread == AG_LAUNCH_THREAD_AUTO && ag_threads_seen() <= 1);
    return wanted && ag_eng.be->use_context != NULL && ag_eng.launcher.started >= 0;
}

/* Engine lock held.  The launch is handed to the launcher, or made here: then its
 * result (the caller issues its ops eagerly if it failed). */
int ag_launch_hand_off(const struct ag_launch *job)
{
    struct ag_launch inline_job;
    ag_launch_collect();
    if (!ag_launcher_available() || !job->t->paced || per_thread_stream(job) ||
        job->c->collective || !launcher_ready()) {
        inline_job = *job;
        ag_chunk_fire(&inline_job);
        return ag_chunk_count(&inline_job);
    }
    ag_eng.launcher.job = *job;
    ag_eng.launcher.by_thread = ag_thread_id();
    store(QUEUED);
    if (__atomic_load_n(&ag_eng.launcher.sleeping, __ATOMIC_SEQ_CST))
        futex_wake();
    return 0;
}
