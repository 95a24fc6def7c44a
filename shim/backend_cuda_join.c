/* backend_cuda_join.c -- build/replay: the stream joins around a chunk launch.
 *
 * A chunk that uses several of the program's streams is launched on the first of
 * them, the launch stream, after the others are joined into it (an event recorded
 * on each, waited for by the launch stream); each of the others must then wait for
 * the graph before any later work of its own: the fork back.  Each of those is a
 * driver call of several microseconds when the caches are cold, as between the ops
 * of a Python program, and most are redundant within a window:
 *   - a join is skipped when the launch stream is already after everything of that
 *     stream: it joined it before, no call other than a held op has reached the
 *     driver since (the epoch below did not move), and the launch stream is the same;
 *   - fork backs are owed, not issued at once.  ag_join_settle, called before every
 *     other call that reaches the driver (intercept_defer.c: a passthrough, an op
 *     the engine did not hold, a flush point, except a module call) and before the
 *     engine issues a held op eagerly (backend_cuda.c), issues them: one event
 *     recorded on the launch stream and one wait per stream owed.  So no work, sync
 *     or query of the program reaches a stream before the fork back would have, and
 *     a window that ends at a synchronize pays the fork back once, not per chunk.
 * A launch on another launch stream settles what the last one owed first.  Any
 * thread may settle: the state is kept under a mutex, one per context (each engine
 * launches its context's chunks: engine_table.c), and a settle issues what every
 * context owes (a call may reach any context's streams).
 * Calls the shim does not wrap at all (none are known: the summary's "door
 * unmapped" counts them) would bypass the settle.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "backend.h"
#include "backend_cuda.h"
#include "log.h"

#include <pthread.h>

struct join {
    pthread_mutex_t lock;
    CUcontext ctx;                 /* where the events live */
    CUevent event[AG_MAX_SLOTS];   /* [0]: the fork back's; [k]: slot k's join */
    CUstream from;                 /* the launch stream of the last launch */
    unsigned long epoch;           /* stream_epoch when `joined` was last true */
    CUstream joined[AG_MAX_SLOTS]; /* streams `from` is after, all of their work */
    int njoined;
    CUstream owed[AG_MAX_SLOTS];   /* streams owed a wait for `from` */
    int nowed;
};

#define JOINS 16                   /* contexts (as many as the engine's engines) */
static struct join joins[JOINS];
static int njoins;                 /* published after its entry is made */
static pthread_mutex_t joins_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned owed_any;          /* bit i: joins[i].nowed > 0, read without a lock */
static unsigned long stream_epoch; /* moves at every call that may add stream work */

