/* options.c -- the command lines of run and compare: options, then `--` and the
 * program.  Options take their value as `--name VALUE` or `--name=VALUE`; the first
 * word that is not an option (or the one after `--`) starts the program's own
 * command line, which is passed on untouched.
 */
#include "cli.h"

#include <string.h>

int option_value(const char *cmd, const char *name, int argc, char **argv, int *i,
                 const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0 || (arg[len] != '\0' && arg[len] != '='))
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        usage_error(cmd, "option %s needs a value", name);
        return -1;
    }
    return 1;
}

int parse_command(const char *cmd, int argc, char **argv, struct settings *s, int all,
                  extra_option_fn extra, void *ctx)
{
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--") == 0) {
            if (i + 1 < argc)
                return i + 1;
            break;
        }
        if (is_help(argv[i])) {
            print_help(stdout, cmd);
            return PARSE_HELP;
        }
        if (argv[i][0] != '-')
            return i;
        r = settings_option(s, cmd, argc, argv, &i, all);
        if (r == 0 && extra)
            r = extra(ctx, argc, argv, &i);
        if (r == 0)
            usage_error(cmd, "unknown option '%s'", argv[i]);
        if (r <= 0)
            return PARSE_USAGE;
    }
    usage_error(cmd, "no PROGRAM given");
    return PARSE_USAGE;
}
