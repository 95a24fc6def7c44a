/* example_plugin.c -- an example AUTOGRAPH_PLUGIN: registers a capture-end and a
 * post-instantiate hook and prints what it sees, one line per event on stderr:
 *
 *   example_plugin: loaded into libautograph 0.2.0
 *   example_plugin: capture end: template 1 chunk 0 graph 0x...
 *   example_plugin: instantiated: template 1 chunk 0 variant 0 exec 0x... graphs 1:
 *                   5 nodes, 2 kernels, exec_graph_id 7 (612 bytes of graph data)
 *
 * Build: cc -shared -fPIC -Iinclude -o libexample_plugin.so example_plugin.c
 * (make builds build/tests/plugin/libexample_plugin.so).  Use:
 *   LD_PRELOAD=libautograph.so AUTOGRAPH_PLUGIN=$PWD/libexample_plugin.so ./app
 * Its autograph_* references bind to the preloaded shim when it is loaded.
 */
#include <autograph.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static void on_capture_end(const autograph_graph_event *ev, void *user)
{
    (void)user;
    fprintf(stderr, "example_plugin: capture end: template %u chunk %d graph %p\n",
            ev->template_id, ev->chunk, ev->graph);
}

static void on_instantiated(const autograph_graph_event *ev, void *user)
{
    int len = autograph_graph_data(ev->template_id, ev->chunk, ev->variant, NULL, 0);
    int graphs = autograph_list_graphs(NULL, 0);
    char *json = len > 0 ? malloc((size_t)len + 1) : NULL;
    const char *id;
    char exec_id[24] = "null";
    (void)user;
    if (json == NULL || autograph_graph_data(ev->template_id, ev->chunk, ev->variant, json,
                                             (size_t)len + 1) != len) {
        fprintf(stderr, "example_plugin: instantiated: template %u chunk %d variant %d: "
                "no graph data (%s)\n", ev->template_id, ev->chunk, ev->variant,
                autograph_strerror(len));
        free(json);
        return;
    }
    id = strstr(json, "\"exec_graph_id\": ");
    if (id && id[17] != 'n')
        snprintf(exec_id, sizeof exec_id, "%llu", strtoull(id + 17, NULL, 10));
    fprintf(stderr, "example_plugin: instantiated: template %u chunk %d variant %d exec %p "
            "graphs %d: %d nodes, %d kernels, exec_graph_id %s (%d bytes of graph data)\n",
            ev->template_id, ev->chunk, ev->variant, ev->exec, graphs,
            count(json, "\"index\""), count(json, "\"node_type\": \"kernel\""), exec_id,
            len);
    free(json);
}

int autograph_plugin_init(void)
{
    int rc = autograph_register_capture_end_hook(on_capture_end, NULL, NULL);
    if (rc == AUTOGRAPH_OK)
        rc = autograph_register_post_instantiate_hook(on_instantiated, NULL, NULL);
    fprintf(stderr, "example_plugin: loaded into libautograph %s%s%s\n", autograph_version(),
            rc ? ": " : "", rc ? autograph_strerror(rc) : "");
    return rc;
}
