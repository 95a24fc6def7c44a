/* intercept_lifetime.c -- intercept: the wrappers of calls that make or end memory and streams.
 *
 * Each line of the table below gives an entry point a strong wrapper (overriding
 * the weak forwarding one of intercept_wrappers.c) that enters the memory into the
 * allocation table (alloc_table.c) when the call succeeds, or, for a free, first
 * drops the graphs that hold a pointer into it (engine.c) and moves it to the
 * table's freed list when the call succeeds.  A stream creation tells the engine
 * that the handle is a live stream (it may be a destroyed stream's handle reused;
 * a replay never maps a destroyed stream); so does an event creation (a replay never
 * holds an op on a destroyed event: replay_events.c).  An event's destroy is the
 * engine's to decide (replay_events.c): made now while the window goes on, held
 * until the held ops that name the event went out, or a flush point as before.  An
 * adapter reads the address and size from the call's own arguments; trailing
 * arguments it does not need are absorbed by `...`.  Not tracked: the 32-bit v1 ABI
 * (cuMemAlloc, cuMemAllocPitch, cuMemAllocHost, cuMemFree without _v2), address
 * reservations (no memory), and cuMemRelease (a mapped handle's memory lives until its
 * cuMemUnmap).
 * With AUTOGRAPH=off nothing is tracked.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "alloc_table.h"
#include "config.h"
#include "counters.h"
#include "driver.h"
#include "engine.h"
#include "entry_points.h"
#include "entry_signatures.h"
#include "intercept_wrapper.h"
#include "record_ops.h"

static int tracking_state;      /* 0: not decided, 1: on, -1: off */

static int tracking(void)
{
    int state = __atomic_load_n(&tracking_state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        const struct ag_config *cfg = ag_config();
        state = cfg->mode == AG_MODE_ON ? 1 : -1;
        if (state > 0)
            ag_alloc_setup(cfg->liveness);
        __atomic_store_n(&tracking_state, state, __ATOMIC_RELEASE);
    }
    return state > 0;
}

/* The recorder's memory types are told after the table is (record_ops.c): device
 * memory the table holds (in_table) changes only the device addresses' types; host
 * memory, an import of unknown size or no table, every address's. */
static void memory_changed(int in_table)
{
    if (in_table)
        ag_record_device_memory_changed();
    else
        ag_record_memory_changed();
}

static void add(CUresult result, int id, uintptr_t base, size_t size, int device)
{
    int table;
    if (result != CUDA_SUCCESS)
        return;
    table = tracking();
    if (table)
        ag_alloc_add(base, size, ag_entry_name[id]);
    memory_changed(table && device && size > 0);
}

/* ---- allocations: after the call ------------------------------------------------ */

static void none(int id, ...)
{
    (void)id;
}
#define dev_out_before    none
#define dev_pitch_before  none
#define host_out_before   none
#define host_given_before none
#define dev_given_before  none
#define dev_query_before  none

static void dev_out_after(CUresult result, int id, CUdeviceptr *p, size_t size, ...)
{
    add(result, id, result == CUDA_SUCCESS ? (uintptr_t)*p : 0, size, 1);
}
static void dev_pitch_after(CUresult result, int id, CUdeviceptr *p, size_t *pitch,
                            size_t width, size_t height, ...)
{
    (void)width;
    add(result, id, result == CUDA_SUCCESS ? (uintptr_t)*p : 0,
        result == CUDA_SUCCESS ? *pitch * height : 0, 1);
}
static void host_out_after(CUresult result, int id, void **p, size_t size, ...)
{
    add(result, id, result == CUDA_SUCCESS ? (uintptr_t)*p : 0, size, 0);
}
static void host_given_after(CUresult result, int id, void *p, size_t size, ...)
{
    add(result, id, (uintptr_t)p, size, 0);
}
static void dev_given_after(CUresult result, int id, CUdeviceptr p, size_t size, ...)
{
    add(result, id, (uintptr_t)p, size, 1);
}
/* Imports (IPC, pools): the size is asked of the driver. */
static void dev_query_after(CUresult result, int id, CUdeviceptr *p, ...)
{
    CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr) =
        (CUresult (*)(CUdeviceptr *, size_t *, CUdeviceptr))ag_driver_proc("cuMemGetAddressRange_v2");
    CUdeviceptr base = 0;
    size_t size = 0;
    if (result != CUDA_SUCCESS)
        return;
    if (range == NULL || range(&base, &size, *p) != CUDA_SUCCESS)
        base = *p, size = 0;
    add(result, id, (uintptr_t)base, size, 1);
}

/* ---- frees: graphs pointing there counted before the call, the table updated after */

static void freeing(uintptr_t p, size_t size)
{
    uintptr_t base = p;
    if (!tracking() || !ag_engine_holds_graphs())
        return;                 /* no graph to count (a loop left eager frees cheaply) */
    if (size == 0 && !ag_alloc_find(p, &base, &size))
        base = p;
    ag_engine_memory_freed(base, size);
}
static void freed(CUresult result, int id, uintptr_t p, size_t size, int device)
{
    int table;
    if (result != CUDA_SUCCESS)
        return;
    table = tracking();
    if (table)
        ag_alloc_remove(p, size, ag_entry_name[id]);
    memory_changed(table && device);
}

