/* svg.c -- compare's figure: the empirical CDF of the window latency of both sides,
 * on a log time axis, with p50, p90 and p99 of each marked (dot, dashed drop line,
 * value), a title naming the program and the runs, axis labels and a legend.  The
 * share axis is in "nines" (-log10(1 - share), up to 99.9%), so that p90 and p99 are
 * as far apart as p50 and p90 instead of crowding at the top.
 * Written by hand as SVG 1.1 text (valid XML: every text escaped).
 */
#include "compare.h"

#include <math.h>
#include <string.h>

#define WIDTH 860
#define HEIGHT 540
#define PX0 90.0                 /* the plot area */
#define PX1 830.0
#define PY0 70.0
#define PY1 450.0
#define CURVE_POINTS 600         /* per side */
#define NINES 3.0                /* the share axis ends at 99.9% */
#define PAD 0.12                 /* decades of time axis beyond the data */

static const char *const color[2] = { "#1f77b4", "#e6550d" };
static const char *const label[2] = { "graphing off", "graphing on" };
static const double marks[] = { 0.50, 0.90, 0.99 };

struct axis { double lo, hi; }; /* log10 of ns at PX0 and PX1 */

static double xpos(const struct axis *a, double ns)
{
    double l = log10(ns > 1 ? ns : 1);
    return PX0 + (l - a->lo) / (a->hi - a->lo) * (PX1 - PX0);
}

static double ypos(double share)
{
    double nines = share < 1 ? -log10(1 - share) : NINES;
    return PY1 - fmin(nines, NINES) / NINES * (PY1 - PY0);
}

static void xml_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, out);
        }
    }
}

/* From the smallest latency to the 99.9th percentile of both sides (sorted). */
static struct axis make_axis(const struct side_data side[2])
{
    double lo = INFINITY, hi = 0;
    struct axis a;
    for (int s = OFF; s <= ON; s++)
        if (side[s].latency.n) {
            lo = fmin(lo, fmax(samples_min(&side[s].latency), 1));
            hi = fmax(hi, fmax(quantile(&side[s].latency, 0.999), 1));
        }
    if (hi == 0)
        lo = hi = 1000;
    a.lo = log10(lo) - PAD;
    a.hi = fmax(log10(hi), a.lo + 2 * PAD) + PAD;
    return a;
}

/* "10 us" rather than "10.0 us" */
static const char *tick_label(double ns, char *buf, size_t size)
{
    char *dot, *space;
    format_ns(ns, buf, size);
    dot = strchr(buf, '.');
    space = strchr(buf, ' ');
    if (dot && space && strspn(dot + 1, "0") == (size_t)(space - dot - 1))
        memmove(dot, space, strlen(space) + 1);
    return buf;
}

/* Grid, ticks and labels of the log time axis: 1, 2 and 5 times each power of ten
 * (the 2s and 5s labelled when the axis spans at most 2.5 decades). */
static void x_axis(FILE *out, const struct axis *a)
{
    static const int mult[] = { 1, 2, 5 };
    char buf[32];
    for (int d = (int)floor(a->lo); d <= (int)ceil(a->hi); d++)
        for (int m = 0; m < 3; m++) {
            double ns = mult[m] * pow(10, d), x = xpos(a, ns);
            if (x < PX0 - 0.5 || x > PX1 + 0.5)
                continue;
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#ddd\"/>\n", x, PY0, x, PY1);
            if (m == 0 || a->hi - a->lo <= 2.5)
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                        x, PY1 + 18, tick_label(ns, buf, sizeof buf));
        }
}

static void y_axis(FILE *out)
{
    static const double ticks[] = { 0, 0.5, 0.75, 0.9, 0.99, 0.999 };
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        double y = ypos(ticks[i]);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g%%</text>\n", PX0, y, PX1,
                y, PX0 - 6, y + 4, ticks[i] * 100);
    }
}

static void frame(FILE *out, const struct axis *a)
{
    x_axis(out, a);
    y_axis(out);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#333\"/>\n", PX0, PY0, PX1 - PX0, PY1 - PY0);
    fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">window latency: first "
            "submit to the host synchronization that ends it (log scale)</text>\n",
            (PX0 + PX1) / 2, HEIGHT - 45);
    fprintf(out, "<text x=\"25\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 25 "
            "%.1f)\">share of windows at or below (scale: nines)</text>\n", (PY0 + PY1) / 2,
            (PY0 + PY1) / 2);
}

/* The CDF at CURVE_POINTS shares evenly spaced on the nines scale, up to 99.9% */
static void curve(FILE *out, const struct axis *a, const struct samples *v, int side)
{
    if (v->n == 0)
        return;
    fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
            color[side]);
    for (int j = 0; j <= CURVE_POINTS; j++) {
        double q = 1 - pow(10, -NINES * j / CURVE_POINTS);
        fprintf(out, "%s%.1f,%.1f", j ? " " : "", xpos(a, quantile(v, q)), ypos(q));
    }
    fprintf(out, "\"/>\n");
}

