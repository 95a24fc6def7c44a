/* engine_dump.c -- AUTOGRAPH_DEBUG_DUMP: every graph the engine builds, written to a
 * folder as it is built.
 *
 * When a chunk's capture ends, its CUgraph as Graphviz DOT, plain and verbose (the
 * backend's dump_dot: cuGraphDebugDotPrint with flags 0 and VERBOSE):
 *     <dir>/pid<PID>-t<TEMPLATE>-c<CHUNK>.dot
 *     <dir>/pid<PID>-t<TEMPLATE>-c<CHUNK>-verbose.dot
 * When one of its executables is instantiated, its graph data as JSON (the ids of
 * that executable; README, "Graph data"):
 *     <dir>/pid<PID>-t<TEMPLATE>-c<CHUNK>-v<VARIANT>.json
 * The folder is created, with its parents, when the engine starts; if that fails,
 * one line says so and nothing is dumped.  The first file that cannot be written is
 * reported at warn level.
 */
#include "engine_internal.h"
#include "engine_introspect.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dump_dir[2048];
static int dump_on;

static int make_dir(const char *path)
{
    struct stat st;
    if (mkdir(path, 0777) == 0)
        return 0;
    if (errno != EEXIST || stat(path, &st) != 0)
        return -1;
    if (S_ISDIR(st.st_mode))
        return 0;
    errno = ENOTDIR;
    return -1;
}

/* mkdir -p, then a check that files can be made there; 0 or -1 (errno). */
static int make_dirs(const char *dir)
{
    char path[sizeof dump_dir];
    size_t n = strlen(dir);
    if (n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (make_dir(path) != 0)
            return -1;
        *p = '/';
    }
    if (make_dir(path) != 0)
        return -1;
    return access(path, W_OK | X_OK);
}

void ag_dump_setup(const char *dir)
{
    dump_on = 0;
    if (dir == NULL || dir[0] == '\0')
        return;
    if (make_dirs(dir) != 0) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_DEBUG_DUMP=\"%.200s\" is not valid (cannot make a "
               "writable folder there: %s); nothing is dumped", dir, strerror(errno));
        return;
    }
    snprintf(dump_dir, sizeof dump_dir, "%s", dir);
    dump_on = 1;
}

static void dump_path(char *buf, size_t size, const struct ag_template *t, int chunk,
                      const char *tail)
{
    snprintf(buf, size, "%s/pid%ld-t%u-c%d%s", dump_dir, (long)getpid(), t->id, chunk, tail);
}

static void report(int rc, const char *path)
{
    static int told;
    if (rc != 0 && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
        ag_log(AG_LOG_WARN, "AUTOGRAPH_DEBUG_DUMP: cannot write %s (error %d); later "
               "failures are not reported", path, rc);
}

void ag_dump_captured(const struct ag_template *t, int chunk)
{
    char path[sizeof dump_dir + 64];
    void *graph = t->chunks[chunk].graph;
    if (!dump_on || ag_eng.be->dump_dot == NULL)
        return;
    dump_path(path, sizeof path, t, chunk, ".dot");
    report(ag_backend_dump_dot(graph, path, 0), path);
    dump_path(path, sizeof path, t, chunk, "-verbose.dot");
    report(ag_backend_dump_dot(graph, path, 1), path);
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int rc;
    if (f == NULL)
        return -1;
    rc = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

void ag_dump_instantiated(const struct ag_template *t, int chunk, int variant)
{
    char path[sizeof dump_dir + 64], tail[32];
    const struct ag_chunk *c = &t->chunks[chunk];
    char *json = NULL;
    int rc;
    if (!dump_on || ag_eng.be->graph_data == NULL)
        return;
    snprintf(tail, sizeof tail, "-v%d.json", variant);
    dump_path(path, sizeof path, t, chunk, tail);
    rc = ag_backend_graph_data(c->graph, c->variants[variant].exec, &json);
    if (rc == 0)
        rc = write_file(path, json);
    free(json);
    report(rc, path);
}
