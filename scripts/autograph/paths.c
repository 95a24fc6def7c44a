/* paths.c -- where the autograph executable is, and the library beside it.
 *
 * Installed, the command is PREFIX/bin/autograph and the library
 * PREFIX/lib/libautograph.so; in the build tree both are in build/.  No environment
 * variable names the library (an AUTOGRAPH_* one would be reported by the shim as
 * unknown): --lib does.
 */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *self_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0] == '\0') {
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        char *slash;
        dir[n > 0 ? n : 0] = '\0';
        slash = strrchr(dir, '/');
        if (slash == NULL)
            strcpy(dir, ".");
        else
            *slash = '\0';
    }
    return dir;
}

/* `path`, which must be readable, into out: made absolute as given (resolve: with
 * links and .. resolved); 0 or -1 */
static int absolute(const char *path, int resolve, char *out, size_t size)
{
    char buf[2 * PATH_MAX + 2], cwd[PATH_MAX];
    if (access(path, R_OK) != 0)
        return -1;
    if (resolve && realpath(path, buf) == NULL)
        return -1;
    if (!resolve && path[0] != '/')
        snprintf(buf, sizeof buf, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", path);
    else if (!resolve)
        snprintf(buf, sizeof buf, "%s", path);
    if (strlen(buf) >= size)
        return -1;
    strcpy(out, buf);
    return 0;
}

int find_library(const char *given, char *out, size_t size)
{
    char installed[PATH_MAX + 32], beside[PATH_MAX + 32];
    if (given) {
        if (absolute(given, 0, out, size) == 0)
            return 0;
        return fail(EXIT_RUN, "--lib %s: no such readable file", given);
    }
    snprintf(installed, sizeof installed, "%s/../lib/libautograph.so", self_dir());
    snprintf(beside, sizeof beside, "%s/libautograph.so", self_dir());
    if (absolute(installed, 1, out, size) == 0 || absolute(beside, 1, out, size) == 0)
        return 0;
    return fail(EXIT_RUN, "libautograph.so not found (looked for %s and %s); "
                "name it with --lib PATH", installed, beside);
}
