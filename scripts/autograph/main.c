/* main.c -- autograph: run programs under libautograph, compare them with and without
 * graphing, report on traces.  Dispatches to one function per command; the messages
 * every command prints on errors are made here.  See help.c for the manual.
 */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("autograph: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "autograph %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see autograph help %s)\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

int is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
} commands[] = {
    { "run", cmd_run },
    { "compare", cmd_compare },
    { "report", cmd_report },
    { "help", cmd_help },
};

int main(int argc, char **argv)
{
    if (argc < 2)
        return fail(EXIT_USAGE, "no command given (autograph run|compare|report|help ...; "
                    "see autograph --help)");
    if (is_help(argv[1]))
        return print_help(stdout, NULL) == 0 ? EXIT_OK : EXIT_USAGE;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    return fail(EXIT_USAGE, "unknown command '%s' (commands: run, compare, report, help; "
                "see autograph --help)", argv[1]);
}
