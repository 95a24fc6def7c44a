/* analyze.c -- the analysis pipeline (replays, eager windows, lanes, per-replay
 * dependencies, aggregation) and the "cannot decide" notes that say what the input
 * does not allow and why. */
#include "analysis.h"
#include "eager.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void analysis_note(struct analysis *a, const char *what, const char *fmt, ...)
{
    va_list ap;
    struct note *n;
    if (a->n_notes == NOTE_MAX)
        return;
    n = &a->notes[a->n_notes++];
    snprintf(n->what, sizeof n->what, "%s", what);
    va_start(ap, fmt);
    vsnprintf(n->why, sizeof n->why, fmt, ap);
    va_end(ap);
}

const char *ser_class_name(int cls)
{
    static const char *const names[] = { "true", "false", "ambiguous", "unclassified" };
    return cls >= 0 && cls < SER_CLASSES ? names[cls] : "?";
}

void analysis_free(struct analysis *a)
{
    for (size_t i = 0; i < a->n_groups; i++) {
        free(a->groups[i].lanes);
        free(a->groups[i].pairs);
        if (a->groups[i].eager && a->groups[i].g != NULL) {
            graph_free(a->groups[i].g);
            free(a->groups[i].g);
        }
    }
    free(a->eager_floor);
    free(a->map_node);
    free(a->groups);
    free(a->order);
    free(a->replays);
    free(a->sers);
    free(a->uses);
    free(a->lanes);
    memset(a, 0, sizeof *a);
}

static size_t replayed_without_channel(const struct analysis *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_replays; i++)
        for (uint32_t k = 0; k < a->replays[i].count; k++)
            n += !(a->t->ev[a->order[a->replays[i].first + k]].flags & KEV_CHANNEL);
    return n;
}

/* Launch groups (without graph keys, records sharing a correlation); a trace of eager
 * windows without any has nothing a graph file could add. */
static size_t launch_groups(const struct analysis *a, int mapped)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_groups; i++)
        n += !a->groups[i].by_graph && !a->groups[i].eager && a->groups[i].mapped >= mapped;
    return n;
}

/* Launch groups mapped to graph files by name: what stays open. */
static void note_mapped(struct analysis *a)
{
    uint64_t amb = 0, none = 0;
    if (!a->by_channel && (launch_groups(a, 1) > 0 || a->eager.windows > 0))
        analysis_note(a, "which records shared a hardware channel", "no GPU record has a "
                      "\"channel\" arg; serializations of eager windows and of launch groups "
                      "mapped to graph files are inferred (B started within epsilon of another "
                      "record's end on its device)");
    for (size_t i = 0; i < a->n_groups; i++)
        amb += a->groups[i].map_ambiguous, none += a->groups[i].map_unmapped;
    if (amb + none > 0)
        analysis_note(a, "which graph node some records are", "%llu records of launch groups "
                      "could be one of several graph nodes (by name and order) and %llu match "
                      "none; their serializations are classed ambiguous or unclassified",
                      (unsigned long long)amb, (unsigned long long)none);
}

static void note_inputs(struct analysis *a)
{
    const struct trace *t = a->t;
    if (t->n == 0)
        analysis_note(a, "anything", "the trace has no GPU activity (no event with \"ph\":\"X\" "
                      "and \"cat\" kernel, gpu_memcpy or gpu_memset)");
    else if (!a->by_graph && !(a->eager.present && launch_groups(a, 0) == 0)
             && (launch_groups(a, 0) == 0 || launch_groups(a, 0) > launch_groups(a, 1)))
        analysis_note(a, "true or false dependencies, critical paths, gains",
                      "no GPU record has \"graph id\" and \"graph node id\" args, so records "
                      "cannot be mapped to graph nodes (PyTorch 2.11's profiler writes "
                      "neither; libautograph's trace does, see analyzer/FORMAT.md), and no "
                      "graph file matches their kernel names; reported instead: launch "
                      "groups (records sharing one correlation), their spans, lanes and idle "
                      "gaps");
    if (t->n > 0 && !a->by_channel && a->by_graph)
        analysis_note(a, "serializations, false dependencies, gains",
                      "no GPU record has a \"channel\" arg, so which records shared a "
                      "hardware channel is unknown; lanes are streams; critical paths and "
                      "delayed starts are still reported");
    if (a->by_channel && replayed_without_channel(a) > 0)
        analysis_note(a, "serializations of some records", "%zu GPU records of replays have "
                      "no \"channel\"; they are left out of serializations",
                      replayed_without_channel(a));
    if (a->no_corr > 0)
        analysis_note(a, "replays of some graph records", "%llu graph records have no "
                      "\"correlation\" (the graph launch's), so their replay is unknown; "
                      "they are left out", (unsigned long long)a->no_corr);
}

