/* graph_data.h -- AUTOGRAPH_GRAPH_DATA: the graph data of the program's own graphs,
 * written without CUPTI's activity API (graph_data.c). */
#ifndef AG_GRAPH_DATA_H
#define AG_GRAPH_DATA_H

/* After the program instantiated `graph` as `exec`: its graph data into the folder,
 * when AUTOGRAPH_GRAPH_DATA names one. */
void ag_graph_data_program(void *graph, void *exec);

#endif
