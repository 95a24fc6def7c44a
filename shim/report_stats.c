/* report_stats.c -- report: the explain log and the engine's exit summary lines.
 *
 * AUTOGRAPH_EXPLAIN=1 prints one line on stderr the first time a given window (by
 * hash) meets a given reason: why it was not graphed, why a replay stopped, why a
 * graph was dropped.  The summary counts windows, graphs, replays, patches,
 * variants, flushes by reason and the time spent building, over every engine (one
 * per context: engine_table.c), then each context's own graphs on a line of its own.
 */
#include "engine_internal.h"
#include "entry_points.h"
#include "log.h"
#include "match_speed.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The summary's and the explain log's name of each skip reason. */
static const char *const skip_names[AG_SKIP_COUNT] = {
    [AG_SKIP_NONE] = "none",
    [AG_SKIP_WARMUP] = "warmup",
    [AG_SKIP_SHAPE_VARIES] = "shape_varies",
    [AG_SKIP_SHORT] = "too_short",
    [AG_SKIP_FAILED_OP] = "failed_op",
    [AG_SKIP_PTDS_THREADS] = "ptds_threads",
    [AG_SKIP_LEGACY_MIX] = "legacy_mix",
    [AG_SKIP_STREAMS] = "too_many_streams",
    [AG_SKIP_EVENTS] = "too_many_events",
    [AG_SKIP_CONTEXT] = "contexts",
    [AG_SKIP_APP_CAPTURE] = "app_capture",
    [AG_SKIP_BUILD_FAILED] = "build_failed",
    [AG_SKIP_TOO_LONG] = "too_long",
    [AG_SKIP_LIGHT] = "recorded_light",
    [AG_SKIP_DROPPED_OFTEN] = "dropped_often",
    [AG_SKIP_BACKOFF] = "backoff",
};

const char *ag_skip_name(enum ag_skip why)
{
    return (unsigned)why < AG_SKIP_COUNT ? skip_names[why] : "?";
}

static int first_time(uint64_t hash, int code)
{
    uint64_t key = ag_hash_mix(hash, (uint64_t)(int64_t)code) | 1;
    size_t i = (size_t)(key % AG_EXPLAINED_SIZE);
    for (size_t probe = 0; probe < AG_EXPLAINED_SIZE;
         probe++, i = (i + 1) % AG_EXPLAINED_SIZE) {
        if (ag_eng.explained[i] == key)
            return 0;
        if (ag_eng.explained[i] == 0) {
            ag_eng.explained[i] = key;
            return 1;
        }
    }
    return 0;                        /* table full: stay quiet */
}

void ag_explain(uint64_t hash, int code, const char *fmt, ...)
{
    va_list ap;

    if (!ag_eng.p.explain || !first_time(hash, code))
        return;
    va_start(ap, fmt);
    ag_log_vline("explain: ", fmt, ap);
    va_end(ap);
}

/* "legacy (op 0, cuLaunchKernel), 0x55d0c0 (op 7, cuMemcpyHtoDAsync_v2), ..." */
static void describe_streams(const struct ag_window *w, char *buf, size_t cap)
{
    uintptr_t seen_streams[AG_MAX_SLOTS + 1];
    int nseen = 0;
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < w->n && nseen <= AG_MAX_SLOTS && used + 1 < cap; i++) {
        const struct ag_wop *o = &w->ops[i];
        int known = 0;
        for (int k = 0; k < nseen; k++)
            known |= seen_streams[k] == o->stream;
        if (known)
            continue;
        seen_streams[nseen++] = o->stream;
        if (o->stream == AG_STREAM_LEGACY || o->stream == AG_STREAM_PER_THREAD)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s (op %zu, %s)",
                                     used ? ", " : "",
                                     o->stream == AG_STREAM_LEGACY ? "legacy" : "per-thread",
                                     i, ag_entry_name[o->entry]);
        else
            used += (size_t)snprintf(buf + used, cap - used, "%s%#lx (op %zu, %s)",
                                     used ? ", " : "", (unsigned long)o->stream, i,
                                     ag_entry_name[o->entry]);
    }
}