static void note_graphs(struct analysis *a)
{
    char ids[200] = "";
    size_t len = 0, missing = 0;
    for (size_t i = 0; i < a->n_groups; i++) {
        const struct group *g = &a->groups[i];
        if (!g->by_graph || g->g != NULL)
            continue;
        if (missing++ < 8 && len < sizeof ids - 24)
            len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%llu", len ? ", " : "",
                                    (unsigned long long)g->id);
    }
    if (missing > 0)
        analysis_note(a, "true or false dependencies of some exec graphs", "no graph file for "
                      "exec graph%s %s%s: pass its get_graph_data JSON as an argument, or put "
                      "it in <trace>.graphs/", missing > 1 ? "s" : "", ids,
                      missing > 8 ? ", ..." : "");
    for (size_t i = 0; i < a->n_groups; i++)
        if (a->groups[i].unmatched > 0)
            analysis_note(a, "some records of an exec graph", "%llu records of exec graph %llu "
                          "name nodes that are not kernel, memcpy or memset nodes of %s (a "
                          "graph file from another run?); they are left out",
                          (unsigned long long)a->groups[i].unmatched,
                          (unsigned long long)a->groups[i].id, a->groups[i].g->file);
}

/* Eager windows: what the trace lacks for them, and where they are conservative. */
static void note_eager(struct analysis *a)
{
    const struct eager_totals *e = &a->eager;
    if (!e->present && e->multi_stream)
        analysis_note(a, "true or false dependencies of eager multi-stream records",
                      "GPU records launched eagerly (no \"graph id\") ran on two or more "
                      "streams, but the trace has no stream-order records (analyzer/FORMAT.md "
                      "section 1d: event records, stream waits, host synchronizations, "
                      "stream_info), so eager multi-stream records cannot be classified; "
                      "libautograph's tracer (AUTOGRAPH_TRACE) writes them");
    if (!e->present)
        return;
    if (e->left_out > 0)
        analysis_note(a, "some eager records", "%llu eager GPU records have no \"correlation\" "
                      "or no \"stream\", so they cannot be placed in an eager window; they are "
                      "left out", (unsigned long long)e->left_out);
    if (e->unmatched_waits > 0)
        analysis_note(a, "which event some stream waits waited for", "%llu stream waits have no "
                      "sync id, or one whose event record is not in the trace (recorded before "
                      "tracing began?); the waiting stream's next record is taken as ready "
                      "only after everything submitted before the wait ended",
                      (unsigned long long)e->unmatched_waits);
    if (e->legacy_streams > 0)
        analysis_note(a, "whether some eager records were ordered implicitly", "%llu streams "
                      "with eager records have no stream_info (the legacy default stream, a "
                      "per-thread default stream, or one created before tracing began); their "
                      "records are ordered with every stream not known to be non_blocking, "
                      "which can turn a false dependency into a true or ambiguous one, never "
                      "the reverse", (unsigned long long)e->legacy_streams);
    if (e->submit_host + e->submit_unknown > 0)
        analysis_note(a, "when some eager records were submitted", "%llu eager records have no "
                      "API record (cuda_driver, cuda_runtime): %llu taken as submitted at the "
                      "host time of their call, interpolated by correlation between the timed "
                      "calls around it (stream waits, syncs, API records), %llu (no timed call "
                      "before) at their window's start; estimated spans of host-bound windows "
                      "are as good as these times",
                      (unsigned long long)(e->submit_host + e->submit_unknown),
                      (unsigned long long)e->submit_host, (unsigned long long)e->submit_unknown);
    if (e->split > 0)
        analysis_note(a, "serializations across some eager window cuts", "%llu times an "
                      "eager window reached %u records (or %u edges) without a host "
                      "synchronization and was cut; records on either side of a cut are not "
                      "compared",
                      (unsigned long long)e->split, eager_window_max(), EAGER_EDGES_MAX);
}

/* Each replay against its group's graph; a group's replays are consecutive, and once
 * they are done its graph's search memory goes back. */
static int run_replays(struct analysis *a)
{
    void *scratch = deps_scratch_new();
    int rc = scratch == NULL ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < a->n_replays; i++) {
        uint32_t gi = a->replays[i].group;
        rc = deps_replay(a, &a->replays[i], &a->groups[gi], scratch);
        if (a->groups[gi].g != NULL && (i + 1 == a->n_replays || a->replays[i + 1].group != gi))
            graph_release_search(a->groups[gi].g);
    }
    deps_scratch_free(scratch);
    return rc;
}

int analysis_run(struct analysis *a, const struct trace *t, struct graphset *gs,
                 double eps_us, char *err, size_t errsize)
{
    memset(a, 0, sizeof *a);
    a->t = t;
    a->gs = gs;
    a->eps = (int64_t)llround(eps_us * 1000.0);
    a->by_graph = t->with_graph > 0 && t->with_node > 0;
    a->by_channel = t->with_channel > 0;
    if (replays_build(a) != 0 || node_map_build(a) != 0 || eager_build(a) != 0 || lanes_total(a) != 0
        || run_replays(a) != 0 || aggregate_groups(a) != 0) {
        snprintf(err, errsize, "%s: out of memory while analyzing", t->path);
        return -1;
    }
    note_inputs(a);
    note_graphs(a);
    note_eager(a);
    note_mapped(a);
    status_compute(a);
    return 0;
}
