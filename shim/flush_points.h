/* flush_points.h -- which driver calls end a window, and why (the one place).
 *
 * A flush point is a call through which the host can observe or wait on device
 * work, or that the engine cannot hold back: before it runs, every held op is
 * issued and the current window ends.  flush_points.c derives the policy of every
 * entry point from its class in entry_points.def and its name; README.md lists the
 * result.  No CUDA types here.
 */
#ifndef AG_FLUSH_POINTS_H
#define AG_FLUSH_POINTS_H

enum ag_flush_reason {
    AG_FLUSH_NONE,
    AG_FLUSH_SYNC,          /* stream, event or context synchronize */
    AG_FLUSH_QUERY,         /* stream or event query, event elapsed time */
    AG_FLUSH_SYNC_COPY,     /* synchronous copy or memset */
    AG_FLUSH_UNRECORDED,    /* stream work the engine does not record */
    AG_FLUSH_HOSTFN,        /* host function or callback */
    AG_FLUSH_STREAM_MEMOP,  /* stream wait/write value, batch memory op */
    AG_FLUSH_ALLOC,         /* memory allocation or mapping */
    AG_FLUSH_FREE,          /* memory release */
    AG_FLUSH_MODULE,        /* module or library load/unload */
    AG_FLUSH_CAPTURE,       /* the program begins its own stream capture */
    AG_FLUSH_GRAPH,         /* the program launches or uploads its own graph */
    AG_FLUSH_LIFETIME,      /* a stream or event is destroyed */
    AG_FLUSH_CONTEXT,       /* a context is destroyed or reset, or work crosses contexts */
    AG_FLUSH_IPC,           /* IPC handles */
    AG_FLUSH_THREAD,        /* work from a second thread */
    AG_FLUSH_EXIT,          /* process exit */
    AG_FLUSH_API,           /* autograph_flush() (include/autograph.h) */
    AG_FLUSH_REASON_COUNT
};

/* Extra actions of a call, beside its flush reason. */
enum {
    AG_POLICY_REASON_MASK   = 0x1f,
    AG_POLICY_DROP_GRAPHS   = 0x20,  /* every graph may now be invalid (unload, ctx gone) */
    AG_POLICY_EVENT_GONE    = 0x40,  /* its first argument is an event being destroyed */
    AG_POLICY_CAPTURE_BEGIN = 0x80,  /* after the call: the program's capture began */
    AG_POLICY_CAPTURE_END   = 0x100, /* after the call: the program's capture ended */
    AG_POLICY_STREAM_GONE   = 0x200, /* its first argument is a stream being destroyed */
    AG_POLICY_FORGET_LAYOUTS = 0x400, /* function handles may be handed out again */
    AG_POLICY_UNLOAD        = 0x800, /* its first argument is a module or library being
                                      * unloaded: graphs with its kernels are dropped */
    /* The engines whose windows end (engine.c; the others' go on): none of these bits,
     * every engine's (one per context: engine_table.c). */
    AG_POLICY_SCOPE_STREAM  = 0x1000, /* its first argument is a stream: the engines
                                       * whose windows hold work on it */
    AG_POLICY_SCOPE_EVENT   = 0x2000, /* its first argument is an event: the engine
                                       * that records it (all when unknown) */
    AG_POLICY_SCOPE_CONTEXT = 0x4000, /* the engine of the context it synchronizes */
};

/* Policy of every entry point, by AG_EP_ id (filled by ag_flush_points_init).  Atomic:
 * the engine fills it while other threads' wrappers read it (a plain load on x86-64). */
extern _Atomic unsigned short ag_call_policy[];

void ag_flush_points_init(void);

/* The policy of entry point `entry` (what ag_flush_points_init puts in the table), for
 * AUTOGRAPH_TIMING (timing.c), which needs it with the engine off as well. */
unsigned ag_flush_policy(int entry);

/* Short name of a reason, as written in the exit summary ("sync", "query", ...). */
const char *ag_flush_reason_name(enum ag_flush_reason reason);

#endif