/* AUTOGRAPH_LOG=debug: the window's ops, one line each, the first time a window of
 * this hash is not graphed. */
static void log_window_ops(const struct ag_window *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const struct ag_wop *o = &w->ops[i];
        ag_log(AG_LOG_DEBUG, "window %016llx op %zu: %s kind %d stream %#lx slot %u "
               "shape %016llx%s", (unsigned long long)w->hash, i, ag_entry_name[o->entry],
               (int)o->kind, (unsigned long)o->stream, (unsigned)o->slot,
               (unsigned long long)o->hash, o->light ? " light" : "");
    }
}

void ag_explain_skip(const struct ag_window *w, enum ag_skip why)
{
    char streams[512];
    if (!ag_eng.p.explain || !first_time(w->hash, why))
        return;
    streams[0] = 0;
    if (why == AG_SKIP_LEGACY_MIX)
        describe_streams(w, streams, sizeof streams);
    ag_log_topic("explain: ", "window of %zu ops: not graphed: %s%s%s", w->n,
                 ag_skip_name(why), streams[0] ? "; streams: " : "", streams);
    if (ag_log_enabled(AG_LOG_DEBUG))
        log_window_ops(w);
}

/* The counts of an engine, added to t.  Every field but the doubles, the peak (a
 * size_t, added: each context's graphs are on their own device) and the arrays is an
 * unsigned long. */
static void stats_add(struct ag_stats *t, const struct ag_stats *s)
{
    const unsigned long *from = &s->held_fast;
    unsigned long *to = &t->held_fast;
    size_t n = offsetof(struct ag_stats, patch_us) / sizeof *from;
    for (size_t i = 0; i < n; i++)
        to[i] += from[i];
    from = &s->windows;
    to = &t->windows;
    n = (offsetof(struct ag_stats, graph_bytes_peak) - offsetof(struct ag_stats, windows)) /
        sizeof *from;
    for (size_t i = 0; i < n; i++)
        to[i] += from[i];
    t->patch_us += s->patch_us;
    t->chunk_launch_us += s->chunk_launch_us;
    t->graph_bytes_peak += s->graph_bytes_peak;
    for (int r = 0; r < AG_FLUSH_REASON_COUNT; r++)
        t->flush[r] += s->flush[r];
    for (int k = 0; k < AG_SKIP_COUNT; k++)
        t->skip[k] += s->skip[k];
    t->build_us += s->build_us;
    t->instantiate_us += s->instantiate_us;
    t->launch_wait_us += s->launch_wait_us;
}

/* launches_paused: those the program made while the speed guard had graphing paused
 * (the summary's total; a context's line leaves them out). */
static double share_with(const struct ag_stats *s, unsigned long launches_paused)
{
    unsigned long total = s->launches_graphed + s->launches_eager + launches_paused;
    return total ? 100.0 * (double)s->launches_graphed / (double)total : 0.0;
}

/* The engines' counts added up, each read under its lock; *contexts: the engines
 * that saw a context. */
static void stats_total(struct ag_stats *t, int *contexts)
{
    int n = ag_engines_count();
    memset(t, 0, sizeof *t);
    *contexts = 0;
    for (int i = 0; i < n; i++) {
        struct ag_engine *e = ag_engine_at(i);
        ag_lock_take(&e->lock);
        stats_add(t, &e->s);
        *contexts += ag_engine_key(e) != 0;
        ag_lock_give(&e->lock);
    }
}

