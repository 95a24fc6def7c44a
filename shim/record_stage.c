/* record_stage.c -- record: the pinned staging ring of copies to and from pageable host
 * memory and of the synchronous copies (record_stage.h says what the driver's rules
 * are and how the shim keeps them).
 *
 * One ring of pinned memory (registered, portable), allocated at the first staged
 * copy, serves the process's first context that stages.  Slots are taken in order at
 * the head and given back in order at the tail: a slot is free once it is DONE (its
 * copy went to the driver with the program's own pointers, or its wait is over), or
 * FENCED and the GPU has passed its fence.  A slot whose copy is held is PENDING until
 * the next flush point after the engine issued it (ag_stage_fence): then an event is
 * recorded on the copy's stream, one event per stream and fence.  A slot stays
 * RECORDING from the recorder to the end of the offer, so that another thread's flush
 * point never fences a copy not yet issued; a per-thread default stream's slot is
 * fenced by its own thread only.  All of it under one mutex; none of it on the path of
 * a call that stages nothing.
 */
#include "record_stage.h"

#include "driver.h"
#include "fault_inject.h"
#include "log.h"
#include "record_ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 1024
#define ALIGN 64
#define FENCE_STREAMS 8

enum { SLOT_RECORDING, SLOT_PENDING, SLOT_FENCED, SLOT_DONE };

struct fence {
    CUevent event;
    int refs, passed;
    struct fence *next;          /* free list */
};

struct slot {
    size_t off, len;
    uintptr_t stream;
    const void *thread;          /* the staging thread's tag (per-thread streams) */
    struct fence *fence;
    int state;
};

AG_TLS struct ag_stage_call ag_stage_call = { .slot = -1 };
AG_TLS int ag_stage_fence_wanted;
static AG_TLS char thread_tag;   /* its address tells threads apart */

static struct {
    pthread_mutex_t lock;
    size_t cap;                  /* bytes (0: staging off) */
    int ready;                   /* 1: allocated, -1: the driver refused */
    unsigned char *base;
    uintptr_t ctx;
    size_t head;
    struct slot q[SLOTS];
    unsigned first, count;
    unsigned pending;            /* slots PENDING: a flush point with none fences nothing */
    struct fence *free_fences;
    unsigned long staged_in, staged_out, refused;
} ring = { .lock = PTHREAD_MUTEX_INITIALIZER };

void ag_stage_setup(int megabytes)
{
    ring.cap = (size_t)megabytes << 20;
}

/* ---- fences ------------------------------------------------------------------------ */

