/* cli.h -- the autograph command: what its files share.
 *
 * main.c dispatches to cmd_run (run.c), cmd_compare (compare.c), cmd_report
 * (report.c) and cmd_help (help.c).  settings.c turns options into AUTOGRAPH_*
 * variables, paths.c finds the library and the analyzer, spawn.c runs a program,
 * collect.c reads what a run left, stats.c computes percentiles, figures.c the
 * comparison, compare_out.c and svg.c write it.
 */
#ifndef AUTOGRAPH_CLI_H
#define AUTOGRAPH_CLI_H

#include <stddef.h>
#include <stdio.h>

/* Exit statuses (help.c documents them). */
enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_RUN = 2, EXIT_DIFFER = 3 };

/* ---- main.c: messages ------------------------------------------------------------ */

/* "autograph: <message>" on stderr; returns `status` (for `return fail(...)`). */
int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "autograph CMD: <message> (see autograph help CMD)" on stderr; returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- settings.c: AUTOGRAPH_* variables for a program ------------------------------ */

#define SETTINGS_MAX 64
struct settings {
    const char *name[SETTINGS_MAX], *value[SETTINGS_MAX];
    int n;
    const char *lib;            /* --lib, or NULL: paths.c looks for it */
};

/* Sets (or replaces) NAME=VALUE. */
void settings_put(struct settings *s, const char *name, const char *value);
/* 1 if NAME is a switch the shim knows (shim/switches.def). */
int settings_known(const char *name);
/* Prints the known switch names, `per_line` to a line, each line after `indent`. */
void settings_list(FILE *out, const char *indent, int per_line);
/* Reads one option of run/compare shared by both (--set, --lib, and for run the
 * switch options) at argv[*i]; returns 1 if it was one (advancing *i), 0 if not, -1
 * on a usage error (reported).  `all`: accept the run-only switch options too. */
int settings_option(struct settings *s, const char *cmd, int argc, char **argv, int *i,
                    int all);
/* Puts the settings in this process's environment, with LD_PRELOAD=lib prepended;
 * 0, or -1 (reported). */
int settings_apply(const struct settings *s, const char *lib);

/* ---- options.c ------------------------------------------------------------------ */

/* A command's own options: like settings_option (1, 0 or -1 reported). */
typedef int (*extra_option_fn)(void *ctx, int argc, char **argv, int *i);
enum { PARSE_USAGE = -1, PARSE_HELP = -2 };
/* Parses argv[1..] (argv[0] is the command's name): the index of PROGRAM in argv, or
 * PARSE_USAGE (reported) or PARSE_HELP (the command's help was printed). */
int parse_command(const char *cmd, int argc, char **argv, struct settings *s, int all,
                  extra_option_fn extra, void *ctx);
/* Option helper: if argv[*i] is `--name VALUE` or `--name=VALUE`, sets *value
 * (advancing *i past VALUE) and returns 1; returns -1 (reported) when VALUE is
 * missing, 0 when argv[*i] is another option. */
int option_value(const char *cmd, const char *name, int argc, char **argv, int *i,
                 const char **value);

/* ---- paths.c ----------------------------------------------------------------------- */

/* The folder of the autograph executable (no trailing slash). */
const char *self_dir(void);
/* The library to preload into `out` (absolute): `given`, else self_dir()/../lib/,
 * else self_dir()/; 0, or EXIT_RUN (reported). */
int find_library(const char *given, char *out, size_t size);

/* ---- spawn.c ------------------------------------------------------------------------ */

struct spawned {
    int status;                 /* exit status, 128 + signal for a killed program */
    double wall_s;              /* fork to reaped */
};
/* Runs argv with `s` applied (lib preloaded), stdout and stderr into those files;
 * 0, or EXIT_RUN when it could not be started (reported). */
int spawn_program(char *const argv[], const struct settings *s, const char *lib,
                  const char *out_path, const char *err_path, struct spawned *r);
/* Prints the last `lines` lines of a file on stderr, each after "  | ". */
void show_tail(const char *path, int lines);

/* ---- stats.c ------------------------------------------------------------------------ */

struct samples {
    double *v;
    size_t n, cap;
};
void samples_push(struct samples *s, double v);
void samples_free(struct samples *s);
/* Sorts in place; quantile() and the ones below need sorted samples. */
void samples_sort(struct samples *s);
/* The q-quantile (0..1), linear between order statistics; NaN when empty. */
double quantile(const struct samples *sorted, double q);
double samples_min(const struct samples *sorted);
double samples_max(const struct samples *sorted);

/* ---- commands ----------------------------------------------------------------------- */

int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_help(int argc, char **argv);
/* The help text of `cmd` (NULL: the overview) on `out`; 0, or -1 if no such command. */
int print_help(FILE *out, const char *cmd);
/* 1 if argv[i] is -h or --help. */
int is_help(const char *arg);

#endif
