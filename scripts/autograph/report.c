/* report.c -- autograph report [ARGS]: the dependency analyzer, autograph-analyze.
 *
 * The one beside the autograph executable (build tree, or PREFIX/bin), else the one
 * in PATH; ARGS go to it untouched (a leading `--` is dropped, so that
 * `autograph report -- --help` shows the analyzer's own help).
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

int cmd_report(int argc, char **argv)
{
    char beside[PATH_MAX + 32];
    if (argc > 1 && is_help(argv[1])) {
        print_help(stdout, "report");
        return EXIT_OK;
    }
    if (argc > 1 && strcmp(argv[1], "--") == 0) {
        argv[1] = argv[0];
        argv++;
    }
    snprintf(beside, sizeof beside, "%s/autograph-analyze", self_dir());
    if (access(beside, X_OK) == 0) {
        argv[0] = beside;
        execv(beside, argv);
        return fail(EXIT_RUN, "cannot run %s: %s", beside, strerror(errno));
    }
    argv[0] = "autograph-analyze";
    execvp(argv[0], argv);
    return fail(EXIT_RUN, "autograph-analyze not found (looked for %s, then in PATH)",
                beside);
}