static struct fence *fence_get(void)
{
    DRIVER_FN(create, cuEventCreate);
    struct fence *f = ring.free_fences;
    if (f) {
        ring.free_fences = f->next;
    } else {
        CUevent e;
        if (create == NULL || create(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
            return NULL;
        if ((f = calloc(1, sizeof *f)) == NULL)
            return NULL;
        f->event = e;
    }
    f->refs = 0;
    f->passed = 0;
    return f;
}

static void fence_put(struct fence *f)
{
    if (f && --f->refs == 0) {
        f->next = ring.free_fences;
        ring.free_fences = f;
    }
}

static int fence_passed(struct fence *f)
{
    DRIVER_FN(query, cuEventQuery);
    if (!f->passed && query) {
        CUresult rc = query(f->event);
        /* an error other than "not ready" leaves nothing to wait for: the context is
         * gone or unusable, and the engine steps aside */
        f->passed = rc != CUDA_ERROR_NOT_READY;
    }
    return f->passed;
}

/* ---- the ring ---------------------------------------------------------------------- */

static void reclaim(void)
{
    while (ring.count) {
        struct slot *s = &ring.q[ring.first];
        if (s->state != SLOT_DONE && !(s->state == SLOT_FENCED && fence_passed(s->fence)))
            break;
        fence_put(s->fence);
        s->fence = NULL;
        ring.first = (ring.first + 1) % SLOTS;
        ring.count--;
    }
    if (ring.count == 0)
        ring.head = 0;
}

/* Offset of n free bytes at the head, or (size_t)-1.  The slots in use run from the
 * tail (the oldest slot's offset) to the head, wrapping round at the end. */
static size_t ring_space(size_t n)
{
    size_t tail;
    if (ring.count == 0)
        return n <= ring.cap ? 0 : (size_t)-1;
    tail = ring.q[ring.first].off;
    if (ring.count == SLOTS || ring.head == tail)
        return (size_t)-1;
    if (ring.head > tail) {
        if (ring.cap - ring.head >= n)
            return ring.head;
        return n <= tail ? 0 : (size_t)-1;
    }
    return tail - ring.head >= n ? ring.head : (size_t)-1;
}

/* The ring's memory: page-aligned host memory the shim registers with the driver
 * (portable), rather than cuMemHostAlloc: registered memory is the process's own, so a
 * tool comparing two runs' device allocations sees the same ones with the shim. */
static void *ring_memory(const char **why)
{
    DRIVER_FN(host_register, cuMemHostRegister);
    void *p = NULL;
    int rc = ag_fault_check("cuMemHostRegister");
    if (rc == 0 && posix_memalign(&p, 4096, ring.cap) != 0)
        rc = -1, p = NULL;
    if (rc == 0)
        rc = host_register ? (int)host_register(p, ring.cap, CU_MEMHOSTREGISTER_PORTABLE) : -1;
    if (rc == 0)
        return p;
    free(p);
    ag_log(AG_LOG_WARN, "pinning %zu bytes of staging failed (%d): copies to and from "
           "pageable memory go to the driver at their call", ring.cap, rc);
    *why = "no pinned staging memory (the driver refused it)";
    return NULL;
}

static int ring_ready(uintptr_t ctx, const char **why)
{
    void *p;
    if (ring.ready > 0)
        return ring.ctx == ctx ? 1 : (*why = "staging serves another context", 0);
    if (ring.ready < 0)
        return *why = "no pinned staging memory (the driver refused it)", 0;
    if ((p = ring_memory(why)) == NULL) {
        __atomic_store_n(&ring.ready, -1, __ATOMIC_RELEASE);
        return 0;
    }
    ring.base = p;
    ring.ctx = ctx;
    __atomic_store_n(&ring.ready, 1, __ATOMIC_RELEASE);
    return 1;
}

/* A RECORDING slot of n bytes for the calling thread's call: its index, or -1. */
static int slot_take(size_t n, uintptr_t stream, uintptr_t ctx, const char **why)
{
    size_t len = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1), off;
    int index;
    if (ring.cap == 0)
        return *why = "staging is off (AUTOGRAPH_STAGE_MB=0)", -1;
    if (n == 0 || len > ring.cap / 4)
        return *why = "a copy larger than a quarter of the staging ring", -1;
    if (!ring_ready(ctx, why))
        return -1;
    reclaim();
    off = ring_space(len);
    if (off == (size_t)-1) {
        ag_stage_fence_wanted = 1;
        return *why = "the staging ring is full (its copies have not run yet)", -1;
    }
    index = (int)((ring.first + ring.count) % SLOTS);
    ring.q[index] = (struct slot){ .off = off, .len = len, .stream = stream,
                                   .thread = &thread_tag, .state = SLOT_RECORDING };
    ring.count++;
    ring.head = off + len;
    return index;
}

static uintptr_t stage(const void *src, void *dst, size_t n, uintptr_t stream, uintptr_t ctx,
                       const char **why)
{
    struct ag_stage_call *c = &ag_stage_call;
    unsigned char *p;
    int index;
    pthread_mutex_lock(&ring.lock);
    index = slot_take(n, stream, ctx, why);
    if (index < 0) {
        ring.refused++;
        pthread_mutex_unlock(&ring.lock);
        return 0;
    }
    p = ring.base + ring.q[index].off;
    pthread_mutex_unlock(&ring.lock);
    if (src)
        memcpy(p, src, n);
    *c = (struct ag_stage_call){ .owed = 1, .slot = index, .wait = dst != NULL,
                                 .stream = stream, .user_dst = dst, .bytes = n };
    return (uintptr_t)p;
}

uintptr_t ag_stage_in(const void *src, size_t n, uintptr_t stream, uintptr_t ctx,
                      const char **why)
{
    return stage(src, NULL, n, stream, ctx, why);
}

uintptr_t ag_stage_out(void *dst, size_t n, uintptr_t stream, uintptr_t ctx,
                       const char **why)
{
    return stage(NULL, dst, n, stream, ctx, why);
}

void ag_stage_owe_wait(uintptr_t stream)
{
    ag_stage_call = (struct ag_stage_call){ .owed = 1, .slot = -1, .wait = 1,
                                            .stream = stream };
}

/* A slot's state, and the count of PENDING ones (read unlocked by ag_stage_fence: the
 * calling thread sees its own slots' changes). */
static void slot_state_locked(struct slot *s, int state)
{
    int was = s->state;
    s->state = state;
    if (was != state && (was == SLOT_PENDING || state == SLOT_PENDING))
        __atomic_store_n(&ring.pending, ring.pending + (state == SLOT_PENDING ? 1u : -1u),
                         __ATOMIC_RELEASE);
}

static void slot_set(int index, int state)
{
    pthread_mutex_lock(&ring.lock);
    slot_state_locked(&ring.q[index], state);
    pthread_mutex_unlock(&ring.lock);
}

int ag_stage_offered(int held)
{
    struct ag_stage_call *c = &ag_stage_call;
    if (held && c->wait)
        return 1;
    if (c->slot >= 0) {
        slot_set(c->slot, held ? SLOT_PENDING : SLOT_DONE);
        if (held)
            __atomic_add_fetch(&ring.staged_in, 1, __ATOMIC_RELAXED);
    }
    *c = (struct ag_stage_call){ .slot = -1 };
    return 0;
}

void ag_stage_finish(int done)
{
    struct ag_stage_call *c = &ag_stage_call;
    if (c->slot >= 0) {
        if (done && c->user_dst)
            memcpy(c->user_dst, ring.base + ring.q[c->slot].off, c->bytes);
        slot_set(c->slot, SLOT_DONE);
        __atomic_add_fetch(&ring.staged_out, 1, __ATOMIC_RELAXED);
    }
    *c = (struct ag_stage_call){ .slot = -1 };
}

/* ---- fencing at flush points --------------------------------------------------------- */

struct stream_fence { uintptr_t stream; struct fence *f; };

/* The fence of `stream` in this round, recorded now when it is the first. */
static struct fence *fence_for(struct stream_fence *sf, int *n, uintptr_t stream)
{
    DRIVER_FN(record, cuEventRecord);
    struct fence *f;
    for (int i = 0; i < *n; i++)
        if (sf[i].stream == stream)
            return sf[i].f;
    if (*n == FENCE_STREAMS || record == NULL || (f = fence_get()) == NULL)
        return NULL;
    if (record(f->event, ag_stream_handle(stream)) != CUDA_SUCCESS) {
        f->refs = 1;
        fence_put(f);
        return NULL;
    }
    sf[(*n)++] = (struct stream_fence){ stream, f };
    return f;
}

void ag_stage_fence(void)
{
    struct stream_fence sf[FENCE_STREAMS];
    int n = 0;
    if (__atomic_load_n(&ring.ready, __ATOMIC_ACQUIRE) <= 0 ||
        __atomic_load_n(&ring.pending, __ATOMIC_ACQUIRE) == 0)
        return;                         /* every flush point passes here: kept cheap */
    pthread_mutex_lock(&ring.lock);
    if (ring.count && ag_record_current_context() == ring.ctx) {
        for (unsigned i = 0; i < ring.count; i++) {
            struct slot *s = &ring.q[(ring.first + i) % SLOTS];
            struct fence *f;
            if (s->state != SLOT_PENDING ||
                (s->stream == AG_STREAM_PER_THREAD && s->thread != &thread_tag))
                continue;
            if ((f = fence_for(sf, &n, s->stream)) == NULL)
                continue;
            f->refs++;
            s->fence = f;
            slot_state_locked(s, SLOT_FENCED);
        }
    }
    pthread_mutex_unlock(&ring.lock);
}

void ag_stage_summary(FILE *out, const char *prefix)
{
    fprintf(out, "%sstaged_in %lu\n", prefix, __atomic_load_n(&ring.staged_in, __ATOMIC_RELAXED));
    fprintf(out, "%sstaged_out %lu\n", prefix,
            __atomic_load_n(&ring.staged_out, __ATOMIC_RELAXED));
    fprintf(out, "%sstaging_refused %lu\n", prefix,
            __atomic_load_n(&ring.refused, __ATOMIC_RELAXED));
}
