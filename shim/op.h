/* op.h -- one unit of recorded device work, as the engine sees it.
 *
 * The interception layer (record_ops.c and record_kernel.c, which know CUDA) turns
 * every call it can defer into a struct ag_op: what kind of work it is, the stream it
 * goes to, its identity bytes ("shape": function, grid, block, sizes, ...) and its
 * parameter bytes ("args": kernel arguments, copy and memset addresses, the event of
 * a record or wait).  The engine compares shapes to find repeats and args to decide
 * what to patch; it never looks inside either.
 * No CUDA types here: the engine and its unit tests include this header.
 */
#ifndef AG_OP_H
#define AG_OP_H

#include <stddef.h>
#include <stdint.h>

enum ag_op_kind {
    AG_OP_KERNEL,          /* cuLaunchKernel(Ex): graph kernel node */
    AG_OP_MEMSET,          /* cuMemsetD{8,16,32}Async: memset node */
    AG_OP_MEMCPY,          /* async copy between device and pinned memory: memcpy node */
    AG_OP_EVENT_RECORD,    /* cuEventRecord: a cross-stream edge source + event record node */
    AG_OP_EVENT_WAIT,      /* cuStreamWaitEvent: a cross-stream edge, or an external wait */
    AG_OP_HOST_FUNC,       /* cuLaunchHostFunc: host node; never held past its own call */
    AG_OP_KIND_COUNT
};

/* An event record or wait: its args are the program's event handle (8 bytes). */
static inline int ag_is_event_op(int kind)
{
    return kind == AG_OP_EVENT_RECORD || kind == AG_OP_EVENT_WAIT;
}

/* A kernel op's shape begins with its function (this many bytes), which its args
 * carry too: a replay may take a launch of another function for a template's kernel,
 * and patch it, when the rest of the shape (parameter layout, attributes) and the
 * entry point are the same (match_replay.c). */
#define AG_KERNEL_FUNC_BYTES 8

/* Stream keys: the stream handle, except for the two special streams. */
#define AG_STREAM_LEGACY     ((uintptr_t)1)   /* NULL on a legacy entry, CU_STREAM_LEGACY */
#define AG_STREAM_PER_THREAD ((uintptr_t)2)   /* NULL on a _ptsz entry, CU_STREAM_PER_THREAD */

/* Link of an EVENT_WAIT when a graph is built (see backend.h). */
#define AG_LINK_EXTERNAL (-1)  /* the event's record is not in this graph: external wait */
#define AG_LINK_IMPLIED  (-2)  /* recorded in an earlier chunk, on its stream: nothing to wait for */

/* An op's identity, as the three forms of an op keep it: the op a recorder fills
 * (struct ag_op), an op of the window (struct ag_wop) and an op of a template
 * (struct ag_top, engine_internal.h).  Each embeds it as `id` and copies it by
 * assignment; the same fields are also members of an anonymous struct beside it
 * (AG_OP_ID), so that op->hash and op->id.hash name the same bytes.  No padding: with
 * a template op's key and offsets it fills one cache line. */
#define AG_OP_ID_FIELDS \
    uint64_t hash;               /* of kind, entry and shape */ \
    uintptr_t stream;            /* stream key */ \
    uintptr_t event;             /* EVENT_*: the program's event */ \
    const void *layout;          /* KERNEL: the backend's parameter layout of the function */ \
    uint32_t shape_len, args_len; \
    int link;                    /* EVENT_WAIT at build: index of its record op, or \
                                  * AG_LINK_* (a window op's is unused: link_back) */ \
    unsigned short entry;        /* AG_EP_ id of the entry point the program called */ \
    unsigned char kind;          /* enum ag_op_kind */ \
    unsigned char slot;          /* stream slot (window's or graph's, set by the engine) */
struct ag_op_id { AG_OP_ID_FIELDS };
#define AG_OP_ID union { struct ag_op_id id; struct { AG_OP_ID_FIELDS }; }

