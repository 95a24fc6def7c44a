/* main.c -- autograph-analyze: the command line.  Reads a trace (a file, or "-": the
 * standard input) and its graph files, runs the analysis, writes the chosen outputs.
 * Exit status: 0 when the report decides every question, 3 when it leaves some or all
 * undecided (status.c), 1 on any input or output error (one line on stderr,
 * "autograph-analyze: FILE: byte N: ..."), 2 on a usage error. */
#include "analysis.h"
#include "eager.h"
#include "graph_read.h"
#include "json_stream.h"
#include "report.h"
#include "svg_dot.h"

#include "input.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ERR_SIZE 1024
#define EXIT_UNDECIDED 3

struct opts {
    const char *text, *json, *dot, *svg, *annotate, *svg_engine;
    double eps_us;
    unsigned replays;
    int quiet, stats, find_graphs;
    const char *trace;          /* the file read: "-", or a copy of the standard input */
    char **graphs;
    int n_graphs;
};

static const char usage[] =
    "usage: autograph-analyze [options] TRACE [GRAPH...]\n"
    "  TRACE  a Chrome trace: the PyTorch profiler's (Kineto) or libautograph's,\n"
    "         .json or .json.gz (analyzer/FORMAT.md)\n"
    "  GRAPH  graph data files (get_graph_data JSON, .json or .json.gz) or folders of\n"
    "         them; default: TRACE.graphs/ or STEM.graphs/ beside the trace, if there\n"
    "options:\n"
    "  -o, --output FILE     the text report there (default: stdout)\n"
    "  --json FILE           the JSON report (- for stdout)\n"
    "  --dot FILE            the graphs as Graphviz DOT, false dependencies red, dashed\n"
    "  --svg FILE            the graphs as SVG\n"
    "  --svg-engine E        auto (Graphviz dot if installed, else built-in), dot, builtin\n"
    "  --annotate FILE       the trace with flow arrows for true and false dependencies\n"
    "                        (a name ending in .gz is written compressed)\n"
    "  --epsilon US          serialization threshold, microseconds (default 2)\n"
    "  --replays N           replays listed per graph in the text report (default 3)\n"
    "  --no-graphs           do not look for graph files beside the trace\n"
    "  --stats               throughput and peak memory on stderr\n"
    "  -q, --quiet           no text report\n"
    "  --read-buffer BYTES   read the inputs BYTES at a time (for tests; default 1 MiB)\n"
    "  --window-max N        cut eager windows after N records (for tests; default 65536)\n"
    "  -h, --help            this text\n"
    "TRACE - reads the standard input.\n"
    "exit status: 0 the report decides every question (true or false dependencies,\n"
    "  critical paths, estimated spans), 3 it leaves some or all undecided (the report's\n"
    "  status line and \"status\" say which), 1 error, 2 usage error\n";

static int fail(const char *msg)
{
    fprintf(stderr, "autograph-analyze: %s\n", msg);
    return 1;
}

