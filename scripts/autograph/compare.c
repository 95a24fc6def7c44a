/* compare.c -- autograph compare [OPTIONS] -- PROGRAM [ARGS]: PROGRAM N times with
 * graphing off and N times with it on, alternately, measured the same way.
 *
 * Run i of each side gets a folder under the base folder (--keep DIR, else a
 * temporary one, removed at the end): off-<i>/ and on-<i>/ hold the program's
 * stdout and stderr, timing.<pid> (AUTOGRAPH_TIMING) and, graphing on,
 * summary.<pid> (AUTOGRAPH_SUMMARY_FILE).  Pair i runs off first when i is odd, on
 * first when it is even, so that a machine warming up or slowing down weighs on both.
 */
#include "compare.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct compare_opts {
    int runs, warmup;
    const char *svg, *json, *keep, *check;
    regex_t check_re;                   /* --check, compiled (check != NULL) */
};

/* What every run needs. */
struct run_ctx {
    const struct compare_opts *o;
    const struct settings *settings;
    char *const *program;
    const char *lib, *base;
};

static int int_option(const char *name, const char *v, int min, int max, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < min || n > max) {
        usage_error("compare", "%s takes an integer from %d to %d, not '%s'", name, min, max,
                    v);
        return -1;
    }
    *out = (int)n;
    return 1;
}

/* --check REGEX: a POSIX extended regular expression, compiled once (the last
 * --check given counts). */
static int compile_check(struct compare_opts *o, const char *v)
{
    char why[256];
    int rc;
    if (o->check)
        regfree(&o->check_re);
    o->check = NULL;
    rc = regcomp(&o->check_re, v, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        regerror(rc, &o->check_re, why, sizeof why);
        regfree(&o->check_re);
        usage_error("compare", "--check '%s': not a regular expression (%s)", v, why);
        return -1;
    }
    o->check = v;
    return 1;
}

static int compare_option(void *ctx, int argc, char **argv, int *i)
{
    struct compare_opts *o = ctx;
    const struct { const char *name; const char **str; int *num, min, max; } opts[] = {
        { "-n", NULL, &o->runs, 1, 1000 },
        { "--warmup", NULL, &o->warmup, 0, 1000000 },
        { "--svg", &o->svg, NULL, 0, 0 },
        { "--json", &o->json, NULL, 0, 0 },
        { "--keep", &o->keep, NULL, 0, 0 },
        { "--check", &o->check, NULL, 0, 0 },
    };
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        const char *v;
        int r = option_value("compare", opts[k].name, argc, argv, i, &v);
        if (r == 0)
            continue;
        if (r < 0)
            return -1;
        if (opts[k].str == &o->check)
            return compile_check(o, v);
        if (opts[k].str) {
            *opts[k].str = v;
            return 1;
        }
        return int_option(opts[k].name, v, opts[k].min, opts[k].max, opts[k].num);
    }
    return 0;
}

/* compare sets these itself on each side */
static int check_settings(const struct settings *s)
{
    static const char *const own[] = { "AUTOGRAPH", "AUTOGRAPH_TIMING",
                                       "AUTOGRAPH_SUMMARY_FILE" };
    for (int i = 0; i < s->n; i++)
        for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
            if (strcmp(s->name[i], own[k]) == 0)
                return usage_error("compare", "--set %s: compare sets %s itself", own[k],
                                   own[k]);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) != 0 && errno != ENOENT;
}

static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The base folder, absolute, into `base`: --keep DIR (made if needed), or a new
 * temporary one. */
static int make_base(const struct compare_opts *o, char *base, size_t size)
{
    char tmpl[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    const char *dir = o->keep;
    if (dir == NULL) {
        snprintf(tmpl, sizeof tmpl, "%s/autograph-compare.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        dir = mkdtemp(tmpl);
        if (dir == NULL)
            return fail(EXIT_RUN, "cannot make a folder %s: %s", tmpl, strerror(errno));
    } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        return fail(EXIT_RUN, "--keep %s: %s", dir, strerror(errno));
    }
    if (realpath(dir, base) == NULL || strlen(base) >= size - 64)
        return fail(EXIT_RUN, "%s: %s", dir, strerror(errno));
    return 0;
}

/* One run of one side: the program in its own folder, then its files read. */
static int run_one(const struct run_ctx *c, int side, int i, struct side_data *data)
{
    char dir[PATH_MAX], timing[PATH_MAX + 16], summary[PATH_MAX + 16];
    char out[PATH_MAX + 16], err[PATH_MAX + 16];
    struct settings s = *c->settings;
    struct spawned r;
    snprintf(dir, sizeof dir, "%s/%s-%d", c->base, side_name[side], i + 1);
    remove_tree(dir);                               /* an earlier --keep run's files */
    if (mkdir(dir, 0777) != 0)
        return fail(EXIT_RUN, "cannot make %s: %s", dir, strerror(errno));
    snprintf(timing, sizeof timing, "%s/timing.%%p", dir);
    snprintf(summary, sizeof summary, "%s/summary.%%p", dir);
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    settings_put(&s, "AUTOGRAPH", side_name[side]);
    settings_put(&s, "AUTOGRAPH_TIMING", timing);
    if (side == ON)
        settings_put(&s, "AUTOGRAPH_SUMMARY_FILE", summary);
    if (spawn_program(c->program, &s, c->lib, out, err, &r) != 0)
        return EXIT_RUN;
    if (r.status != 0) {
        fail(EXIT_RUN, "%s exited with status %d (run %d, graphing %s); its stderr ends:",
             c->program[0], r.status, i + 1, side_name[side]);
        show_tail(err, 10);
        return EXIT_RUN;
    }
    samples_push(&data->wall, r.wall_s);
    return collect_run(dir, c->o->warmup, data);
}

static int run_all(const struct run_ctx *c, struct side_data side[2])
{
    for (int i = 0; i < c->o->runs; i++) {
        int first = i % 2 ? ON : OFF, status;
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "autograph compare: run %d of %d\r", i + 1, c->o->runs);
        status = run_one(c, first, i, &side[first]);
        if (status == 0)
            status = run_one(c, !first, i, &side[!first]);
        if (status != 0)
            return status;
    }
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "%40s\r", "");
    return 0;
}