/* ctx's join state (made on first use: create), or NULL. */
static struct join *join_of(CUcontext ctx, int create)
{
    struct join *jn = NULL;
    int n = __atomic_load_n(&njoins, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (joins[i].ctx == ctx)
            return &joins[i];
    if (!create)
        return NULL;
    pthread_mutex_lock(&joins_lock);
    for (int i = 0; i < njoins && jn == NULL; i++)
        if (joins[i].ctx == ctx)
            jn = &joins[i];
    if (jn == NULL && njoins < JOINS) {
        jn = &joins[njoins];
        pthread_mutex_init(&jn->lock, NULL);
        jn->ctx = ctx;
        __atomic_store_n(&njoins, njoins + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&joins_lock);
    return jn;
}

CUresult ag_join_prepare(CUcontext ctx)
{
    DRIVER(event_create, cuEventCreate);
    CUresult rc = CUDA_SUCCESS;
    struct join *jn = join_of(ctx, 1);
    if (jn == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&jn->lock);
    for (int s = 0; s < AG_MAX_SLOTS && rc == CUDA_SUCCESS; s++)
        if (jn->event[s] == NULL)
            rc = event_create(&jn->event[s], CU_EVENT_DISABLE_TIMING);
    pthread_mutex_unlock(&jn->lock);
    return rc;
}

static int listed(CUstream const *list, int n, CUstream s)
{
    for (int i = 0; i < n; i++)
        if (list[i] == s)
            return 1;
    return 0;
}

/* Orders `into` after `from`'s work so far, through event e. */
static CUresult order_after(CUstream into, CUstream from, CUevent e)
{
    DRIVER(record, cuEventRecord);
    DRIVER(wait, cuStreamWaitEvent);
    CUresult rc = record(e, from);
    return rc ? rc : wait(into, e, 0);
}

static CUresult fork_back(struct join *jn)
{
    DRIVER(record, cuEventRecord);
    DRIVER(wait, cuStreamWaitEvent);
    CUresult rc = record(jn->event[0], jn->from);
    for (int i = 0; i < jn->nowed && rc == CUDA_SUCCESS; i++)
        rc = wait(jn->owed[i], jn->event[0], 0);
    return rc;
}

static CUresult wait_for_launch_stream(struct join *jn)
{
    DRIVER(sync, cuStreamSynchronize);
    return sync(jn->from);
}

/* Issues the fork backs jn owes; with its lock held. */
static void settle_locked(struct join *jn)
{
    int pushed = 0;
    if (jn->nowed == 0)
        return;
    if (ag_cuda_enter_context(jn->ctx, &pushed) != CUDA_SUCCESS)
        ag_log(AG_LOG_WARN, "joining streams after a graph launch: its context cannot be "
               "made current; %d stream(s) not ordered after it", jn->nowed);
    else if (fork_back(jn) != CUDA_SUCCESS) {
        /* The graphs ran; the only safe order left is to wait for them. */
        ag_log(AG_LOG_WARN, "joining streams after a graph launch failed; synchronizing");
        wait_for_launch_stream(jn);
    }
    ag_cuda_leave_context(pushed);
    jn->nowed = 0;
    __atomic_and_fetch(&owed_any, ~(1u << (jn - joins)), __ATOMIC_RELEASE);
}

void ag_join_settle(int adds_work)
{
    unsigned owed = __atomic_load_n(&owed_any, __ATOMIC_ACQUIRE);
    while (owed) {
        struct join *jn = &joins[__builtin_ctz(owed)];
        owed &= owed - 1;
        pthread_mutex_lock(&jn->lock);
        settle_locked(jn);
        pthread_mutex_unlock(&jn->lock);
    }
    if (adds_work)
        __atomic_fetch_add(&stream_epoch, 1, __ATOMIC_RELAXED);
}

/* Joins streams[1..n) into streams[0] where it is not already after them. */
static CUresult join_into(struct join *jn, const CUstream *streams, int n)
{
    unsigned long epoch = __atomic_load_n(&stream_epoch, __ATOMIC_RELAXED);
    CUresult rc = CUDA_SUCCESS;
    if (jn->from != streams[0] || jn->epoch != epoch) {
        settle_locked(jn);           /* owed to another launch stream: first */
        jn->from = streams[0];
        jn->epoch = epoch;
        jn->njoined = 0;
    }
    for (int k = 1; k < n && rc == CUDA_SUCCESS; k++) {
        if (listed(jn->joined, jn->njoined, streams[k]))
            continue;
        rc = order_after(streams[0], streams[k], jn->event[k]);
        if (rc == CUDA_SUCCESS && jn->njoined < AG_MAX_SLOTS)
            jn->joined[jn->njoined++] = streams[k];   /* else: joined again next time */
    }
    return rc;
}

CUresult ag_join_launch(CUgraphExec exec, CUcontext ctx, const CUstream *streams, int n)
{
    DRIVER(launch, cuGraphLaunch);
    CUresult rc;
    struct join *jn = join_of(ctx, 0);
    if (jn == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;   /* no graph was built there */
    pthread_mutex_lock(&jn->lock);
    rc = join_into(jn, streams, n);
    if (rc == CUDA_SUCCESS)
        rc = launch(exec, streams[0]);
    for (int k = 1; k < n && rc == CUDA_SUCCESS; k++) {
        if (listed(jn->owed, jn->nowed, streams[k]))
            continue;
        if (jn->nowed == AG_MAX_SLOTS)
            settle_locked(jn);       /* full: pay what is owed now */
        jn->owed[jn->nowed++] = streams[k];
    }
    if (jn->nowed > 0)
        __atomic_or_fetch(&owed_any, 1u << (jn - joins), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&jn->lock);
    return rc;
}
