/* report_dump.c -- report: AUTOGRAPH_DEBUG_DUMP, every graph the engine builds,
 * written to a folder as it is built.
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
 *
 * AUTOGRAPH_TRACE adds a second folder, <trace>.graphs (trace_cupti.c sets it up when
 * tracing starts), for the analyzer: graph data JSON only, of every executable, each
 * under a name of its own (N, an instantiation number, keeps any executable a trace
 * may name from being overwritten), the shim's and the program's own (trace_cupti.c):
 *     <trace>.graphs/pid<PID>-t<TEMPLATE>-c<CHUNK>-v<VARIANT>-n<N>.json
 *     <trace>.graphs/pid<PID>-program-n<N>.json
 * The graph data files an earlier run left there (pid*.json) are removed first: exec
 * graph ids restart in every process, and a stale file would name the wrong graph.
 */
#include "engine_internal.h"
#include "report_introspect.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


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
    char path[sizeof ag_sh.dump.dir];
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

/* dir made (with its parents) and copied to dst: 1; none given: 0; unusable: -1. */
static int take_dir(const char *dir, char *dst, size_t size)
{
    if (dir == NULL || dir[0] == '\0')
        return 0;
    if (make_dirs(dir) != 0)
        return -1;
    snprintf(dst, size, "%s", dir);
    return 1;
}

void ag_dump_setup(const char *dir)
{
    int rc = take_dir(dir, ag_sh.dump.dir, sizeof ag_sh.dump.dir);
    if (rc < 0)
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_DEBUG_DUMP=\"%.200s\" is not valid (cannot make a "
               "writable folder there: %s); nothing is dumped", dir, strerror(errno));
    ag_sh.dump.on = rc > 0;
}

/* Removes the pid*.json files of an earlier run from the graphs folder. */
static void clear_graphs(const char *dir)
{
    char path[sizeof ag_sh.dump.graphs_dir + 300];
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t len;
    while (d && (e = readdir(d)) != NULL) {
        len = strlen(e->d_name);
        if (strncmp(e->d_name, "pid", 3) != 0 || len < 5 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

void ag_dump_graphs_setup(const char *dir)
{
    int rc = take_dir(dir, ag_sh.dump.graphs_dir, sizeof ag_sh.dump.graphs_dir);
    if (rc < 0)
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_TRACE: cannot make the graph folder \"%.200s\" (%s); "
               "the trace has no graph files", dir, strerror(errno));
    else if (rc > 0)
        clear_graphs(ag_sh.dump.graphs_dir);
    __atomic_store_n(&ag_sh.dump.graphs_on, rc > 0, __ATOMIC_RELEASE);
}

static void dump_path(char *buf, size_t size, const char *dir, const struct ag_template *t,
                      int chunk, const char *tail)
{
    snprintf(buf, size, "%s/pid%ld-t%u-c%d%s", dir, (long)getpid(), t->id, chunk, tail);
}

/* The first failure of each folder (0: AUTOGRAPH_DEBUG_DUMP, 1: AUTOGRAPH_TRACE). */
static void report(int rc, const char *path, int which)
{
    if (rc != 0 && !__atomic_exchange_n(&ag_sh.dump.told[which], 1, __ATOMIC_RELAXED))
        ag_log(AG_LOG_WARN, "%s: cannot write %s (error %d); later failures are not "
               "reported", which ? "AUTOGRAPH_TRACE" : "AUTOGRAPH_DEBUG_DUMP", path, rc);
}

void ag_dump_captured(const struct ag_template *t, int chunk)
{
    char path[sizeof ag_sh.dump.dir + 96];
    void *graph = t->chunks[chunk].graph;
    if (!ag_sh.dump.on || ag_eng.be->dump_dot == NULL)
        return;
    dump_path(path, sizeof path, ag_sh.dump.dir, t, chunk, ".dot");
    report(ag_backend_dump_dot(graph, path, 0), path, 0);
    dump_path(path, sizeof path, ag_sh.dump.dir, t, chunk, "-verbose.dot");
    report(ag_backend_dump_dot(graph, path, 1), path, 0);
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

/* Writes graph data into the trace's graphs folder as pid<PID><tail>-n<N>.json. */
static void write_graphs_file(const char *tail, const char *json, int rc)
{
    char path[sizeof ag_sh.dump.graphs_dir + 96];
    snprintf(path, sizeof path, "%s/pid%ld%s-n%lu.json", ag_sh.dump.graphs_dir,
             (long)getpid(), tail,
             __atomic_add_fetch(&ag_sh.dump.graphs_written, 1, __ATOMIC_RELAXED));
    report(rc == 0 ? write_file(path, json) : rc, path, 1);
}

void ag_dump_instantiated(const struct ag_template *t, int chunk, int variant)
{
    char path[sizeof ag_sh.dump.dir + 96], tail[64];
    const struct ag_chunk *c = &t->chunks[chunk];
    int graphs = __atomic_load_n(&ag_sh.dump.graphs_on, __ATOMIC_ACQUIRE), rc;
    char *json = NULL;
    if ((!ag_sh.dump.on && !graphs) || ag_eng.be->graph_data == NULL)
        return;
    rc = ag_backend_graph_data(c->graph, c->variants[variant].exec, &json);
    if (ag_sh.dump.on) {
        snprintf(tail, sizeof tail, "-v%d.json", variant);
        dump_path(path, sizeof path, ag_sh.dump.dir, t, chunk, tail);
        report(rc == 0 ? write_file(path, json) : rc, path, 0);
    }
    if (graphs) {
        snprintf(tail, sizeof tail, "-t%u-c%d-v%d", t->id, chunk, variant);
        write_graphs_file(tail, json, rc);
    }
    free(json);
}

void ag_dump_program_graph(const char *json)
{
    if (__atomic_load_n(&ag_sh.dump.graphs_on, __ATOMIC_ACQUIRE))
        write_graphs_file("-program", json, 0);
}
