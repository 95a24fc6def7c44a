/* build_collective.c -- build: a chunk ends after every collective kernel and every
 * host function.
 *
 * A collective (NCCL's ncclDevKernel_* and ncclKernel_*, or a kernel named by
 * AUTOGRAPH_COLLECTIVE_PREFIXES: the backend's waits_for_peers) waits on the GPU for
 * the same collective of the other ranks, other processes.  A replay holds a chunk's
 * ops until the chunk is complete: a collective held there while the program waits
 * for another rank only on the host (a store barrier, no CUDA call) would never run,
 * and the other rank would wait for it for ever; held at all, it delays the other
 * ranks.  So a collective is never held past its own call: every template gets a
 * chunk end right after each collective, whatever the chunk plan (growing, paced,
 * tuned) and whatever order it adds across streams (build_cuts.c moves the plan's
 * cuts, never these: a cut adds order, which never makes a result wrong).  The
 * chunk is complete when the collective's call arrives and is launched there, by the
 * program's thread (replay_launcher.c).  The ops before it in its chunk are held
 * until then: a peer waits only for the collective itself.
 * A host function (cuLaunchHostFunc) is kept the same way: a program may wait on the
 * host for what its function does (XLA marks buffers ready from one; a sample sets a
 * flag) without a CUDA call, so it reaches the driver at its own call, in its chunk.
 */
#include "engine_internal.h"

#include <stdlib.h>

/* Whether template op i may not be held past its own call: a host function, or a
 * collective, as the backend says. */
static int never_held(const struct ag_template *t, int i)
{
    struct ag_op view;
    if (t->ops[i].kind == AG_OP_HOST_FUNC)
        return 1;
    if (t->ops[i].kind != AG_OP_KERNEL || ag_eng.be->waits_for_peers == NULL)
        return 0;
    ag_template_op_view(t, i, NULL, &view);
    return ag_eng.be->waits_for_peers(&view) == 1;
}

/* ends[p] = 1 after each collective and host function (engine_internal.h); asked
 * once per op, at build. */
int ag_collective_ends(const struct ag_template *t, unsigned char **ends)
{
    *ends = NULL;
    for (int i = 0; i < t->nops; i++) {
        if (!never_held(t, i))
            continue;
        if (*ends == NULL && (*ends = calloc((size_t)t->nops + 1, 1)) == NULL)
            return 0;
        (*ends)[i + 1] = 1;
    }
    return 1;
}

/* The chunks' cuts, and before each op p with ends[p]: cut[p] = 1 (0 < p < nops).
 * Returns how many cuts. */
static int all_cuts(const struct ag_template *t, const unsigned char *ends,
                    unsigned char *cut)
{
    int n = 0;
    for (int c = 0; c + 1 < t->nchunks; c++)
        cut[t->chunks[c].end] = 1;
    for (int p = 1; p < t->nops; p++) {
        cut[p] |= ends[p];
        n += cut[p];
    }
    return n;
}

/* t's chunks cut again where its chunk plan cut them and after each collective;
 * each chunk that ends with a collective is marked so.  0 when out of memory. */
int ag_chunks_end_collectives(struct ag_template *t, const unsigned char *ends)
{
    unsigned char *cut;
    struct ag_chunk *chunks;
    int k = 0, begin = 0, n;
    if (ends == NULL)
        return 1;
    if ((cut = calloc((size_t)t->nops + 1, 1)) == NULL)
        return 0;
    n = all_cuts(t, ends, cut);
    if ((chunks = calloc((size_t)n + 1, sizeof *chunks)) == NULL) {
        free(cut);
        return 0;
    }
    for (int p = 1; p <= t->nops; p++) {
        if (p < t->nops && !cut[p])
            continue;
        chunks[k].begin = begin;
        chunks[k].end = p;
        chunks[k].collective = ends[p];
        begin = p;
        k++;
    }
    free(cut);
    free(t->chunks);
    t->chunks = chunks;
    t->nchunks = k;
    return 1;
}
