/* build_cuts.c -- build: where a template with work on several streams may be cut into
 * chunks.
 *
 * A chunk launch is a barrier for the streams it uses (backend_cuda_join.c): every op
 * of a chunk starts after every op of the chunk before has finished.  On one stream
 * that is the program's own order.  Across streams it is not: a cut between two ops
 * of independent branches makes one branch wait for the other, a false dependency the
 * shim would add (a GPU-bound fork-join loop then runs its branches one after the
 * other).  So a cut is kept only where it adds no order the program does not have:
 * after the cut, each stream's first op already comes after every op before the cut,
 * through its stream's order, the event waits and the legacy stream's implicit
 * synchronization (vector clocks over the template's ops): a legacy op comes after
 * all earlier work of the blocking streams, and a blocking stream's op after all
 * earlier legacy work.  A step of kernels on a created stream with synchronous copies
 * and memsets on the legacy stream between them is then one order, cut anywhere: its
 * chunks go to the GPU while the program still submits (one chunk held to the step's
 * last copy would leave the GPU idle meanwhile).  A cut the chunk plan asks for that is not such
 * a cut moves to the next one in the direction the plan cuts (for a plan cut from the
 * end, ag_plan_from_end, to the one before); where there is none, the rest of the
 * window is one chunk.  The cuts after collectives
 * (build_collective.c) are made whatever order they add.  AUTOGRAPH_CUT_ANYWHERE=1
 * keeps the plan's cuts (more overlap of the program's submission with the GPU for a
 * launch-bound program, at the price of those orders).
 */
#include "engine_internal.h"

#include <stdlib.h>
#include <string.h>

/* The legacy stream's slot, or -1, and a bit per slot of a stream that synchronizes
 * with it (blocking, or the per-thread default stream).  Without legacy work there is
 * no implicit order, and the streams' flags are not asked. */
static int legacy_slots(const struct ag_template *t, unsigned *blocking)
{
    int legacy = -1;
    unsigned seen = 0;
    *blocking = 0;
    for (int s = 0; s < t->nslots; s++)
        if (t->slot_fixed[s] == AG_STREAM_LEGACY)
            legacy = s;
    for (int i = 0; legacy >= 0 && i < t->nops; i++) {
        int s = t->ops[i].slot;
        if (s == legacy || (seen & (1u << s)))
            continue;
        seen |= 1u << s;
        if (ag_stream_syncs_with_legacy(t->ops[i].stream))
            *blocking |= 1u << s;
    }
    return legacy;
}

/* v = the elementwise latest of v and the clock of op j. */
static void clock_join(int *v, const int *vj, int S)
{
    for (int k = 0; k < S; k++)
        if (vj[k] > v[k])
            v[k] = vj[k];
}

/* safe[p] = 1 when a cut before op p adds no order (1 <= p < nops). */
static int find_safe_cuts(const struct ag_template *t, unsigned char *safe)
{
    int n = t->nops, S = AG_MAX_SLOTS, *vc, *next, last[AG_MAX_SLOTS], prev[AG_MAX_SLOTS];
    unsigned blocking;
    int legacy = legacy_slots(t, &blocking);
    vc = malloc((size_t)n * S * sizeof *vc);          /* vc[i*S+s]: last op of slot s before op i */
    next = malloc((size_t)(n + 1) * S * sizeof *next); /* next[p*S+m]: first op >= p on slot m */
    if (vc == NULL || next == NULL) {
        free(vc);
        free(next);
        return 0;
    }
    for (int s = 0; s < S; s++)
        prev[s] = -1;
    for (int i = 0; i < n; i++) {
        int s = t->ops[i].slot, link = t->ops[i].link;
        int *v = vc + (size_t)i * S;
        if (prev[s] >= 0)
            memcpy(v, vc + (size_t)prev[s] * S, S * sizeof *v);
        else
            for (int k = 0; k < S; k++)
                v[k] = -1;
        if (t->ops[i].kind == AG_OP_EVENT_WAIT && link >= 0 && link < i)
            clock_join(v, vc + (size_t)link * S, S);
        for (int b = 0; s == legacy && b < S; b++)      /* legacy after blocking work */
            if ((blocking & (1u << b)) && prev[b] >= 0)
                clock_join(v, vc + (size_t)prev[b] * S, S);
        if (legacy >= 0 && (blocking & (1u << s)) && prev[legacy] >= 0)
            clock_join(v, vc + (size_t)prev[legacy] * S, S);   /* and the reverse */
        v[s] = i;
        prev[s] = i;
    }
    for (int m = 0; m < S; m++)
        next[(size_t)n * S + m] = -1;
    for (int p = n - 1; p >= 0; p--) {
        memcpy(next + (size_t)p * S, next + (size_t)(p + 1) * S, S * sizeof *next);
        next[(size_t)p * S + t->ops[p].slot] = p;
    }
    for (int s = 0; s < S; s++)
        last[s] = -1;
    for (int p = 1; p < n; p++) {
        int ok = 1;
        last[t->ops[p - 1].slot] = p - 1;
        for (int m = 0; m < S && ok; m++) {
            int f = next[(size_t)p * S + m];
            for (int s = 0; f >= 0 && s < S && ok; s++)
                ok = last[s] < 0 || vc[(size_t)f * S + s] >= last[s];
        }
        safe[p] = (unsigned char)ok;
    }
    free(vc);
    free(next);
    return 1;
}

/* The chunk plan's cuts moved to safe ones (see the top), or onto a cut that is made
 * anyway (must_cut: after a collective, build_collective.c), which a plan's cut
 * moved there adds nothing to; chunks merge where two cuts move to the same place.
 * Templates on one stream are left as they are. */
void ag_chunks_keep_order(struct ag_template *t, const unsigned char *must_cut)
{
    unsigned char *safe;
    int k = 0, n = t->nops;
    if (t->nslots < 2 || t->nchunks < 2 || ag_eng.p.cut_anywhere ||
        (safe = calloc((size_t)n + 1, 1)) == NULL)
        return;
    if (!find_safe_cuts(t, safe)) {
        free(safe);
        return;
    }
    for (int p = 1; must_cut && p < n; p++)
        safe[p] |= must_cut[p];
    for (int c = 0; c < t->nchunks; c++) {
        int end = t->chunks[c].end, begin = k ? t->chunks[k - 1].end : 0;
        if (c < t->nchunks - 1) {
            if (ag_plan_from_end(t))
                while (end > begin && !safe[end])
                    end--;
            else
                while (end < n && !safe[end])
                    end++;
        } else {
            end = n;
        }
        if (end <= begin)
            continue;                /* moved onto the cut before: merged */
        t->chunks[k].begin = begin;
        t->chunks[k].end = end;
        k++;
        if (end == n)
            break;
    }
    if (k == 0 || t->chunks[k - 1].end != n) {   /* from the end: all moved to 0 */
        t->chunks[0].begin = 0;
        t->chunks[0].end = n;
        k = 1;
    }
    t->nchunks = k;
    free(safe);
}
