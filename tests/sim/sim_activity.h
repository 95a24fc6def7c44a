/* sim_activity.h -- what the simulator tells the stand-in libcupti about the work it
 * runs, for CUPTI activity records (sim_cupti.c -> tests/sim/cupti_activity_stand_in.c).
 *
 * Every kernel, copy and memset the simulator executes is one GPU activity; every
 * driver call that submits one (launch, graph launch, copy, memset) is one API
 * activity; the GPU activities it causes share its correlation id.  Times are the
 * simulator's logical clock in nanoseconds (one microsecond per operation; a GPU
 * activity lasts 600 ns).  Channels: stream sN (the stream the work was issued or
 * captured on) runs on channel N modulo SIM_CHANNELS (environment; default 8).
 * The stream order (CUPTI's CUDA_EVENT, SYNCHRONIZATION, STREAM and CONTEXT records):
 * every eager event record and stream wait (with the call's correlation id), every
 * successful stream, event and context synchronize and every stream creation (a
 * correlation id of its own), a context with its legacy stream; sync ids count the
 * eager event records from 1, and a wait names its event's latest one.
 */
#ifndef SIM_ACTIVITY_H
#define SIM_ACTIVITY_H

#include <stdint.h>

#define SIM_CHANNELS 8

enum sim_activity_kind {
    SIM_ACT_KERNEL, SIM_ACT_MEMCPY, SIM_ACT_MEMSET, SIM_ACT_API,
    SIM_ACT_EVENT_RECORD, SIM_ACT_SYNC, SIM_ACT_STREAM, SIM_ACT_CONTEXT
};

/* SIM_ACT_SYNC's sync_type: CUPTI's CUpti_ActivitySynchronizationType values. */
enum sim_sync_type {
    SIM_SYNC_EVENT = 1, SIM_SYNC_STREAM_WAIT = 2, SIM_SYNC_STREAM = 3, SIM_SYNC_CONTEXT = 4
};

/* SIM_ACT_STREAM's stream_flag: CUPTI's CUpti_ActivityStreamFlag values. */
enum sim_stream_flag { SIM_STREAM_FLAG_DEFAULT = 1, SIM_STREAM_FLAG_NON_BLOCKING, SIM_STREAM_FLAG_NULL };

/* An id or sync id that does not apply (CUPTI_SYNCHRONIZATION_INVALID_VALUE). */
#define SIM_ACT_NONE 0xFFFFFFFFu

/* Driver calls of API activities (the stand-in's cuptiGetCallbackName names them). */
enum sim_api_cbid {
    SIM_CBID_LAUNCH = 1, SIM_CBID_GRAPH_LAUNCH, SIM_CBID_MEMCPY, SIM_CBID_MEMSET,
    SIM_CBID_SYNC, SIM_CBID_COUNT
};

struct sim_activity {
    int kind;                       /* enum sim_activity_kind */
    uint64_t start, end;            /* ns */
    uint32_t device, context, stream, correlation;
    uint32_t graph_id, channel;     /* graph id 0: not run by a graph */
    uint64_t graph_node_id;
    const char *name;               /* kernel name (lives as long as the process) */
    unsigned grid[3], block[3];
    uint64_t bytes;
    unsigned copy_kind;             /* CUPTI's: 1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH, 10 PtoP */
    unsigned value;                 /* memset value */
    uint32_t cbid, process, thread; /* API activities */
    uint32_t event;                 /* event records and syncs: the event's id, or */
    uint64_t sync_id;               /* SIM_ACT_NONE */
    int sync_type;                  /* enum sim_sync_type */
    int stream_flag, priority;      /* streams: enum sim_stream_flag, priority */
};

typedef void (*sim_activity_fn)(const struct sim_activity *a);

/* Exported by the simulator's libcuda.so.1 (sim_entry.c): where activities go (NULL:
 * nowhere, the default).  Called under the simulator's lock. */
void sim_activity_sink(sim_activity_fn fn);

/* sim_tools_id's `what` for the logical clock in ns (the stand-in's cuptiGetTimestamp),
 * and for sending the sink a record of every context and stream that exists now (its
 * cuptiActivityEnableAndDump). */
#define SIM_TOOLS_CLOCK 3
#define SIM_TOOLS_DUMP 4

#endif