static int parse_number(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

static int parse_option(struct opts *o, int c, const char *arg)
{
    double v;
    switch (c) {
    case 'o': o->text = arg; return 0;
    case 'j': o->json = arg; return 0;
    case 'd': o->dot = arg; return 0;
    case 's': o->svg = arg; return 0;
    case 'a': o->annotate = arg; return 0;
    case 'q': o->quiet = 1; return 0;
    case 'S': o->stats = 1; return 0;
    case 'n': o->find_graphs = 0; return 0;
    case 'E':
        o->svg_engine = arg;
        return strcmp(arg, "auto") && strcmp(arg, "dot") && strcmp(arg, "builtin") ? -1 : 0;
    case 'e':
        return parse_number(arg, 0, 1e9, &o->eps_us);
    case 'r':
        if (parse_number(arg, 0, 1e9, &v) != 0)
            return -1;
        o->replays = (unsigned)v;
        return 0;
    case 'B':
        if (parse_number(arg, 1, 1 << 30, &v) != 0)
            return -1;
        js_set_buffer_size((size_t)v);
        input_set_chunk((size_t)v);
        return 0;
    case 'W':
        if (parse_number(arg, 1, EAGER_WINDOW_MAX, &v) != 0)
            return -1;
        eager_set_window_max((uint32_t)v);
        return 0;
    default:
        return -1;
    }
}

static const struct option longs[] = {
    { "output", 1, 0, 'o' }, { "json", 1, 0, 'j' }, { "dot", 1, 0, 'd' },
    { "svg", 1, 0, 's' }, { "svg-engine", 1, 0, 'E' }, { "annotate", 1, 0, 'a' },
    { "epsilon", 1, 0, 'e' }, { "replays", 1, 0, 'r' }, { "no-graphs", 0, 0, 'n' },
    { "stats", 0, 0, 'S' }, { "quiet", 0, 0, 'q' }, { "help", 0, 0, 'h' },
    { "read-buffer", 1, 0, 'B' }, { "window-max", 1, 0, 'W' }, { 0, 0, 0, 0 },
};

static const char *option_name(int c)
{
    for (const struct option *l = longs; l->name; l++)
        if (l->val == c)
            return l->name;
    return "?";
}

static int parse_args(struct opts *o, int argc, char **argv)
{
    int c;
    *o = (struct opts){ .eps_us = 2.0, .replays = 3, .find_graphs = 1, .svg_engine = "auto" };
    while ((c = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            exit(0);
        }
        if (parse_option(o, c, optarg) != 0) {
            if (c != '?')
                fprintf(stderr, "autograph-analyze: bad value \"%s\" for --%s\n", optarg,
                        option_name(c));
            fputs(usage, stderr);
            return -1;
        }
    }
    if (optind >= argc) {
        fputs(usage, stderr);
        return -1;
    }
    o->trace = argv[optind];
    o->graphs = argv + optind + 1;
    o->n_graphs = argc - optind - 1;
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int graph_file_name(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return (n > 5 && strcmp(d->d_name + n - 5, ".json") == 0)
           || (n > 8 && strcmp(d->d_name + n - 8, ".json.gz") == 0);
}

/* A graph file, or every *.json / *.json.gz of a folder (in name order). */
static int load_graphs(struct graphset *gs, const char *path, char *err)
{
    struct dirent **names;
    int n, rc = 0;
    if (!is_dir(path))
        return graph_read_file(gs, path, err, ERR_SIZE);
    n = scandir(path, &names, graph_file_name, alphasort);
    if (n < 0) {
        snprintf(err, ERR_SIZE, "%s: cannot list the folder", path);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", path, names[i]->d_name);
        if (rc == 0)
            rc = graph_read_file(gs, file, err, ERR_SIZE);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* TRACE.graphs/, else STEM.graphs/ (the trace's name without .json or .json.gz). */
static const char *graphs_beside(const char *trace, char *buf, size_t size)
{
    size_t n = strlen(trace);
    snprintf(buf, size, "%s.graphs", trace);
    if (is_dir(buf))
        return buf;
    if (n > 3 && strcmp(trace + n - 3, ".gz") == 0)
        n -= 3;
    if (n > 5 && strncmp(trace + n - 5, ".json", 5) == 0)
        n -= 5;
    snprintf(buf, size, "%.*s.graphs", (int)n, trace);
    return is_dir(buf) ? buf : NULL;
}

static int read_inputs(const struct opts *o, struct trace *t, struct graphset *gs,
                       const char **from, char *dirbuf, size_t dirsize, char *err)
{
    size_t dups = 0;
    if (graphset_init(gs) != 0)
        return snprintf(err, ERR_SIZE, "out of memory"), -1;
    if (trace_read_file(t, o->trace, err, ERR_SIZE) != 0)
        return -1;
    *from = NULL;
    for (int i = 0; i < o->n_graphs; i++)
        if (load_graphs(gs, o->graphs[i], err) != 0)
            return -1;
    if (o->n_graphs == 0 && o->find_graphs && (*from = graphs_beside(o->trace, dirbuf,
                                                                     dirsize)) != NULL)
        if (load_graphs(gs, *from, err) != 0)
            return -1;
    graphset_index(gs, &dups);
    gs->dups = dups;
    return 0;
}

/* Notes about the graph files themselves. */
static void note_graph_files(struct analysis *a)
{
    size_t unused = 0, no_id = 0;
    for (size_t i = 0; i < a->gs->n; i++) {
        const struct graph *g = &a->gs->g[i];
        no_id += !g->has_exec_id;
        unused += g->has_exec_id && group_of_graph(a, g) == NULL;
    }
    if (no_id > 0 && a->by_graph)
        analysis_note(a, "which exec graph some graph files describe", "%zu graph file(s) have "
                      "a null exec_graph_id (dumped without CUPTI ids), so they cannot be "
                      "matched to trace records", no_id);
    if (unused > 0 && a->by_graph)
        analysis_note(a, "nothing about some graph files", "%zu graph file(s) describe exec "
                      "graphs with no record in the trace", unused);
    if (a->gs->dups > 0)
        analysis_note(a, "which of two files describes an exec graph", "%zu graph file(s) "
                      "repeat an exec_graph_id given earlier; the first one is used",
                      a->gs->dups);
}

static int write_text(const struct opts *o, const struct analysis *a, const char *from,
                      char *err)
{
    struct report_opts ro = { o->replays, from };
    struct out out;
    if (out_open(&out, o->text ? o->text : "-", err, ERR_SIZE) != 0)
        return -1;
    report_text(&out, a, &ro);
    return out_close(&out, err, ERR_SIZE);
}

static int write_annotated(const struct opts *o, const struct analysis *a, char *err)
{
    struct out out;
    if (out_open(&out, o->annotate, err, ERR_SIZE) != 0)
        return -1;
    if (trace_annotate(a, o->trace, &out, err, ERR_SIZE) != 0) {
        char ignored[8];
        out_close(&out, ignored, sizeof ignored);
        return -1;
    }
    return out_close(&out, err, ERR_SIZE);
}

static int write_outputs(const struct opts *o, const struct analysis *a, const char *from,
                         char *err)
{
    int text = !o->quiet && (o->text || !o->json || strcmp(o->json, "-") != 0);
    if (text && write_text(o, a, from, err) != 0)
        return -1;
    if (o->json && report_to_file(o->json, report_json, a, err, ERR_SIZE) != 0)
        return -1;
    if (o->dot && report_to_file(o->dot, report_dot, a, err, ERR_SIZE) != 0)
        return -1;
    if (o->svg && svg_write(o->svg, o->svg_engine, a, err, ERR_SIZE) != 0)
        return -1;
    if (o->annotate && write_annotated(o, a, err) != 0)
        return -1;
    return 0;
}

/* --annotate reads the trace twice: the standard input is copied to a file first. */
static int spool_stdin(struct opts *o, char *path, size_t size, char *err)
{
    const char *dir = getenv("TMPDIR");
    char buf[1 << 16];
    ssize_t n;
    int fd;
    snprintf(path, size, "%s/autograph-analyze-XXXXXX", dir && dir[0] ? dir : "/tmp");
    if ((fd = mkstemp(path)) < 0) {
        snprintf(err, ERR_SIZE, "-: cannot copy the standard input to %s: %s", path,
                 strerror(errno));
        path[0] = '\0';
        return -1;
    }
    while ((n = read(0, buf, sizeof buf)) != 0) {
        if ((n < 0 && errno != EINTR) || (n > 0 && write(fd, buf, (size_t)n) != n)) {
            snprintf(err, ERR_SIZE, "-: cannot copy the standard input to %s: %s", path,
                     strerror(errno));
            close(fd);
            return -1;
        }
    }
    close(fd);
    input_alias(path, "-");
    o->trace = path;
    return 0;
}

static void print_stats(const struct trace *t, const struct timespec *t0)
{
    struct timespec t1;
    struct rusage ru;
    double s, mb = (double)t->raw_bytes / 1e6;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &ru);
    s = (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
    fprintf(stderr, "autograph-analyze: stats: %.1f MB file (%.1f MB decompressed), %zu GPU "
            "records, %.3f s, %.1f MB/s, peak RSS %.1f MB (%.2fx the file)\n", mb,
            (double)t->bytes / 1e6, t->n, s, s > 0 ? mb / s : 0.0,
            (double)ru.ru_maxrss / 1024.0,
            mb > 0 ? (double)ru.ru_maxrss * 1024.0 / (double)t->raw_bytes : 0.0);
}

/* Large arrays (the analysis's temporary sorts, window graphs) come from mmap at a fixed
 * threshold, so that freeing one gives its memory back at once; glibc would otherwise
 * raise the threshold after the first free and keep later ones in the heap, where
 * freed holes between live arrays still count in the peak RSS. */
static void memory_policy(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

int main(int argc, char **argv)
{
    struct opts o;
    struct trace t;
    struct graphset gs;
    struct analysis a = { 0 };
    struct timespec t0;
    char err[ERR_SIZE] = "", dir[4096], spool[4096] = "";
    const char *from = NULL;
    int rc = 1;
    if (parse_args(&o, argc, argv) != 0)
        return 2;
    memory_policy();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    trace_init(&t, o.trace);
    if (strcmp(o.trace, "-") == 0) {
        o.find_graphs = 0;
        if (o.annotate && spool_stdin(&o, spool, sizeof spool, err) != 0) {
            if (spool[0])
                unlink(spool);
            return fail(err);
        }
    }
    if (read_inputs(&o, &t, &gs, &from, dir, sizeof dir, err) == 0
        && analysis_run(&a, &t, &gs, o.eps_us, err, sizeof err) == 0) {
        note_graph_files(&a);
        rc = write_outputs(&o, &a, from, err) == 0 ? 0 : 1;
        if (rc == 0 && a.status.all != ST_DECIDED)
            rc = EXIT_UNDECIDED;
    }
    if (rc != 1 && o.stats)
        print_stats(&t, &t0);
    if (rc == 1)
        fail(err);
    if (spool[0])
        unlink(spool);
    analysis_free(&a);
    graphset_free(&gs);
    trace_free(&t);
    return rc;
}
