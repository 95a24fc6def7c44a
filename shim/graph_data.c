/* graph_data.c -- AUTOGRAPH_GRAPH_DATA=DIR: the graph data JSON (get_graph_data shape,
 * README "Graph data") of every graph the program itself instantiates, written as
 *     DIR/pid<PID>-program-n<N>.json       (%p in DIR: the pid)
 * from driver calls (nodes, edges, kernel names: backend_cuda_inspect.c).  It takes no
 * CUPTI subscriber and enables no activity, so another tool may own CUPTI in the same
 * run: a PyTorch profiler trace and the graph data of the program's graphs, which the
 * analyzer maps to the trace's replays by kernel name and order.  The ids are CUPTI's
 * id queries when libcupti is there (they need no subscriber), else null.  The folder
 * is made if missing (its parent must exist); the first file that cannot be written
 * is named in one line, and nothing more is written.
 */
#include "graph_data.h"

#include "backend_cuda_inspect.h"
#include "config.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long written;   /* atomic */
static int failed;              /* atomic */

static int write_json(const char *path, const char *json)
{
    FILE *f = fopen(path, "w");
    int rc;
    if (f == NULL)
        return -1;
    rc = fputs(json, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

void ag_graph_data_program(void *graph, void *exec)
{
    const char *pattern = ag_config()->graph_data;
    char dir[2048], path[2200];
    char *json = NULL;
    int rc;
    if (pattern == NULL || __atomic_load_n(&failed, __ATOMIC_ACQUIRE))
        return;
    ag_expand_pid(dir, sizeof dir, pattern);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        if (!__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL))
            ag_log(AG_LOG_ERROR, "AUTOGRAPH_GRAPH_DATA: cannot make %.200s (%s); no graph data",
                   dir, strerror(errno));
        return;
    }
    rc = ag_cuda_graph_data(graph, exec, &json);
    snprintf(path, sizeof path, "%s/pid%ld-program-n%lu.json", dir, (long)getpid(),
             __atomic_add_fetch(&written, 1, __ATOMIC_RELAXED));
    if (rc != 0 || write_json(path, json) != 0) {
        if (!__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL))
            ag_log(AG_LOG_ERROR, "AUTOGRAPH_GRAPH_DATA: cannot write %.200s (%s); no more "
                   "graph data", path, rc != 0 ? "the driver refused" : strerror(errno));
    }
    free(json);
}
