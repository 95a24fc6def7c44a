/* graph_read.h -- read graph data files (get_graph_data JSON) into a graph set. */
#ifndef AGA_GRAPH_READ_H
#define AGA_GRAPH_READ_H

#include <stddef.h>

#include "graph.h"
#include "input.h"

/* Every exec graph of one file (an object, or an array of objects) is added to set;
 * 0, or -1 with a one-line message in err (nothing of that file is added). */
int graph_read(struct graphset *set, struct input *in, char *err, size_t errsize);
int graph_read_file(struct graphset *set, const char *path, char *err, size_t errsize);

#endif
