/* sim_entry.c -- every exported driver symbol of the simulator.
 *
 * Owns the exports: one thin wrapper per line of sim_exports.def (implemented
 * symbols, forwarded to their shared implementation) and one per remaining
 * libcuda export (build/sim/gen/sim_stubs.h: CUDA_ERROR_NOT_SUPPORTED), all with
 * the exact prototypes of cuda.h (build/sim/gen/sim_signatures.h).  Each wrapper
 * traces the call, takes the global recursive lock, applies SIM_FAIL, and tells
 * the implementation whether it is a per-thread-default-stream variant.
 * Also owns the per-thread state and the small allocation helpers.
 */
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t sim_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static __thread sim_tls tls = { .mode = CU_STREAM_CAPTURE_MODE_GLOBAL };

sim_tls *sim_tls_get(void)
{
    return &tls;
}

typedef struct sim_call {
    const char *sym;
    int saved_ptds;
    CUresult result;
} sim_call;

/* Returns 1 when the call must return call->result at once (injected fault). */
static int sim_call_begin(sim_call *call, const char *sym, int ptds)
{
    call->sym = sym;
    if (sim_trace_enabled())
        fprintf(stderr, "sim: %s\n", sym);
    pthread_mutex_lock(&sim_lock);
    if (sim_fault_check(sym, &call->result)) {
        pthread_mutex_unlock(&sim_lock);
        return 1;
    }
    call->saved_ptds = tls.ptds;
    tls.ptds = ptds;
    return 0;
}

static CUresult sim_call_end(sim_call *call, CUresult result)
{
    tls.ptds = call->saved_ptds;
    pthread_mutex_unlock(&sim_lock);
    if (result != CUDA_SUCCESS && sim_trace_enabled())
        fprintf(stderr, "sim: %s -> %d\n", call->sym, (int)result);
    return result;
}

static CUresult sim_unimplemented(const char *sym)
{
    if (sim_trace_enabled())
        fprintf(stderr, "sim: %s is not simulated\n", sym);
    return CUDA_ERROR_NOT_SUPPORTED;
}

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_DEFINE(sym, ptds, body)                                        \
    SIM_EXPORT CUresult CUDAAPI sym SIM_PARAMS_##sym                       \
    {                                                                      \
        sim_call call;                                                     \
        if (sim_call_begin(&call, #sym, ptds))                             \
            return call.result;                                            \
        return sim_call_end(&call, body);                                  \
    }
#define SIM_STUB(sym) SIM_DEFINE(sym, 0, sim_unimplemented(#sym))

/* The exports (the implementations are declared by sim_api.h). */
#define SIM_FN(sym, impl) SIM_DEFINE(sym, 0, impl SIM_ARGS_##sym)
#define SIM_FN_PT(sym, impl) SIM_DEFINE(sym, 1, impl SIM_ARGS_##sym)
#include "sim_exports.def"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "sim_stubs.h"
#pragma GCC diagnostic pop

/* The kernel registry is the one non-driver entry point; it shares the lock. */
SIM_EXPORT int sim_register_kernel_aligned(const char *name, sim_kernel_fn fn, int nparams,
                                           const size_t *param_sizes,
                                           const size_t *param_aligns)
{
    pthread_mutex_lock(&sim_lock);
    int rc = sim_kernel_register(name, fn, nparams, param_sizes, param_aligns);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

SIM_EXPORT int sim_register_kernel(const char *name, sim_kernel_fn fn, int nparams,
                                   const size_t *param_sizes)
{
    return sim_register_kernel_aligned(name, fn, nparams, param_sizes, NULL);
}

/* The stand-in libcupti (tests/sim/cupti_stand_in.c) asks for the ids of graphs,
 * nodes and executable graphs here (sim_cupti.c); it shares the lock too. */
SIM_EXPORT int sim_tools_id(int what, const void *handle, unsigned long long *id)
{
    uint64_t v = 0;
    pthread_mutex_lock(&sim_lock);
    int rc = sim_cupti_lookup(what, handle, &v);
    pthread_mutex_unlock(&sim_lock);
    if (rc == 0 && id)
        *id = v;
    return rc;
}

/* The stand-in libcupti (tests/sim/cupti_activity_stand_in.c) takes the activity
 * records of the work the simulator runs here (sim_activity.c). */
SIM_EXPORT void sim_activity_sink(void (*fn)(const struct sim_activity *a))
{
    pthread_mutex_lock(&sim_lock);
    sim_activity_set_sink(fn);
    pthread_mutex_unlock(&sim_lock);
}

/* Exit-time work (checksums) runs under the same lock -- unless another thread
 * still holds it after a second (it may never return): then without. */
void sim_with_lock(void (*fn)(void))
{
    int locked = 0;
    for (int i = 0; i < 1000 && !(locked = pthread_mutex_trylock(&sim_lock) == 0); i++)
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    fn();
    if (locked)
        pthread_mutex_unlock(&sim_lock);
}

static void sim_oom(void)
{
    fputs("sim: out of memory\n", stderr);
    abort();
}

void *sim_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        sim_oom();
    return p;
}

void *sim_xrealloc(void *p, size_t size)
{
    p = realloc(p, size ? size : 1);
    if (!p)
        sim_oom();
    return p;
}

char *sim_xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        sim_oom();
    return d;
}