/* 1 if the two files have the same bytes */
static int same_file(const char *a, const char *b)
{
    char x[4096], y[4096];
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        size_t n = fread(x, 1, sizeof x, fa), m = fread(y, 1, sizeof y, fb);
        same = n == m && memcmp(x, y, n) == 0;
        if (n < sizeof x)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* The lines of file `path` that match `re`, one after the other (malloc'd, NULL if
 * the file cannot be read); their count in *count. */
static char *checked_lines(const char *path, const regex_t *re, size_t *len,
                           unsigned long *count)
{
    char *line = NULL, *all = NULL;
    size_t cap = 0;
    ssize_t n;
    FILE *f = fopen(path, "r"), *mem = NULL;
    *len = 0;
    *count = 0;
    if (f == NULL || (mem = open_memstream(&all, len)) == NULL) {
        if (f)
            fclose(f);
        return NULL;
    }
    while ((n = getline(&line, &cap, f)) >= 0)
        if (regexec(re, line, 0, NULL, 0) == 0) {
            fwrite(line, 1, (size_t)n, mem);
            ++*count;
        }
    free(line);
    fclose(f);
    fclose(mem);
    return all;
}

/* 1 if the two files have the same lines matching `re` (NULL: the same bytes); the
 * matching lines of `a` counted into *count. */
static int same_output(const char *a, const char *b, const regex_t *re,
                       unsigned long *count)
{
    size_t na, nb;
    unsigned long cb;
    char *x, *y;
    int same;
    if (re == NULL)
        return same_file(a, b);
    x = checked_lines(a, re, &na, count);
    y = checked_lines(b, re, &nb, &cb);
    same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* The stdout of every run against off-1's (only its lines matching `re`, unless NULL):
 * the off runs among themselves first (a program whose output changes from run to run
 * cannot be checked).  With `re`, off-1 must have a matching line. */
static enum outputs check_outputs(const char *base, int runs, const regex_t *re,
                                  unsigned long *lines, const char **differ)
{
    static char name[32];
    char ref[PATH_MAX + 16], other[PATH_MAX + 32];
    snprintf(ref, sizeof ref, "%s/off-1/stdout", base);
    *lines = 0;
    for (int side = OFF; side <= ON; side++)
        for (int i = side == OFF ? 2 : 1; i <= runs; i++) {
            snprintf(other, sizeof other, "%s/%s-%d/stdout", base, side_name[side], i);
            if (same_output(ref, other, re, lines))
                continue;
            if (side == OFF)
                return OUT_UNSTABLE;
            snprintf(name, sizeof name, "on-%d", i);
            *differ = name;
            return OUT_DIFFER;
        }
    return re && *lines == 0 ? OUT_NO_MATCH : OUT_SAME;
}

/* After the runs: the figures, the report and its files; the exit status. */
static int conclude(const struct run_ctx *c, struct side_data side[2], struct figures *f)
{
    const char *svg = strcmp(c->o->svg, "none") == 0 ? NULL : c->o->svg;
    f->check = c->o->check;
    f->outputs = check_outputs(c->base, c->o->runs, c->o->check ? &c->o->check_re : NULL,
                               &f->checked_lines, &f->differ_run);
    figures_compute(side, f);
    if (side[OFF].windows_all + side[ON].windows_all == 0)
        return fail(EXIT_RUN, "%s recorded no window (no CUDA work through the driver "
                    "followed by a synchronization)", c->program[0]);
    if ((c->o->json && write_json(c->o->json, f, side) != 0) ||
        (svg && write_svg(svg, f, side) != 0))
        return EXIT_RUN;
    print_report(stdout, f, c->o->keep ? c->base : NULL, svg, c->o->json);
    if (f->outputs == OUT_NO_MATCH)
        return fail(EXIT_RUN, "--check '%s': no line of the program's stdout matches it",
                    c->o->check);
    return f->outputs == OUT_DIFFER ? EXIT_DIFFER : EXIT_OK;
}

static int compare(struct compare_opts *o, int argc, char **argv)
{
    struct settings s = { .n = 0 };
    struct side_data side[2] = { { .windows_all = 0 }, { .windows_all = 0 } };
    struct figures f = { .runs = 0 };
    char lib[PATH_MAX], base[PATH_MAX];
    int prog = parse_command("compare", argc, argv, &s, 0, compare_option, o), status;
    struct run_ctx c = { o, &s, argv + (prog > 0 ? prog : 0), lib, base };
    if (prog == PARSE_HELP)
        return EXIT_OK;
    if (prog < 0 || check_settings(&s) != 0)
        return EXIT_USAGE;
    if (find_library(s.lib, lib, sizeof lib) != 0 || make_base(o, base, sizeof base) != 0)
        return EXIT_RUN;
    f.program = c.program;
    f.runs = o->runs;
    f.warmup = o->warmup;
    status = run_all(&c, side);
    if (status == 0)
        status = conclude(&c, side, &f);
    if (o->keep == NULL)
        remove_tree(base);
    side_free(&side[OFF]);
    side_free(&side[ON]);
    return status;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_opts o = { .runs = 5, .warmup = 2, .svg = "compare.svg" };
    int status = compare(&o, argc, argv);
    if (o.check)
        regfree(&o.check_re);
    return status;
}
