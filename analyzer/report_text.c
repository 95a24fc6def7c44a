/* report_text.c -- the readable report: what was read, what cannot be decided and
 * why, then per exec graph (or launch group, or eager window shape) its replays'
 * spans, serializations by class, false dependencies by node pair, channel occupancy,
 * critical path and the estimated gain, and a few replays in detail; last, the lanes
 * of the whole trace. */
#include "report.h"

#include <stdio.h>

#define PAIRS_SHOWN 10
#define LANES_SHOWN 32
#define GROUPS_SHOWN 50

static int64_t mean(int64_t sum, uint64_t n) { return n ? sum / (int64_t)n : 0; }

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "label 12.345 us" */
static void put_us(struct out *o, const char *label, int64_t ns)
{
    out_printf(o, "%s", label);
    out_us(o, ns);
    out_printf(o, " us");
}

static void header(struct out *o, const struct analysis *a, const struct report_opts *opt)
{
    const struct trace *t = a->t;
    out_printf(o, "autograph-analyze report\ntrace: %s (%s%s, %llu bytes, %llu events, %zu GPU "
               "records)\n", t->path, trace_source_name(t->source), t->gzip ? ", gzip" : "",
               (unsigned long long)t->raw_bytes, (unsigned long long)t->events, t->n);
    out_printf(o, "keys: graph id+node id on %llu, channel on %llu, correlation on %llu records"
               "\n", (unsigned long long)t->with_node, (unsigned long long)t->with_channel,
               (unsigned long long)t->with_corr);
    out_printf(o, "graph files: %zu exec graph(s)%s%s\n", a->gs->n,
               opt->graphs_from ? " from " : "", opt->graphs_from ? opt->graphs_from : "");
    if (a->eager.present)
        out_printf(o, "eager windows: %llu windows of %llu records in %llu shapes; %llu host "
                   "syncs, %llu event edges, %llu implicit edges\n",
                   (unsigned long long)a->eager.windows, (unsigned long long)a->eager.records,
                   (unsigned long long)a->eager.groups, (unsigned long long)a->eager.host_syncs,
                   (unsigned long long)a->eager.event_edges,
                   (unsigned long long)a->eager.implicit_edges);
    if (a->eager.present)
        out_printf(o, "eager submission times: %llu from API records, %llu estimated from the "
                   "host's timed calls, %llu unknown\n", (unsigned long long)a->eager.submit_api,
                   (unsigned long long)a->eager.submit_host,
                   (unsigned long long)a->eager.submit_unknown);
    put_us(o, "epsilon: ", a->eps);
    out_printf(o, "; lanes are %s\n", a->by_channel ? "hardware channels" : "streams");
    out_printf(o, "status: %s (dependencies %s, critical paths %s, estimated spans %s)\n",
               status_name(a->status.all), status_name(a->status.dep),
               status_name(a->status.cp), status_name(a->status.est));
    if (a->hint)
        out_printf(o, "%s\n", status_hint);
    if (a->n_notes > 0)
        out_printf(o, "\ncannot decide:\n");
    for (size_t i = 0; i < a->n_notes; i++)
        out_printf(o, "  - %s: %s\n", a->notes[i].what, a->notes[i].why);
}

/* What a group's replays are called. */
static const char *replays_word(const struct group *g)
{
    return g->eager ? "windows" : "replays";
}

static void spans(struct out *o, const struct group *g)
{
    put_us(o, "  span: mean ", mean(g->span_sum, g->replays));
    put_us(o, ", min ", g->span_min);
    put_us(o, ", max ", g->span_max);
    out_printf(o, "; idle inside %s", replays_word(g));
    put_us(o, ": mean ", mean(g->idle_sum, g->replays));
    out_printf(o, "\n");
}

