/* report_json.c -- the report for machines (analyzer/FORMAT.md, "JSON report"): the
 * input and its notes, then per group (exec graph, launch shape or eager window
 * shape) its totals, lanes, false dependency pairs and every replay with its
 * serializations; the eager window totals; then the lanes of the whole trace.  Times
 * are microseconds with 3 decimals (exact nanoseconds), keys ending in _us. */
#include "report.h"

#include <stdio.h>

static void lane_members(struct jw *w, const struct analysis *a, const struct lane_key *l)
{
    jw_int(w, "device", l->device);
    if (a->by_channel && l->id == LANE_NO_CHANNEL)
        jw_str(w, "channel", NULL);
    else
        jw_int(w, a->by_channel ? "channel" : "stream", l->id);
}

static void input(struct jw *w, const struct analysis *a)
{
    const struct trace *t = a->t;
    jw_begin(w, "input", '{');
    jw_str(w, "trace", t->path);
    jw_str(w, "source", trace_source_name(t->source));
    jw_bool(w, "gzip", t->gzip);
    jw_uint(w, "bytes", t->raw_bytes);
    jw_uint(w, "events", t->events);
    jw_uint(w, "gpu_records", t->n);
    jw_uint(w, "with_graph_node_id", t->with_node);
    jw_uint(w, "with_channel", t->with_channel);
    jw_uint(w, "with_correlation", t->with_corr);
    jw_begin(w, "graph_files", '[');
    for (size_t i = 0; i < a->gs->n; i++) {
        jw_begin(w, NULL, '{');
        jw_str(w, "file", a->gs->g[i].file);
        if (a->gs->g[i].has_exec_id)
            jw_uint(w, "exec_graph_id", a->gs->g[i].exec_id);
        else
            jw_str(w, "exec_graph_id", NULL);
        jw_uint(w, "nodes", a->gs->g[i].n);
        jw_end(w, '}');
    }
    jw_end(w, ']');
    jw_end(w, '}');
}

static void notes(struct jw *w, const struct analysis *a)
{
    jw_us(w, "epsilon_us", a->eps);
    jw_str(w, "lanes", a->by_channel ? "channel" : "stream");
    jw_bool(w, "replays_by_graph", a->by_graph);
    jw_str(w, "status", status_name(a->status.all));
    jw_begin(w, "questions", '{');
    jw_str(w, "dependencies", status_name(a->status.dep));
    jw_str(w, "critical_paths", status_name(a->status.cp));
    jw_str(w, "estimated_spans", status_name(a->status.est));
    jw_end(w, '}');
    if (a->hint)
        jw_str(w, "hint", status_hint);
    jw_begin(w, "cannot_decide", '[');
    for (size_t i = 0; i < a->n_notes; i++) {
        jw_begin(w, NULL, '{');
        jw_str(w, "what", a->notes[i].what);
        jw_str(w, "why", a->notes[i].why);
        jw_end(w, '}');
    }
    jw_end(w, ']');
}

/* An eager window's records named so that a checker can find them in the trace. */
static void record_keys(struct jw *w, const struct analysis *a, uint32_t from, uint32_t to)
{
    jw_int(w, "from_correlation", a->t->ev[from].corr);
    jw_int(w, "to_correlation", a->t->ev[to].corr);
    jw_int(w, "from_stream", a->t->ev[from].stream);
    jw_int(w, "to_stream", a->t->ev[to].stream);
}

static void ser_json(struct jw *w, const struct analysis *a, const struct group *g,
                     const struct ser *s)
{
    jw_begin(w, NULL, '{');
    jw_str(w, "class", ser_class_name(s->cls));
    jw_str(w, "kind", s->queued ? "queued" : "after_end");
    if (g->g != NULL && s->cls != SER_UNKNOWN) {
        jw_uint(w, "from_node", s->a_node);
        jw_uint(w, "to_node", s->b_node);
    }
    if (g->eager)
        record_keys(w, a, s->a, s->b);
    jw_str(w, "from", rec_name(a, s->a));
    jw_str(w, "to", rec_name(a, s->b));
    struct lane_key lane = lane_of(a, &a->t->ev[s->a]);
    lane_members(w, a, &lane);
    jw_us(w, "gap_us", s->gap);
    jw_us(w, "wait_us", s->wait);
    jw_end(w, '}');
}