/* A mark's value goes on the side away from the other curve's, if it fits there. */
static int label_left(double x, double v, double other, size_t chars)
{
    double width = 6.6 * (double)chars + 6;
    int left = !isnan(other) && v <= other;
    if (left && x - width < PX0)
        return 0;
    if (!left && x + width > PX1)
        return 1;
    return left;
}

/* p50, p90, p99 of one side: a dot on the curve, a dashed drop line, the value (above
 * the dot for graphing off, below it for graphing on: the two never overlap) */
static void percentile_marks(FILE *out, const struct axis *a, const struct side_data side[2],
                             int s)
{
    char value[32], text[48];
    for (size_t i = 0; i < sizeof marks / sizeof marks[0] && side[s].latency.n; i++) {
        double v = quantile(&side[s].latency, marks[i]);
        double x = xpos(a, v), y = ypos(marks[i]);
        int left;
        snprintf(text, sizeof text, "p%g %s", marks[i] * 100, format_ns(v, value, sizeof value));
        left = label_left(x, v, quantile(&side[!s].latency, marks[i]), strlen(text));
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-dasharray=\"4,3\"/>\n<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                "fill=\"%s\"/>\n", x, y, x, PY1, color[s], x, y, color[s]);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\">%s</text>\n",
                left ? x - 6 : x + 6, s == OFF ? y - 6 : y + 16, left ? "end" : "start", color[s],
                text);
    }
}

static void legend(FILE *out, const struct figures *f)
{
    char buf[32];
    const double x0 = PX1 - 340, y0 = PY1 - 58;     /* lower right: long, rare windows */
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"330\" height=\"48\" fill=\"white\" "
            "stroke=\"#999\"/>\n", x0, y0);
    for (int s = OFF; s <= ON; s++) {
        double y = y0 + 18 + 18 * s;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"3\"/>\n<text x=\"%.1f\" y=\"%.1f\">%s: %lu windows, p50 %s"
                "</text>\n", x0 + 8, y - 4, x0 + 38, y - 4, color[s], x0 + 46, y,
                label[s], f->side[s].windows, format_ns(f->side[s].p50, buf, sizeof buf));
    }
}

/* "1.23x", or "n/a" */
static const char *times(double x, char *buf, size_t size)
{
    snprintf(buf, size, isnan(x) ? "n/a" : "%.2fx", x);
    return buf;
}

/* The title's font size: 16 px, or less for a long title (about 9 px a character at
 * 16 px), down to 11 px, so that it does not run off both edges of the figure. */
static double title_font(size_t chars)
{
    double font = 16.0;
    if (chars * 9 > WIDTH - 40)
        font = floor(10.0 * 16.0 * (WIDTH - 40) / (double)(chars * 9)) / 10.0;
    return font < 11.0 ? 11.0 : font;
}

static void title(FILE *out, const struct figures *f)
{
    static const char prefix[] = "autograph compare: ";
    char line[200], x50[16], x90[16];
    program_line(f->program, line, sizeof line);
    if (strlen(line) > 90)
        strcpy(line + 87, "...");
    fprintf(out, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"%.1f\">%s",
            WIDTH / 2, title_font(sizeof prefix - 1 + strlen(line)), prefix);
    xml_text(out, line);
    fprintf(out, "</text>\n<text x=\"%d\" y=\"50\" text-anchor=\"middle\">%d run%s per side, "
            "first %d windows of each run left out; speedup off/on: %s at p50, %s at "
            "p90</text>\n", WIDTH / 2, f->runs, f->runs == 1 ? "" : "s", f->warmup,
            times(f->speedup_p50, x50, sizeof x50), times(f->speedup_p90, x90, sizeof x90));
}

int write_svg(const char *path, const struct figures *f, const struct side_data side[2])
{
    struct axis a = make_axis(side);
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return fail(EXIT_RUN, "--svg %s: cannot write it", path);
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/"
            "2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" "
            "height=\"100%%\" fill=\"white\"/>\n", WIDTH, HEIGHT, WIDTH, HEIGHT);
    title(out, f);
    frame(out, &a);
    for (int s = OFF; s <= ON; s++)
        curve(out, &a, &side[s].latency, s);
    for (int s = OFF; s <= ON; s++)
        percentile_marks(out, &a, side, s);
    legend(out, f);
    fprintf(out, "</svg>\n");
    return fclose(out) == 0 ? 0 : fail(EXIT_RUN, "--svg %s: cannot write it", path);
}
