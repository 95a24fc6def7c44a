/* compare_out.c -- the comparison as readable text (stdout) and as JSON (--json).
 *
 * Times are printed with 3 significant digits in ns, us, ms or s; numbers that could
 * not be computed (a side without windows, no summary) are "n/a" in text, null in JSON.
 */
#include "compare.h"

#include <math.h>
#include <string.h>

const char *format_ns(double ns, char *buf, size_t size)
{
    static const char *const units[] = { "ns", "us", "ms", "s" };
    int u = 0;
    double v = ns;
    if (isnan(ns)) {
        snprintf(buf, size, "n/a");
        return buf;
    }
    while (u < 3 && fabs(v) >= 999.5) {
        v /= 1000;
        u++;
    }
    snprintf(buf, size, fabs(v) >= 99.95 || u == 0 ? "%.0f %s" : fabs(v) >= 9.995 ? "%.1f %s"
                                                                              : "%.2f %s",
             v, units[u]);
    return buf;
}

void program_line(char *const *program, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; program[i] && used + 1 < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " " : "", program[i]);
}

/* "12.5%" or "n/a" */
static const char *percent(double share, char *buf, size_t size)
{
    snprintf(buf, size, isnan(share) ? "n/a" : "%.1f%%", share * 100);
    return buf;
}

#define ROW "  %-30s %16s %16s\n"

/* "24.0" or "n/a" */
static const char *decimal(double x, char *buf, size_t size)
{
    snprintf(buf, size, isnan(x) ? "n/a" : "%.1f", x);
    return buf;
}

/* One row of the side-by-side table: a time of each side. */
static void time_row(FILE *out, const char *label, double off, double on)
{
    char a[32], b[32];
    fprintf(out, ROW, label, format_ns(off, a, sizeof a), format_ns(on, b, sizeof b));
}

/* "11.2..11.8 ms" (one unit when both have it), from seconds */
static const char *range(double lo_s, double hi_s, char *buf, size_t size)
{
    char lo[32], hi[32];
    const char *lo_unit = strchr(format_ns(lo_s * 1e9, lo, sizeof lo), ' ');
    const char *hi_unit = strchr(format_ns(hi_s * 1e9, hi, sizeof hi), ' ');
    if (lo_unit && hi_unit && strcmp(lo_unit, hi_unit) == 0)
        lo[lo_unit - lo] = '\0';
    snprintf(buf, size, "%s..%s", lo, hi);
    return buf;
}

static void side_table(FILE *out, const struct figures *f)
{
    const struct side_figures *off = &f->side[OFF], *on = &f->side[ON];
    char a[80], b[80];
    fprintf(out, ROW, "", "graphing off", "graphing on");
    time_row(out, "wall time, median", off->wall_med * 1e9, on->wall_med * 1e9);
    fprintf(out, ROW, "wall time, min..max", range(off->wall_min, off->wall_max, a, sizeof a),
            range(on->wall_min, on->wall_max, b, sizeof b));
    fprintf(out, "  %-30s %16lu %16lu\n", "windows measured", off->windows, on->windows);
    time_row(out, "window latency p50", off->p50, on->p50);
    time_row(out, "window latency p90", off->p90, on->p90);
    time_row(out, "window latency p99", off->p99, on->p99);
    fprintf(out, ROW, "submits per window", decimal(off->submits_per_window, a, sizeof a),
            decimal(on->submits_per_window, b, sizeof b));
    fprintf(out, ROW, "submits held (run in graphs)", percent(off->held_share, a, sizeof a),
            percent(on->held_share, b, sizeof b));
    time_row(out, "inside launch calls, median", off->launch_med, on->launch_med);
    time_row(out, "shim's own work, median", off->shim_med, on->shim_med);
}

static void print_speedup(FILE *out, const char *at, double x, const double spread[2],
                          const char *of)
{
    if (isnan(x)) {
        fprintf(out, "speedup off/on at %s: n/a\n", at);
        return;
    }
    fprintf(out, "speedup off/on at %s: %.2fx (p25..p75 of the per-run ratios of %s: "
            "%.2fx..%.2fx)\n", at, x, of, spread[0], spread[1]);
}

static void print_outputs(FILE *out, const struct figures *f)
{
    if (f->outputs == OUT_SAME && f->check)
        fprintf(out, "stdout: the %lu line%s matching --check '%s' identical in all %d runs\n",
                f->checked_lines, f->checked_lines == 1 ? "" : "s", f->check, 2 * f->runs);
    else if (f->outputs == OUT_SAME)
        fprintf(out, "stdout: identical in all %d runs\n", 2 * f->runs);
    else if (f->outputs == OUT_UNSTABLE)
        fprintf(out, "stdout: not compared: it differs between runs with graphing off%s\n",
                f->check ? " (in the lines matching --check)" : " (--check REGEX compares "
                "only the lines that should not change)");
    else if (f->outputs == OUT_NO_MATCH)
        fprintf(out, "stdout: not compared: no line matches --check '%s'\n", f->check);
    else
        fprintf(out, "WARNING: stdout of run %s differs from run off-1: graphing changed "
                "what the program printed\n", f->differ_run);
}

