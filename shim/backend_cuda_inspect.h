/* backend_cuda_inspect.h -- the CUDA backend's introspection entries (backend.h:
 * dump_dot, graph_data), defined in backend_cuda_inspect.c. */
#ifndef AG_BACKEND_CUDA_INSPECT_H
#define AG_BACKEND_CUDA_INSPECT_H

int ag_cuda_dump_dot(void *graph, const char *path, int verbose);
int ag_cuda_graph_data(void *graph, void *exec, char **json);

#endif
