/* sim.h -- public interface of the CPU driver simulator for test programs.
 *
 * build/sim/libcuda.so.1 stands in for the CUDA driver in CI (no GPU).  Device
 * memory is host memory; kernels are CPU functions that a test program
 * registers by name before loading a module (any module image exposes every
 * registered kernel).  Programs linked with -lcuda call sim_register_kernel
 * directly; programs that dlopen("libcuda.so.1") look it up with
 * dlsym(handle, SIM_REGISTER_KERNEL_SYMBOL).
 *
 * Environment:
 *   SIM_DEVICES=N         simulated devices (1..8, default 1), all alike: a primary
 *                         context each, peer access between any two, peer copies
 *   SIM_LOG=path          append one deterministic line per executed operation,
 *                         and a checksum line per live allocation at exit (with
 *                         SIM_DEVICES > 1 each line ends with " dev=<ordinal>" and
 *                         device pointers read a<n>@d<dev>+<offset>: sim_log.c)
 *   SIM_LOG_GRAPH=plain   (default) ops run by a graph are logged like eager ones
 *   SIM_LOG_GRAPH=marked  ... prefixed with "g:" (plus a g:graph_launch line)
 *   SIM_LOG_SKIP=a,b      leave out line classes (leading letters of the first
 *                         word): kernel memcpy memset host callback event graph
 *                         checksum
 *   SIM_FAIL=sym:k[:code],...  call #k (1-based) of export sym returns code
 *                         (default CUDA_ERROR_UNKNOWN) without doing anything
 *   SIM_TRACE=1           print each driver call (export name) to stderr
 *   SIM_GRAPH_TRACE=path  append "<graphId> <graphNodeId> <kernel>" per kernel node a
 *                         graph runs, as CUPTI's kernel records give them; the ids
 *                         are those of build/sim/libcupti.so.13 (sim_cupti.c)
 *   SIM_CHANNELS=N        hardware channels of CUPTI's activity records (default 8):
 *                         stream sN's work runs on channel N mod SIM_CHANNELS
 *                         (sim_activity.c, for build/sim/libcupti.so.13)
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_dim3 { unsigned int x, y, z; } sim_dim3;

/* A kernel: runs the whole grid; params[i] points at the value of parameter i. */
typedef void (*sim_kernel_fn)(sim_dim3 grid, sim_dim3 block, void **params);

/* Registers (or re-registers) a kernel.  Parameter i has param_sizes[i] bytes and
 * is laid out like CUDA does (aligned to min(8, largest power of two dividing its
 * size), or to param_aligns[i]).  Returns 0, or -1 on invalid arguments. */
int sim_register_kernel(const char *name, sim_kernel_fn fn, int nparams,
                        const size_t *param_sizes);
int sim_register_kernel_aligned(const char *name, sim_kernel_fn fn, int nparams,
                                const size_t *param_sizes, const size_t *param_aligns);

typedef int (*sim_register_kernel_t)(const char *name, sim_kernel_fn fn, int nparams,
                                     const size_t *param_sizes);
#define SIM_REGISTER_KERNEL_SYMBOL "sim_register_kernel"

/* Total threads of a launch along x (the usual 1-D kernel loop bound). */
#define SIM_THREADS_X(grid, block) ((size_t)(grid).x * (size_t)(block).x)

#ifdef __cplusplus
}
#endif
#endif /* SIM_H */