struct ag_op {
    AG_OP_ID;
    uintptr_t ctx;               /* context current at the call */
    const unsigned char *shape;  /* identity bytes: compared exactly */
    const unsigned char *args;   /* parameter bytes: patched when they change */
    uint64_t skim;               /* the op's word in a skim fingerprint (record_skim.c):
                                  * the hash, or for a kernel launch the cheaper word
                                  * skimming folds for it */
    const char *reject;          /* set by a recorder that cannot record this call */
    unsigned char light;         /* recorded light: identity only, no args */
};
_Static_assert(sizeof(struct ag_op_id) == sizeof(uint64_t) + 3 * sizeof(uintptr_t) + 16,
               "struct ag_op_id has no padding");

/* Thread-local storage of the shim: initial-exec, as the library is preloaded (the
 * general-dynamic default costs a __tls_get_addr call on every access). */
#define AG_TLS __thread __attribute__((tls_model("initial-exec")))

/* The flags every held launch reads, wherever they are defined, placed side by side
 * in one section of their own (the linker gathers the input sections of one name):
 * a program whose caches are cold between launches (Python) then misses one cache
 * line for them instead of one each (alloc_table.c starts the section on a line). */
#define AG_HOT __attribute__((section("ag_hot")))

/* A held launch's code, likewise: a helper the compiler would call out of line is
 * another instruction line a cold launch misses (AG_INLINE), and code that nearly no
 * held launch runs is kept off its lines (AG_COLD). */
#define AG_INLINE inline __attribute__((always_inline))
#define AG_COLD __attribute__((noinline, cold))

/* The same for the per-thread state a held launch reads: one struct, one line, where
 * thread-local variables of several files took a line each (their order in the TLS
 * block follows the link order of the files).  Defined in engine.c. */
struct ag_learnt;
struct ag_engine;
struct ag_thread_hot {
    struct ag_engine *eng;       /* the thread's engine (engine_internal.h: ag_eng) */
    uintptr_t eng_ctx;           /* the context it is the engine of (0: not asked) */
    int hook_depth;              /* > 0: in a hook, the engine steps aside (engine_hooks.c) */
    unsigned thread_id;          /* 1, 2, ... in the order threads first called (engine.c) */
    unsigned known_generation;   /* the context generation known_context was asked */
    int light_queued;            /* light ops in this thread's queue (record_light.c) */
    uintptr_t known_context;     /* in, and the current context then (record_ops.c) */
    struct ag_learnt *learnt;    /* the runtime calls learnt (intercept_cudart.c) */
    unsigned skim_ops, skim_kernels;  /* this thread's skimmed ops not counted in yet
                                       * (record_skim.c) */
};
_Static_assert(sizeof(struct ag_thread_hot) <= 64, "the thread's hot state fills one line");
extern AG_TLS struct ag_thread_hot ag_thread_hot;

/* A fast 64-bit hash of bytes, and a combiner (not cryptographic). */
static inline uint64_t ag_hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static inline uint64_t ag_rotl(uint64_t v, int r)
{
    return (v << r) | (v >> (64 - r));
}

/* Four independent multiply lanes (one per 8-byte word, round robin) so that the
 * words of a shape hash in parallel, one mix at the end. */
static inline uint64_t ag_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    const uint64_t m = 0x9fb21c651e98df25ull;
    uint64_t lane[4] = { h, h ^ 0x6a09e667f3bcc909ull, h + 0xbb67ae8584caa73bull,
                         ~h };
    int i = 0;
    while (len >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        lane[i] = (lane[i] ^ v) * m;
        i = (i + 1) & 3;
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t v = 0;
        __builtin_memcpy(&v, p, len);
        lane[i] = (lane[i] ^ v ^ ((uint64_t)len << 56)) * m;
    }
    return ag_hash_mix(lane[0] ^ ag_rotl(lane[1], 17) ^ ag_rotl(lane[2], 31) ^
                           ag_rotl(lane[3], 47), h);
}

#endif