static void occupancy(struct out *o, const struct analysis *a, const struct group *g)
{
    char lane[64];
    out_printf(o, "  %s occupancy (busy / replay span):", a->by_channel ? "channel" : "stream");
    for (size_t i = 0; i < g->n_lanes && i < LANES_SHOWN; i++) {
        lane_name(a, &g->lanes[i].lane, lane, sizeof lane);
        out_printf(o, "%s %s %.1f%%", i ? "," : "", lane, pct(g->lanes[i].busy, g->span_sum));
    }
    out_printf(o, "%s\n", g->n_lanes > LANES_SHOWN ? ", ..." : "");
}

static void pairs(struct out *o, const struct analysis *a, const struct group *g)
{
    char lane[64], an[120], bn[120];
    size_t shown = 0;
    if (g->n_pairs == 0)
        return;
    out_printf(o, "  false dependencies (no path in the %s; B was ready earlier):\n",
               g->eager ? "window's stream order and events" : "graph");
    for (; shown < g->n_pairs && shown < PAIRS_SHOWN; shown++) {
        const struct pair_stat *p = &g->pairs[shown];
        node_label(a, g->g, p->a_node, 40, an, sizeof an);
        node_label(a, g->g, p->b_node, 40, bn, sizeof bn);
        lane_name(a, &p->lane, lane, sizeof lane);
        out_printf(o, "    %s -> %s on %s: %u/%u %s", an, bn, lane, p->count, g->replays,
                   replays_word(g));
        put_us(o, ", B waited ", mean(p->wait_sum, p->count));
        out_printf(o, " mean\n");
    }
    if (g->n_pairs > shown)
        out_printf(o, "    ... %zu more pairs (see --json)\n", g->n_pairs - shown);
}

static void serializations(struct out *o, const struct analysis *a, const struct group *g)
{
    if (!a->by_channel && !g->mapped && !g->eager)
        return;
    if (a->by_channel)
        out_printf(o, "  serializations (B started within epsilon of A's end, or queued behind "
                   "A, on A's channel): ");
    else
        out_printf(o, "  serializations, inferred without channels (B started within epsilon "
                   "of the end of A, the record that ended nearest it): ");
    for (int c = 0; c < SER_CLASSES; c++)
        if (c != SER_UNKNOWN || g->n_cls[c] > 0)
            out_printf(o, "%s%llu %s", c ? ", " : "", (unsigned long long)g->n_cls[c],
                       ser_class_name(c));
    out_printf(o, " (per %s: %.2f false)\n", g->eager ? "window" : "replay",
               g->replays ? (double)g->n_cls[SER_FALSE] / g->replays : 0.0);
}

static void estimate(struct out *o, const struct group *g)
{
    const char *per = g->eager ? "window" : "replay";
    int64_t span = mean(g->span_sum, g->replays), cp = mean(g->cp_sum, g->n_cp);
    if (g->n_cp == 0)
        return;
    put_us(o, "  critical path (measured durations): mean ", cp);
    out_printf(o, " (%.1f%% of the span)\n", pct(cp, span));
    if (g->n_est > 0) {
        int64_t est = mean(g->est_sum, g->n_est);
        put_us(o, "  estimated span without false dependencies: mean ", est);
        put_us(o, "; gain ", span - est);
        out_printf(o, " (%.1f%%)\n", pct(span - est, span));
    }
    out_printf(o, "  delayed starts (more than epsilon after the node was ready): %.2f per "
               "%s\n", g->replays ? (double)g->delayed / g->replays : 0.0, per);
}

static void replay_line(struct out *o, const struct analysis *a, const struct group *g,
                        const struct replay *r)
{
    out_printf(o, "    %scorrelation %lld", g->eager ? "from " : "", (long long)r->corr);
    put_us(o, " at ", r->t0);
    put_us(o, ": span ", r->span);
    out_printf(o, ", %u records on %u lanes", r->count, r->lanes);
    if (r->has_cp)
        put_us(o, ", critical path ", r->cp);
    if (r->has_est)
        put_us(o, ", without false deps ", r->est);
    put_us(o, ", idle ", r->idle);
    out_printf(o, " (%u gaps > epsilon)", r->gaps);
    if (a->by_channel && r->ser_count > 0)
        out_printf(o, ", serializations %u true %u false %u ambiguous", r->n_cls[SER_TRUE],
                   r->n_cls[SER_FALSE], r->n_cls[SER_AMBIGUOUS]);
    out_printf(o, "\n");
}

