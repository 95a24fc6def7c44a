/* record_stage.h -- record: pinned staging for copies to and from pageable host memory,
 * and for the synchronous copies, so that they can be held in a window and graphed.
 *
 * The driver's rules (the runtime's "API synchronization behavior"), and what the shim
 * does in their place when it holds such a copy:
 *   - host to device from pageable memory (and every synchronous cudaMemcpy from the
 *     host): the source is read at the call.  The recorder copies it into a slot of a
 *     pinned ring now, and the held copy reads the slot.  A slot is used again only
 *     once the GPU has passed an event recorded after its copy (a fence, recorded at
 *     the next flush point that issued the copy).
 *   - device to pageable host memory (and every synchronous copy to the host): the call
 *     returns once the copy has completed.  The held copy writes a slot; after the
 *     offer the wrapper ends the window, waits for the copy's stream and copies the slot
 *     into the program's memory before it returns (ag_stage_settle).
 * A copy above the size bound, a ring that is full, a context other than the ring's,
 * or pinned memory the driver would not give: the call is not recorded (it ends the
 * window and goes to the driver, as before).  AUTOGRAPH_STAGE_MB=0 turns staging off.
 */
#ifndef AG_RECORD_STAGE_H
#define AG_RECORD_STAGE_H

#include "op.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What the calling thread's last recorded call owes after its offer. */
struct ag_stage_call {
    int owed;             /* nonzero: ag_stage_settle must run */
    int slot;             /* ring slot index, or -1 */
    int wait;             /* the call returns only once its stream is done */
    uintptr_t stream;     /* stream key of the copy */
    void *user_dst;       /* copy the slot here once done (staged out), or NULL */
    size_t bytes;
};
extern AG_TLS struct ag_stage_call ag_stage_call;

/* Set when a copy found the ring full: the wrapper fences once the window it ended has
 * gone out (ag_stage_fence), so that slots come free without waiting for the next
 * synchronization. */
extern AG_TLS int ag_stage_fence_wanted;

/* Sets the ring's size (AUTOGRAPH_STAGE_MB; 0: no staging). */
void ag_stage_setup(int megabytes);

/* A pinned copy of n bytes at src (taken now), for a copy on stream key `stream` in
 * context ctx: its address, or 0 with *why set. */
uintptr_t ag_stage_in(const void *src, size_t n, uintptr_t stream, uintptr_t ctx,
                      const char **why);

/* A pinned slot of n bytes that a held copy on `stream` writes; the call then owes a
 * wait and the copy into dst.  Its address, or 0 with *why set. */
uintptr_t ag_stage_out(void *dst, size_t n, uintptr_t stream, uintptr_t ctx,
                       const char **why);

/* The call returns only once `stream` is done (a synchronous copy into pinned memory). */
void ag_stage_owe_wait(uintptr_t stream);

/* After the offer (held: 1 when the engine held the call back): a slot the driver's
 * own call made unneeded is given back; a held copy's slot waits for its fence.  1
 * when the call still owes its wait (held, and ag_stage_call.wait): the wrapper then
 * ends the window, waits for the stream and calls ag_stage_finish. */
int ag_stage_offered(int held);
static inline int ag_stage_settle(int held)
{
    return __builtin_expect(ag_stage_call.owed, 0) ? ag_stage_offered(held) : 0;
}

/* The owed wait is over (done: it succeeded): the slot is copied into the program's
 * memory and given back. */
void ag_stage_finish(int done);

/* At a flush point, once the engine has issued what it held and the streams are
 * joined: slots whose copies were held get a fence on their streams. */
void ag_stage_fence(void);
static inline void ag_stage_fence_if_wanted(void)
{
    if (__builtin_expect(ag_stage_fence_wanted, 0)) {
        ag_stage_fence_wanted = 0;
        ag_stage_fence();
    }
}

/* Summary lines: staged_in, staged_out, staging_refused. */
void ag_stage_summary(FILE *out, const char *prefix);

#endif