static void dev_free_before(int id, CUdeviceptr p, ...)
{
    (void)id;
    freeing((uintptr_t)p, 0);
}
static void dev_free_after(CUresult result, int id, CUdeviceptr p, ...)
{
    freed(result, id, (uintptr_t)p, 0, 1);
}
static void host_free_before(int id, void *p, ...)
{
    (void)id;
    freeing((uintptr_t)p, 0);
}
static void host_free_after(CUresult result, int id, void *p, ...)
{
    freed(result, id, (uintptr_t)p, 0, 0);
}
static void unmap_before(int id, CUdeviceptr p, size_t size, ...)
{
    (void)id;
    freeing((uintptr_t)p, size);
}
static void unmap_after(CUresult result, int id, CUdeviceptr p, size_t size, ...)
{
    freed(result, id, (uintptr_t)p, size, 1);
}

/* ---- streams: after the call ------------------------------------------------------- */

#define stream_out_before none
static void stream_out_after(CUresult result, int id, CUstream *s, ...)
{
    (void)id;
    if (result == CUDA_SUCCESS)
        ag_engine_stream_created((uintptr_t)*s);
}

/* ---- events: after the call -------------------------------------------------------- */

#define event_out_before none
static void event_out_after(CUresult result, int id, CUevent *e, ...)
{
    (void)id;
    if (result == CUDA_SUCCESS)
        ag_engine_event_created((uintptr_t)*e);
}

/* ---- event destroys: the engine decides -------------------------------------------- */

/* A destroy the engine holds is answered CUDA_SUCCESS here (the engine makes it
 * later); one it wants as a flush point takes the usual way first. */
#define AG_EVENT_DESTROY(sym)                                                  \
    AG_EXPORT CUresult sym AG_PARAMS_##sym                                     \
    {                                                                          \
        CUresult (*real) AG_PARAMS_##sym = ag_real_fn(AG_EP_##sym);            \
        CUresult result;                                                       \
        if (real == NULL)                                                      \
            return (CUresult)ag_driver_missing(AG_EP_##sym);                   \
        switch (ag_engine_event_destroying((uintptr_t)AG_ARG0_##sym)) {        \
        case AG_DESTROY_HELD:                                                  \
            ag_count_call(AG_EP_##sym, 0);                                     \
            return CUDA_SUCCESS;                                               \
        case AG_DESTROY_FLUSH:                                                 \
            ag_intercept_before(AG_EP_##sym, (uintptr_t)AG_ARG0_##sym);       \
            break;                                                             \
        }                                                                      \
        AG_TIMED_CALL(AG_EP_##sym, result, real AG_ARGS_##sym);                \
        ag_call_done(AG_EP_##sym, result);                                     \
        return result;                                                         \
    }

AG_EVENT_DESTROY(cuEventDestroy)
AG_EVENT_DESTROY(cuEventDestroy_v2)

/* ---- the table ------------------------------------------------------------------- */

#define AG_SPREAD(...) __VA_ARGS__
#define AG_TRACK(sym, adapter)                                                 \
    AG_WRAPPER(, sym, adapter##_before(AG_EP_##sym, AG_SPREAD AG_ARGS_##sym),  \
               adapter##_after(result, AG_EP_##sym, AG_SPREAD AG_ARGS_##sym))

AG_TRACK(cuMemAlloc_v2,                dev_out)
AG_TRACK(cuMemAllocAsync,              dev_out)
AG_TRACK(cuMemAllocAsync_ptsz,         dev_out)
AG_TRACK(cuMemAllocFromPoolAsync,      dev_out)
AG_TRACK(cuMemAllocFromPoolAsync_ptsz, dev_out)
AG_TRACK(cuMemAllocManaged,            dev_out)
AG_TRACK(cuMemAllocPitch_v2,           dev_pitch)
AG_TRACK(cuMemAllocHost_v2,            host_out)
AG_TRACK(cuMemHostAlloc,               host_out)
AG_TRACK(cuMemHostRegister,            host_given)
AG_TRACK(cuMemHostRegister_v2,         host_given)
AG_TRACK(cuMemMap,                     dev_given)
AG_TRACK(cuMemPoolImportPointer,       dev_query)
AG_TRACK(cuIpcOpenMemHandle,           dev_query)
AG_TRACK(cuIpcOpenMemHandle_v2,        dev_query)

AG_TRACK(cuMemFree_v2,                 dev_free)
AG_TRACK(cuMemFreeAsync,               dev_free)
AG_TRACK(cuMemFreeAsync_ptsz,          dev_free)
AG_TRACK(cuIpcCloseMemHandle,          dev_free)
AG_TRACK(cuMemFreeHost,                host_free)
AG_TRACK(cuMemHostUnregister,          host_free)
AG_TRACK(cuMemUnmap,                   unmap)

AG_TRACK(cuStreamCreate,               stream_out)
AG_TRACK(cuStreamCreateWithPriority,   stream_out)
AG_TRACK(cuEventCreate,                event_out)
AG_TRACK(cuIpcOpenEventHandle,         event_out)
