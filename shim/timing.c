/* timing.c -- AUTOGRAPH_TIMING=FILE: the latency of every window, as the host saw it.
 *
 * Roles (derived from flush_points.c's policy, engine on or off):
 *   submit  every call that puts work on a stream: the recordable calls (kernel
 *           launches, async memsets and copies, event records, stream waits), the
 *           stream work the engine does not record (other launches and async copies,
 *           host functions, stream memory ops, prefetches, semaphores), the program's
 *           own graph launches (cuGraphLaunch*), and the synchronous memsets and
 *           device-to-device, array and peer copies (CUDA's "API synchronization
 *           behavior": they are asynchronous with respect to the host);
 *   sync    the host waited for the device: stream, event and context synchronize,
 *           and the synchronous copies to or from host memory (the generic cuMemcpy,
 *           2D and 3D ones, whose direction is not looked at, count as waits).
 * Queries do not end a window: the host did not wait.
 * Per thread a window opens at the first submit (the time it entered the shim) and
 * ends at the return of a sync; a sync with no window open records nothing, and a
 * window still open at exit is not written.  Each window becomes one record
 * (latency, submits, ns inside the driver's own functions of those calls, calls the
 * engine held back).  The counts are the process's, not the thread's: every submit
 * adds to one shared pool, and a window that ends takes what the pool holds, the
 * submits of every thread since the last window ended in any thread.  A thread that
 * submits but never waits (PyTorch's autograd thread launches the backward pass; the
 * main thread synchronizes) is counted in the window of the thread that waits; the
 * totals are exact (the three counts are taken one after the other, so a call racing
 * with a window's end may be split between two windows).  Records go to a buffer of
 * RECORDS under one lock, written to the file when it fills and at exit (after a
 * header; "# end windows N" closes it).  A
 * forked child starts with an empty buffer and writes its own file (it needs %p in
 * the name: without it the child writes nothing, the parent's file stays whole).
 */
#include "timing.h"

#include "config.h"
#include "flush_points.h"
#include "log.h"
#include "op.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RECORDS 256

_Atomic unsigned char ag_timing_role[AG_EP_COUNT];
AG_HOT int ag_timing_on;

struct window {                             /* this thread's window, while open */
    uint64_t start_ns;
    int open;
};
struct pool {                               /* what every thread submitted, not yet taken */
    _Atomic uint64_t launch_ns, shim_ns;
    _Atomic uint32_t submits, held;
};
struct record {                             /* a window ended: one line of the file */
    uint64_t latency_ns, launch_ns, shim_ns;
    uint32_t submits, held;
};

static AG_TLS struct window open_window;
static struct pool pool;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct record records[RECORDS];
static int record_count;
static unsigned long windows_written;       /* by this process */
static int fd = -1, done, mode_on;
static pid_t owner;                         /* the process that opened fd */
static char pattern[4096], path[4096];

/* ---- the file (everything under the lock) ---------------------------------------- */

static void write_all(const char *buf, size_t len)
{
    while (len > 0 && fd >= 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ag_log(AG_LOG_ERROR, "AUTOGRAPH_TIMING: writing %s failed (%s); timing stops",
                   path, strerror(errno));
            close(fd);
            fd = -1;
            done = 1;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

/* Creates this process's file: 0 on success; else one line, and timing stops. */
static int open_file(void)
{
    char line[128];
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    owner = getpid();
    if (fd < 0) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TIMING: cannot write %s (%s); no timing", path,
               strerror(errno));
        done = 1;
        return -1;
    }
    snprintf(line, sizeof line, "# libautograph timing v1 pid %ld mode %s\n", (long)owner,
             mode_on ? "on" : "off");
    write_all(line, strlen(line));
    return 0;
}

/* A forked child: its own file if the name has %p (else it keeps out of the parent's). */
static int own_file(void)
{
    char old[sizeof path];
    if (owner == getpid())
        return fd >= 0;
    if (fd >= 0)
        close(fd);
    fd = -1;
    memcpy(old, path, sizeof path);
    ag_expand_pid(path, sizeof path, pattern);
    if (strcmp(old, path) == 0) {
        done = 1;
        return 0;
    }
    return open_file() == 0;
}

static void write_records(void)
{
    char buf[8192];
    size_t used = 0;
    if (record_count == 0 || !own_file())
        return;
    for (int i = 0; i < record_count; i++) {
        const struct record *r = &records[i];
        used += (size_t)snprintf(buf + used, sizeof buf - used, "w %llu %u %llu %u %llu\n",
                                 (unsigned long long)r->latency_ns, r->submits,
                                 (unsigned long long)r->launch_ns, r->held,
                                 (unsigned long long)r->shim_ns);
        if (used > sizeof buf - 128) {
            write_all(buf, used);
            used = 0;
        }
    }
    write_all(buf, used);
    windows_written += (unsigned long)record_count;
    record_count = 0;
}

/* ---- windows ---------------------------------------------------------------------- */

