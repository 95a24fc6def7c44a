/* run.c -- autograph run [OPTIONS] -- PROGRAM [ARGS]: PROGRAM under libautograph.
 *
 * The options become AUTOGRAPH_* variables, the library goes first in LD_PRELOAD,
 * and the command becomes PROGRAM (execvp): its exit status is the program's own.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

int cmd_run(int argc, char **argv)
{
    struct settings s = { .n = 0 };
    char lib[PATH_MAX];
    int prog = parse_command("run", argc, argv, &s, 1, NULL, NULL);
    if (prog == PARSE_HELP)
        return EXIT_OK;
    if (prog < 0)
        return EXIT_USAGE;
    if (find_library(s.lib, lib, sizeof lib) != 0 || settings_apply(&s, lib) != 0)
        return EXIT_RUN;
    execvp(argv[prog], argv + prog);
    return fail(EXIT_RUN, "cannot run %s: %s", argv[prog], strerror(errno));
}
