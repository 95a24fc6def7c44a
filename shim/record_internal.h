/* record_internal.h -- what the recorders (record_ops.c, record_kernel.c) share: the
 * per-thread scratch buffer, stream keys, the calling thread's current context and
 * an op's start and finish.  Inline where a held launch's fast path reads them.
 */
#ifndef AG_RECORD_INTERNAL_H
#define AG_RECORD_INTERNAL_H

#include "record_ops.h"

#include <stdatomic.h>
#include <string.h>

/* The calling thread's scratch buffer, at least `bytes` long (grown as needed, freed
 * when the thread exits), or NULL. */
unsigned char *ag_rec_scratch(size_t bytes);

/* A stream handle's key: AG_STREAM_LEGACY or AG_STREAM_PER_THREAD for the special
 * handles and, for NULL, what NULL means at `entry` (ag_rec_null_stream_key). */
uintptr_t ag_rec_null_stream_key(int entry);
static inline uintptr_t ag_rec_stream_key(CUstream s, int entry)
{
    if (s == NULL)
        return ag_rec_null_stream_key(entry);
    if (s == CU_STREAM_LEGACY)
        return AG_STREAM_LEGACY;
    if (s == CU_STREAM_PER_THREAD)
        return AG_STREAM_PER_THREAD;
    return (uintptr_t)s;
}

/* The calling thread's current context: its per-thread copy while the generation
 * (ag_record_context_may_change) is the one it was asked at, else asked of the driver
 * (ag_rec_context_ask).  The generation is in the AG_HOT line (op.h). */
extern _Atomic unsigned ag_rec_context_generation;
uintptr_t ag_rec_context_ask(unsigned gen);
static inline uintptr_t ag_rec_context(void)
{
    unsigned gen = atomic_load_explicit(&ag_rec_context_generation, memory_order_acquire);
    struct ag_thread_hot *th = &ag_thread_hot;
    if (th->known_generation == gen && gen != 0)   /* 0: a new thread's, or wrapped round */
        return th->known_context;
    return ag_rec_context_ask(gen);
}

static inline void ag_rec_op_init(struct ag_op *op, int kind, int entry, CUstream stream)
{
    memset(op, 0, sizeof *op);
    op->kind = (unsigned char)kind;
    op->entry = (unsigned short)entry;
    op->stream = ag_rec_stream_key(stream, entry);
    op->light = (unsigned char)ag_record_light;
    op->ctx = ag_rec_context();      /* light too: it picks the op's engine */
}

static inline int ag_rec_reject(struct ag_op *op, const char *why)
{
    op->reject = why;
    op->hash = (uint64_t)op->entry;
    return 0;
}

/* An op's identity: its kind, entry point and shape bytes. */
static inline uint64_t ag_rec_shape_hash(int kind, int entry, const void *shape,
                                         size_t shape_len)
{
    return ag_hash_bytes(ag_hash_mix((uint64_t)kind, (uint64_t)entry), shape, shape_len);
}

static inline uint64_t ag_rec_op_hash(const struct ag_op *op, const unsigned char *shape,
                                      uint32_t shape_len)
{
    return ag_rec_shape_hash(op->kind, op->entry, shape, shape_len);
}

static inline void ag_rec_op_finish(struct ag_op *op, unsigned char *buf, uint32_t shape_len,
                                    uint32_t args_len)
{
    op->shape = buf;
    op->shape_len = shape_len;
    op->args = buf + shape_len;
    op->args_len = args_len;
    op->hash = ag_rec_op_hash(op, buf, shape_len);
    op->skim = op->hash;
}

#endif