static void end_window(uint64_t t_end)
{
    const struct window w = open_window;
    if (!w.open)
        return;
    open_window = (struct window){ 0 };
    pthread_mutex_lock(&lock);
    if (!done) {
        records[record_count++] = (struct record){
            .latency_ns = t_end > w.start_ns ? t_end - w.start_ns : 0,
            .launch_ns = atomic_exchange(&pool.launch_ns, 0),
            .submits = atomic_exchange(&pool.submits, 0),
            .held = atomic_exchange(&pool.held, 0),
            .shim_ns = atomic_exchange(&pool.shim_ns, 0),
        };
        if (record_count == RECORDS)
            write_records();
    }
    pthread_mutex_unlock(&lock);
}

static inline void count_submit(uint64_t t_in)
{
    if (!open_window.open) {
        open_window.open = 1;
        open_window.start_ns = t_in;
    }
    atomic_fetch_add_explicit(&pool.submits, 1, memory_order_relaxed);
}

void ag_timing_submit(int entry, uint64_t t_in, uint64_t t_call, uint64_t t_ret)
{
    if (ag_timing_role[entry] == AG_TIMING_SYNC)
        return;                 /* the window ends at ag_timing_shim_since */
    count_submit(t_in);
    atomic_fetch_add_explicit(&pool.launch_ns, t_ret - t_call, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool.shim_ns, t_call - t_in, memory_order_relaxed);
}

void ag_timing_shim_since(int entry, uint64_t t_ret)
{
    if (ag_timing_role[entry] == AG_TIMING_SYNC) {
        end_window(t_ret);
        return;
    }
    atomic_fetch_add_explicit(&pool.shim_ns, ag_timing_now() - t_ret, memory_order_relaxed);
}

void ag_timing_held(int entry, uint64_t t_in)
{
    if (ag_timing_role[entry] == AG_TIMING_SYNC) {
        end_window(ag_timing_now());
        return;
    }
    count_submit(t_in);
    atomic_fetch_add_explicit(&pool.held, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool.shim_ns, ag_timing_now() - t_in, memory_order_relaxed);
}

void ag_timing_call(int entry, uint64_t t_call, uint64_t t_ret)
{
    if (ag_timing_role[entry] == AG_TIMING_SUBMIT)
        ag_timing_submit(entry, t_call, t_call, t_ret);
    else if (ag_timing_role[entry] == AG_TIMING_SYNC)
        end_window(t_ret);
}

/* ---- start, fork, exit ------------------------------------------------------------ */

/* A synchronous copy or memset: does the host wait for it? */
static enum ag_timing_role sync_copy_role(const char *name)
{
    static const char *const enqueue_only[] = { "Memset", "Peer", "AtoA", "AtoD", "DtoA",
                                                "DtoD" };
    for (size_t i = 0; i < sizeof enqueue_only / sizeof enqueue_only[0]; i++)
        if (strstr(name, enqueue_only[i]))
            return AG_TIMING_SUBMIT;
    return AG_TIMING_SYNC;
}

static enum ag_timing_role role_of(int entry)
{
    switch (ag_flush_policy(entry) & AG_POLICY_REASON_MASK) {
    case AG_FLUSH_SYNC:
        return AG_TIMING_SYNC;
    case AG_FLUSH_SYNC_COPY:
        return sync_copy_role(ag_entry_name[entry]);
    case AG_FLUSH_UNRECORDED:
    case AG_FLUSH_HOSTFN:
    case AG_FLUSH_STREAM_MEMOP:
        return AG_TIMING_SUBMIT;
    case AG_FLUSH_GRAPH:
        return strstr(ag_entry_name[entry], "Launch") ? AG_TIMING_SUBMIT : AG_TIMING_NONE;
    default:
        return AG_TIMING_NONE;
    }
}

static void before_fork(void)
{
    pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child: the records and the open window are the parent's. */
static void after_fork_child(void)
{
    record_count = 0;
    windows_written = 0;
    open_window = (struct window){ 0 };
    atomic_store(&pool.launch_ns, 0);
    atomic_store(&pool.submits, 0);
    atomic_store(&pool.held, 0);
    atomic_store(&pool.shim_ns, 0);
    pthread_mutex_unlock(&lock);
}

void ag_timing_start(const char *file_pattern, int engine_on)
{
    int ok;
    if (file_pattern == NULL)
        return;
    if (strlen(file_pattern) >= sizeof pattern) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TIMING: file name longer than %zu bytes; no timing",
               sizeof pattern - 1);
        return;
    }
    pthread_mutex_lock(&lock);
    strcpy(pattern, file_pattern);
    ag_expand_pid(path, sizeof path, pattern);
    mode_on = engine_on;
    ok = open_file() == 0;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return;
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    for (int id = 0; id < AG_EP_COUNT; id++)
        ag_timing_role[id] = (unsigned char)role_of(id);
    __atomic_store_n(&ag_timing_on, 1, __ATOMIC_RELEASE);
}

/* At exit: the buffered records, then the closing line.  Windows that end later (in
 * other destructors, other threads) are not written. */
__attribute__((destructor)) static void timing_finish(void)
{
    char line[64];
    pthread_mutex_lock(&lock);
    if (!done)
        write_records();           /* a forked child opens its file only if it has some */
    if (!done && fd >= 0 && owner == getpid()) {
        snprintf(line, sizeof line, "# end windows %lu\n", windows_written);
        write_all(line, strlen(line));
        close(fd);
        fd = -1;
    }
    done = 1;
    pthread_mutex_unlock(&lock);
}