static void group_title(struct out *o, const struct analysis *a, const struct group *g)
{
    char name[80];
    if (g->eager) {
        out_printf(o, "\neager window %016llx: %u windows, %u records on %u streams, %u edges "
                   "(device %d)\n", (unsigned long long)g->id, g->replays, g->g->n, g->streams,
                   g->g->m, (int)g->device);
        return;
    }
    if (g->by_graph) {
        out_printf(o, "\nexec graph %llu: %u replays", (unsigned long long)g->id, g->replays);
        if (g->g != NULL)
            out_printf(o, ", graph file %s (%u nodes, %u timed)\n", g->g->file, g->g->n,
                       g->g->n_timed);
        else
            out_printf(o, ", no graph file\n");
        return;
    }
    shorten(name, sizeof name, rec_name(a, g->sample), 60);
    out_printf(o, "\nlaunch group %016llx: %u launches of %u records (kernels sharing one "
               "correlation; first: %s)\n", (unsigned long long)g->id, g->replays,
               a->replays[g->first_replay].count, name);
    if (g->mapped)
        out_printf(o, "  mapped to graph file %s (%u nodes, %u timed) by kernel name, launch "
                   "and dependency order: %llu exact, %llu by stream, %llu ambiguous, %llu "
                   "unmapped records (confidence %.2f)\n", g->g->file, g->g->n, g->g->n_timed,
                   (unsigned long long)g->map_exact, (unsigned long long)g->map_stream,
                   (unsigned long long)g->map_ambiguous, (unsigned long long)g->map_unmapped,
                   map_confidence(g));
}

static void group_text(struct out *o, const struct analysis *a, const struct group *g,
                       const struct report_opts *opt)
{
    group_title(o, a, g);
    spans(o, g);
    serializations(o, a, g);
    pairs(o, a, g);
    occupancy(o, a, g);
    estimate(o, g);
    if (opt->replays_shown > 0)
        out_printf(o, "  %s (first %u of %u):\n", replays_word(g), opt->replays_shown
                   < g->replays ? opt->replays_shown : g->replays, g->replays);
    for (uint32_t i = 0; i < g->replays && i < opt->replays_shown; i++)
        replay_line(o, a, g, &a->replays[g->first_replay + i]);
}

static void lanes_text(struct out *o, const struct analysis *a)
{
    char lane[64];
    if (a->n_lanes == 0)
        return;
    out_printf(o, "\nlanes (whole trace, every GPU record):\n");
    for (size_t i = 0; i < a->n_lanes && i < LANES_SHOWN; i++) {
        const struct lane_total *l = &a->lanes[i];
        lane_name(a, &l->lane, lane, sizeof lane);
        out_printf(o, "  %s: %llu records", lane, (unsigned long long)l->records);
        put_us(o, ", busy ", l->busy);
        put_us(o, " of ", l->last - l->first);
        out_printf(o, " (%.1f%%)\n", pct(l->busy, l->last - l->first));
    }
    if (a->n_lanes > LANES_SHOWN)
        out_printf(o, "  ... %zu more lanes (see --json)\n", a->n_lanes - LANES_SHOWN);
}

void report_text(struct out *o, const struct analysis *a, const struct report_opts *opt)
{
    header(o, a, opt);
    for (size_t i = 0; i < a->n_groups && i < GROUPS_SHOWN; i++)
        group_text(o, a, &a->groups[i], opt);
    if (a->n_groups > GROUPS_SHOWN)
        out_printf(o, "\n... %zu more groups (see --json)\n", a->n_groups - GROUPS_SHOWN);
    lanes_text(o, a);
}