static void replay_json(struct jw *w, const struct analysis *a, const struct group *g,
                        const struct replay *r)
{
    jw_begin(w, NULL, '{');
    jw_int(w, "correlation", r->corr);
    jw_us(w, "start_us", r->t0);
    jw_us(w, "span_us", r->span);
    jw_uint(w, "records", r->count);
    jw_uint(w, "lanes", r->lanes);
    jw_us(w, "idle_us", r->idle);
    jw_uint(w, "idle_gaps", r->gaps);
    jw_us(w, "max_gap_us", r->max_gap);
    if (r->has_cp) {
        jw_us(w, "critical_path_us", r->cp);
        jw_uint(w, "unmatched_records", r->unmatched);
        jw_uint(w, "duplicate_records", r->duplicates);
        jw_uint(w, "delayed_starts", r->delayed);
    }
    if (r->has_est) {
        jw_us(w, "estimated_span_us", r->est);
        jw_us(w, "estimated_gain_us", r->span - r->est);
    }
    jw_begin(w, "serializations", '[');
    for (uint32_t i = 0; i < r->ser_count; i++)
        ser_json(w, a, g, &a->sers[r->ser_first + i]);
    jw_end(w, ']');
    jw_end(w, '}');
}

static void pair_json(struct jw *w, const struct analysis *a, const struct group *g,
                      const struct pair_stat *p)
{
    jw_begin(w, NULL, '{');
    jw_uint(w, "from_node", p->a_node);
    jw_uint(w, "to_node", p->b_node);
    jw_str(w, "from", node_name(a, g->g, p->a_node));
    jw_str(w, "to", node_name(a, g->g, p->b_node));
    if (g->eager) {
        jw_int(w, "from_stream", g->g->nodes[p->a_node].stream);
        jw_int(w, "to_stream", g->g->nodes[p->b_node].stream);
    }
    lane_members(w, a, &p->lane);
    jw_uint(w, "replays", p->count);
    jw_us(w, "mean_wait_us", p->count ? p->wait_sum / p->count : 0);
    jw_us(w, "mean_gap_us", p->count ? p->gap_sum / p->count : 0);
    jw_end(w, '}');
}

static void totals(struct jw *w, const struct group *g)
{
    int64_t n = g->replays ? g->replays : 1;
    jw_us(w, "mean_span_us", g->span_sum / n);
    jw_us(w, "min_span_us", g->replays ? g->span_min : 0);
    jw_us(w, "max_span_us", g->span_max);
    jw_us(w, "mean_idle_us", g->idle_sum / n);
    if (g->n_cp > 0) {
        jw_us(w, "mean_critical_path_us", g->cp_sum / g->n_cp);
        jw_uint(w, "delayed_starts", g->delayed);
        jw_uint(w, "unmatched_records", g->unmatched);
    }
    if (g->n_est > 0) {
        jw_us(w, "mean_estimated_span_us", g->est_sum / g->n_est);
        jw_us(w, "mean_estimated_gain_us", g->span_sum / n - g->est_sum / g->n_est);
    }
    jw_begin(w, "serializations", '{');
    for (int c = 0; c < SER_CLASSES; c++)
        jw_uint(w, ser_class_name(c), g->n_cls[c]);
    jw_end(w, '}');
}

static void eager_window(struct jw *w, const struct group *g)
{
    char shape[17];
    snprintf(shape, sizeof shape, "%016llx", (unsigned long long)g->id);
    jw_begin(w, "eager_window", '{');
    jw_str(w, "shape", shape);
    jw_int(w, "device", g->device);
    jw_uint(w, "records", g->g->n);
    jw_uint(w, "streams", g->streams);
    jw_uint(w, "edges", g->g->m);
    jw_end(w, '}');
}

