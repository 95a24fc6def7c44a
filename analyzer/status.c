/* status.c -- whether the report decides each of its questions (analyzer/FORMAT.md,
 * "Status and exit codes"): true or false dependencies, critical paths, estimated
 * spans without false dependencies.  A question is decided when every group (exec
 * graph, mapped launch group, eager window shape) answers it for every record,
 * undecided when none does (or when there is none), partial otherwise; the whole
 * report likewise.  The exit
 * status follows (main.c): 0 decided, 3 undecided or partial. */
#include "analysis.h"

const char status_hint[] =
    "to decide, turn on: torch.profiler.profile(experimental_config=torch._C._profiler."
    "_ExperimentalConfig(enable_cuda_sync_events=True)) for eager streams, and "
    "AUTOGRAPH_GRAPH_DATA=DIR (libautograph) for the program's CUDA graphs, then pass DIR "
    "after the trace";

const char *status_name(int st)
{
    return st == ST_DECIDED ? "decided" : st == ST_PARTIAL ? "partial" : "undecided";
}

struct tally { uint32_t good, bad; };

static uint8_t verdict(struct tally t)
{
    return t.bad == 0 ? ST_DECIDED : t.good == 0 ? ST_UNDECIDED : ST_PARTIAL;
}

/* One group: every record mapped and every serialization classified. */
static void dep_of_group(const struct analysis *a, const struct group *g, struct tally *t)
{
    int classifiable = g->g != NULL && (a->by_channel || g->mapped || g->eager);
    int whole = g->n_cls[SER_UNKNOWN] == 0 && g->unmatched == 0 && g->map_ambiguous == 0
                && g->map_unmapped == 0;
    t->good += classifiable;
    t->bad += !classifiable || !whole;
}

void status_compute(struct analysis *a)
{
    struct tally dep = { 0, 0 }, cp = { 0, 0 }, est = { 0, 0 };
    struct status *s = &a->status;
    int eager_open = a->eager.multi_stream && !a->eager.present;
    for (size_t i = 0; i < a->n_groups; i++) {
        const struct group *g = &a->groups[i];
        dep_of_group(a, g, &dep);
        cp.good += g->n_cp > 0;
        cp.bad += g->n_cp < g->replays;
        est.good += g->n_est > 0;
        est.bad += g->n_est < g->replays;
    }
    dep.bad += eager_open || a->no_corr > 0;
    cp.bad += eager_open;
    est.bad += eager_open;
    if (a->t->n == 0 || a->n_groups == 0)      /* nothing analysed */
        dep.bad = cp.bad = est.bad = 1, dep.good = cp.good = est.good = 0;
    s->dep = verdict(dep);
    s->cp = verdict(cp);
    s->est = verdict(est);
    if (s->dep == ST_DECIDED && s->cp == ST_DECIDED && s->est == ST_DECIDED)
        s->all = ST_DECIDED;
    else if (s->dep == ST_UNDECIDED && s->cp == ST_UNDECIDED && s->est == ST_UNDECIDED)
        s->all = ST_UNDECIDED;
    else
        s->all = ST_PARTIAL;
    a->hint = a->t->n > 0 && !a->by_graph && !a->eager.present && s->dep != ST_DECIDED;
    for (size_t i = 0; i < a->n_groups; i++)
        a->hint &= !a->groups[i].mapped;
}