/* One line per context: its device and what was graphed there. */
static void context_lines(FILE *out, const char *prefix)
{
    int n = ag_engines_count();
    for (int i = 0; i < n; i++) {
        struct ag_engine *e = ag_engine_at(i);
        struct ag_stats s;
        if (ag_engine_key(e) == 0)
            continue;
        ag_lock_take(&e->lock);
        s = e->s;
        ag_lock_give(&e->lock);
        fprintf(out, "%scontext %d device %d templates %lu replays %lu "
                "launches_graphed %lu launches_eager %lu graphed_share %.1f%%\n", prefix, i,
                __atomic_load_n(&e->device, __ATOMIC_RELAXED), s.templates, s.replays,
                s.launches_graphed, s.launches_eager, share_with(&s, 0));
    }
}

/* The summary's engine lines (summary_lines.def): a name and the ag_stats field it
 * shows, or the graphed share, or the flush and skip reasons' lines. */
enum line_kind { LINE_COUNT, LINE_BYTES, LINE_MICROS, LINE_SHARE, LINE_REASONS };
struct summary_line {
    const char *name;
    size_t offset;
    enum line_kind kind;
};

static const struct summary_line summary_lines[] = {
#define AG_COUNT(name, field)  { #name, offsetof(struct ag_stats, field), LINE_COUNT },
#define AG_BYTES(name, field)  { #name, offsetof(struct ag_stats, field), LINE_BYTES },
#define AG_MICROS(name, field) { #name, offsetof(struct ag_stats, field), LINE_MICROS },
#define AG_SHARE(name)         { #name, 0, LINE_SHARE },
#define AG_REASONS(name)       { #name, 0, LINE_REASONS },
#include "summary_lines.def"
#undef AG_COUNT
#undef AG_BYTES
#undef AG_MICROS
#undef AG_SHARE
#undef AG_REASONS
};

/* "flush <reason> N" and "skip <reason> N" for each reason met */
static void reason_lines(FILE *out, const char *prefix, const struct ag_stats *s)
{
    for (int r = 1; r < AG_FLUSH_REASON_COUNT; r++)
        if (s->flush[r])
            fprintf(out, "%sflush %s %lu\n", prefix,
                    ag_flush_reason_name((enum ag_flush_reason)r), s->flush[r]);
    for (int k = 1; k < AG_SKIP_COUNT; k++)
        if (s->skip[k])
            fprintf(out, "%sskip %s %lu\n", prefix, ag_skip_name((enum ag_skip)k), s->skip[k]);
}

static void summary_line(FILE *out, const char *prefix, const struct ag_stats *s,
                         const struct summary_line *line, unsigned long launches_paused)
{
    const char *field = (const char *)s + line->offset;
    switch (line->kind) {
    case LINE_COUNT:
        fprintf(out, "%s%s %lu\n", prefix, line->name, *(const unsigned long *)field);
        break;
    case LINE_BYTES:
        fprintf(out, "%s%s %zu\n", prefix, line->name, *(const size_t *)field);
        break;
    case LINE_MICROS:
        fprintf(out, "%s%s %.0f\n", prefix, line->name, *(const double *)field);
        break;
    case LINE_SHARE:
        fprintf(out, "%s%s %.1f%%\n", prefix, line->name, share_with(s, launches_paused));
        break;
    case LINE_REASONS:
        reason_lines(out, prefix, s);
        break;
    }
}

void ag_engine_summary(FILE *out, const char *prefix)
{
    struct ag_stats s;
    unsigned long launches_paused = ag_speed_launches_paused();
    int contexts;

    stats_total(&s, &contexts);
    for (size_t i = 0; i < sizeof summary_lines / sizeof summary_lines[0]; i++)
        summary_line(out, prefix, &s, &summary_lines[i], launches_paused);
    ag_speed_summary(out, prefix, launches_paused);
    fprintf(out, "%spaused_flush_points %lu\n", prefix,
            __atomic_load_n(&ag_quiet_flush_points, __ATOMIC_RELAXED));
    fprintf(out, "%scontexts %d\n", prefix, contexts);
    context_lines(out, prefix);
}