void print_report(FILE *out, const struct figures *f, const char *kept, const char *svg,
                  const char *json)
{
    char line[512], a[32], b[32];
    program_line(f->program, line, sizeof line);
    fprintf(out, "autograph compare: %s\n%d run%s per side, alternating; the first %d windows "
            "of each run left out\n\n", line, f->runs, f->runs == 1 ? "" : "s", f->warmup);
    side_table(out, f);
    fputc('\n', out);
    if (f->side[OFF].windows + f->side[ON].windows == 0)
        fprintf(out, "no window measured: no run had more than the %d left out (--warmup "
                "0 keeps them; a program that synchronizes only at its end has one); the "
                "wall times still compare the runs\n", f->warmup);
    print_speedup(out, "p50", f->speedup_p50, f->spread_p50, "medians");
    print_speedup(out, "p90", f->speedup_p90, f->spread_p90, "p90s");
    fprintf(out, "kernel launches graphed (graphing on): %s (%lu of %lu)\n",
            percent(f->graphed_share, a, sizeof a), f->launches_graphed, f->kernel_launches);
    fprintf(out, "time inside launch calls per window, graphing off: %s (median), %s of the "
            "p50 window: the most graphing can remove", format_ns(f->side[OFF].launch_med, a,
            sizeof a), percent(f->launch_share, b, sizeof b));
    if (isfinite(f->ceiling))
        fprintf(out, " (at most about %.2fx at p50)", f->ceiling);
    fputc('\n', out);
    fprintf(out, "recovered: %s of it ((p50 off - p50 on) / that time)\n",
            percent(f->recovered, b, sizeof b));
    if (f->guard_runs)
        fprintf(out, "speed guard, in each run with graphing on: eager took %.3fx the time of "
                "graphed work (median of %lu runs' last verdicts); %lu run%s paused graphing "
                "at least once\n", f->guard_speedup, f->guard_runs, f->guard_paused,
                f->guard_paused == 1 ? "" : "s");
    print_outputs(out, f);
    if (svg)
        fprintf(out, "figure: %s\n", svg);
    if (json)
        fprintf(out, "json: %s\n", json);
    if (kept)
        fprintf(out, "runs kept in: %s\n", kept);
    else if (f->outputs == OUT_DIFFER)
        fprintf(out, "(compare --keep DIR keeps every run's stdout to look at)\n");
}

/* ---- JSON -------------------------------------------------------------------------- */

static void json_num(FILE *out, const char *key, double v, const char *after)
{
    if (isfinite(v))
        fprintf(out, "\"%s\": %.10g%s", key, v, after);
    else
        fprintf(out, "\"%s\": null%s", key, after);
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void json_side(FILE *out, const char *name, const struct side_figures *s,
                      const struct side_data *d)
{
    fprintf(out, "  \"%s\": {\"wall_s\": [", name);
    for (size_t i = 0; i < d->wall.n; i++)
        fprintf(out, "%s%.6f", i ? ", " : "", d->wall.v[i]);
    fprintf(out, "], ");
    json_num(out, "wall_s_median", s->wall_med, ", ");
    fprintf(out, "\"windows\": %lu, \"windows_in_files\": %lu, ", s->windows, d->windows_all);
    json_num(out, "latency_ns_p50", s->p50, ", ");
    json_num(out, "latency_ns_p90", s->p90, ", ");
    json_num(out, "latency_ns_p99", s->p99, ", ");
    json_num(out, "submits_per_window", s->submits_per_window, ", ");
    json_num(out, "held_share", s->held_share, ", ");
    json_num(out, "launch_ns_median", s->launch_med, ", ");
    json_num(out, "shim_ns_median", s->shim_med, ", ");
    fprintf(out, "\"kernel_launches\": %lu, \"launches_graphed\": %lu},\n",
            d->kernel_launches, d->launches_graphed);
}

static void json_body(FILE *out, const struct figures *f, const struct side_data side[2])
{
    static const char *const outputs[] = { "identical", "differ", "unstable", "no_match" };
    fprintf(out, "{\n  \"format\": \"autograph compare v1\",\n  \"program\": [");
    for (int i = 0; f->program[i]; i++) {
        fputs(i ? ", " : "", out);
        json_string(out, f->program[i]);
    }
    fprintf(out, "],\n  \"runs\": %d, \"warmup_windows\": %d,\n", f->runs, f->warmup);
    json_side(out, "off", &f->side[OFF], &side[OFF]);
    json_side(out, "on", &f->side[ON], &side[ON]);
    fprintf(out, "  \"speedup\": {\"spread\": \"p25..p75 of the per-run ratios\", ");
    json_num(out, "p50", f->speedup_p50, ", ");
    json_num(out, "p50_p25", f->spread_p50[0], ", ");
    json_num(out, "p50_p75", f->spread_p50[1], ", ");
    json_num(out, "p90", f->speedup_p90, ", ");
    json_num(out, "p90_p25", f->spread_p90[0], ", ");
    json_num(out, "p90_p75", f->spread_p90[1], "},\n  ");
    json_num(out, "graphed_share", f->graphed_share, ",\n  ");
    json_num(out, "launch_ns_per_window_off", f->side[OFF].launch_med, ",\n  ");
    json_num(out, "recovered_share", f->recovered, ",\n  ");
    json_num(out, "launch_share_off", f->launch_share, ",\n  ");
    json_num(out, "ceiling_p50", f->ceiling, ",\n  ");
    json_num(out, "guard_speedup", f->guard_speedup, ",\n");
    fprintf(out, "  \"guard_runs\": %lu, \"guard_runs_paused\": %lu,\n", f->guard_runs,
            f->guard_paused);
    fprintf(out, "  \"stdout\": \"%s\", \"stdout_check\": ", outputs[f->outputs]);
    if (f->check)
        json_string(out, f->check);
    else
        fputs("null", out);
    fprintf(out, ", \"stdout_lines_checked\": %lu\n}\n", f->checked_lines);
}

int write_json(const char *path, const struct figures *f, const struct side_data side[2])
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return fail(EXIT_RUN, "--json %s: cannot write it", path);
    json_body(out, f, side);
    return fclose(out) == 0 ? 0 : fail(EXIT_RUN, "--json %s: cannot write it", path);
}
