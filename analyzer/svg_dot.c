/* svg_dot.c -- SVG through Graphviz dot (the DOT report piped through `dot -Tsvg`,
 * run without a shell) when installed, else the built-in drawing (report_svg.c). */
#include "svg_dot.h"

#include "report.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The first executable "dot" on PATH, in buf; NULL when none. */
static const char *find_dot(char *buf, size_t size)
{
    const char *path = getenv("PATH");
    while (path != NULL && *path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(buf, size, "%.*s/dot", (int)n, n ? path : ".");
        if (access(buf, X_OK) == 0)
            return buf;
        path = colon ? colon + 1 : NULL;
    }
    return NULL;
}

static int run_dot(const char *dot, const char *in, const char *out)
{
    char *argv[] = { (char *)dot, "-Tsvg", "-o", (char *)out, (char *)in, NULL };
    pid_t pid;
    int status;
    if (posix_spawn(&pid, dot, NULL, NULL, argv, environ) != 0)
        return -1;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* DOT into a temporary file, then dot; 0 or -1. */
static int via_dot(const char *dot, const char *path, const struct analysis *a, char *err,
                   size_t errsize)
{
    char tmp[] = "/tmp/autograph-analyze-XXXXXX";
    int fd = mkstemp(tmp), rc;
    if (fd < 0)
        return -1;
    close(fd);
    rc = report_to_file(tmp, report_dot, a, err, errsize);
    if (rc == 0)
        rc = run_dot(dot, tmp, path);
    unlink(tmp);
    return rc;
}

int svg_write(const char *path, const char *engine, const struct analysis *a, char *err,
              size_t errsize)
{
    char buf[4096];
    const char *dot = strcmp(engine, "builtin") == 0 ? NULL : find_dot(buf, sizeof buf);
    if (dot == NULL && strcmp(engine, "dot") == 0) {
        snprintf(err, errsize, "%s: --svg-engine dot: Graphviz dot is not on PATH", path);
        return -1;
    }
    if (dot != NULL && via_dot(dot, path, a, err, errsize) == 0) {
        fprintf(stderr, "autograph-analyze: %s: SVG drawn by Graphviz (%s)\n", path, dot);
        return 0;
    }
    if (dot != NULL && strcmp(engine, "dot") == 0) {
        snprintf(err, errsize, "%s: Graphviz dot (%s) failed", path, dot);
        return -1;
    }
    if (report_to_file(path, report_svg, a, err, errsize) != 0)
        return -1;
    fprintf(stderr, "autograph-analyze: %s: SVG drawn by the built-in layout (%s)\n", path,
            dot ? "Graphviz dot failed" : strcmp(engine, "builtin") == 0
            ? "--svg-engine builtin" : "Graphviz dot not found");
    return 0;
}
