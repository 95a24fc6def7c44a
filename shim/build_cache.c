/* build_cache.c -- build: the bounds on the graphs kept, AUTOGRAPH_MAX_GRAPHS
 * templates and AUTOGRAPH_MAX_GRAPH_MB of device memory in executable graphs.
 *
 * After a template is built, and after a chunk gets a new executable, the bounds are
 * checked; while one is passed, the least recently used template (by the replay
 * clock of its last launch, or of its build) is dropped, never the one just built or
 * being replayed.  Dropped templates are counted (`evicted` in the exit summary) and
 * rebuilt if their window returns.
 *
 * CUDA 13.0 has no query for the device memory an executable graph holds, so it is
 * estimated: per executable, AG_EXEC_OP_BYTES for each recorded op of its chunk plus
 * the chunk's argument bytes.  AG_EXEC_OP_BYTES is set above the device memory per
 * node that tests/gpu/introspect.bats measures (its `memcal` figure, printed each run).
 */
#include "engine_internal.h"
#include "report_introspect.h"

#include <stdio.h>

#define AG_EXEC_OP_BYTES 4096

size_t ag_chunk_exec_bytes(int ops, size_t args_len)
{
    return (size_t)ops * AG_EXEC_OP_BYTES + args_len;
}

static size_t template_bytes(const struct ag_template *t)
{
    size_t bytes = 0;
    for (int c = 0; t->chunks && c < t->nchunks; c++) {
        const struct ag_chunk *ch = &t->chunks[c];
        bytes += (size_t)ch->nvariants * ag_chunk_exec_bytes(ch->end - ch->begin, ch->args_len);
    }
    return bytes;
}

/* Whether `count` templates holding `bytes` pass a bound; why in `why`. */
static int over_bound(int count, size_t bytes, char *why, size_t size)
{
    if (ag_eng.p.max_graphs > 0 && count > ag_eng.p.max_graphs) {
        snprintf(why, size, "evicted (least recently used): more than AUTOGRAPH_MAX_GRAPHS=%d",
                 ag_eng.p.max_graphs);
        return 1;
    }
    if (ag_eng.p.max_graph_mb > 0 && bytes > ((size_t)ag_eng.p.max_graph_mb << 20)) {
        snprintf(why, size, "evicted (least recently used): executable graphs estimated at "
                 "%zu bytes, more than AUTOGRAPH_MAX_GRAPH_MB=%d", bytes, ag_eng.p.max_graph_mb);
        return 1;
    }
    return 0;
}

/* Drops least recently used templates until the bounds hold (keep: just built or
 * grown, perhaps not registered yet; it stays, as does the one being replayed). */
void ag_cache_enforce(struct ag_template *keep)
{
    for (;;) {
        struct ag_template *t, *tmp, *lru = NULL;
        int count = 0, keep_listed = 0;
        size_t bytes = 0;
        char why[160];

        HASH_ITER(hh, ag_eng.by_hash, t, tmp) {
            if (t->failed)
                continue;
            count++;
            bytes += template_bytes(t);
            keep_listed |= t == keep;
            if (t != keep && t != ag_eng.r.t && (lru == NULL || t->used < lru->used))
                lru = t;
        }
        if (keep && !keep_listed && !keep->failed) {
            count++;
            bytes += template_bytes(keep);
        }
        if (bytes > ag_eng.s.graph_bytes_peak)
            ag_eng.s.graph_bytes_peak = bytes;
        if (lru == NULL || !over_bound(count, bytes, why, sizeof why))
            return;
        ag_eng.s.evicted++;
        ag_template_retire(lru, why);
    }
}