static void group_json(struct jw *w, const struct analysis *a, const struct group *g)
{
    jw_begin(w, NULL, '{');
    if (g->eager)
        eager_window(w, g);
    else if (g->by_graph)
        jw_uint(w, "exec_graph_id", g->id);
    else
        jw_uint(w, "launch_shape", g->id);
    if (!g->eager)
        jw_str(w, "graph_file", g->g ? g->g->file : NULL);
    if (g->mapped) {
        jw_begin(w, "mapping", '{');
        jw_str(w, "method", "kernel name, launch order, dependency order");
        jw_uint(w, "exact", g->map_exact);
        jw_uint(w, "by_stream", g->map_stream);
        jw_uint(w, "ambiguous", g->map_ambiguous);
        jw_uint(w, "unmapped", g->map_unmapped);
        jw_num(w, "confidence", map_confidence(g));
        jw_end(w, '}');
    }
    jw_uint(w, "replay_count", g->replays);
    totals(w, g);
    jw_begin(w, "occupancy", '[');
    for (size_t i = 0; i < g->n_lanes; i++) {
        jw_begin(w, NULL, '{');
        lane_members(w, a, &g->lanes[i].lane);
        jw_us(w, "busy_us", g->lanes[i].busy);
        jw_num(w, "busy_share", g->span_sum ? (double)g->lanes[i].busy / g->span_sum : 0);
        jw_end(w, '}');
    }
    jw_end(w, ']');
    jw_begin(w, "false_dependencies", '[');
    for (size_t i = 0; i < g->n_pairs; i++)
        pair_json(w, a, g, &g->pairs[i]);
    jw_end(w, ']');
    jw_begin(w, "replays", '[');
    for (uint32_t i = 0; i < g->replays; i++)
        replay_json(w, a, g, &a->replays[g->first_replay + i]);
    jw_end(w, ']');
    jw_end(w, '}');
}

static void eager_totals(struct jw *w, const struct analysis *a)
{
    const struct eager_totals *e = &a->eager;
    if (!e->present)
        return;
    jw_begin(w, "eager_windows", '{');
    jw_uint(w, "windows", e->windows);
    jw_uint(w, "groups", e->groups);
    jw_uint(w, "records", e->records);
    jw_uint(w, "host_syncs", e->host_syncs);
    jw_uint(w, "event_edges", e->event_edges);
    jw_uint(w, "implicit_edges", e->implicit_edges);
    jw_begin(w, "submission", '{');
    jw_uint(w, "api_records", e->submit_api);
    jw_uint(w, "host_estimated", e->submit_host);
    jw_uint(w, "unknown", e->submit_unknown);
    jw_end(w, '}');
    jw_end(w, '}');
}

static void lanes_json(struct jw *w, const struct analysis *a)
{
    jw_begin(w, "lanes_total", '[');
    for (size_t i = 0; i < a->n_lanes; i++) {
        const struct lane_total *l = &a->lanes[i];
        jw_begin(w, NULL, '{');
        lane_members(w, a, &l->lane);
        jw_uint(w, "records", l->records);
        jw_us(w, "busy_us", l->busy);
        jw_us(w, "first_us", l->first);
        jw_us(w, "last_us", l->last);
        jw_end(w, '}');
    }
    jw_end(w, ']');
}

void report_json(struct out *o, const struct analysis *a)
{
    struct jw w = { .o = o };
    jw_begin(&w, NULL, '{');
    jw_str(&w, "analyzer", "autograph-analyze");
    jw_int(&w, "format_version", 1);
    input(&w, a);
    notes(&w, a);
    jw_begin(&w, "groups", '[');
    for (size_t i = 0; i < a->n_groups; i++)
        group_json(&w, a, &a->groups[i]);
    jw_end(&w, ']');
    eager_totals(&w, a);
    lanes_json(&w, a);
    jw_end(&w, '}');
}
