/* sim_handle.c -- the registry of live handles.
 *
 * Every CUcontext, CUstream, CUevent, CUmodule, CUfunction, CUgraph,
 * CUgraphNode, CUgraphExec and VMM allocation handle the simulator hands out is
 * a pointer to an object that starts with sim_obj and is registered here, so a
 * stale or made-up handle is answered with CUDA_ERROR_INVALID_HANDLE instead of
 * a crash.  Objects also carry a creation ordinal per kind (labels, DOT output).
 */
#include "sim_internal.h"

#include <stdlib.h>

static sim_obj *registry;
static unsigned long next_ordinal[SIM_K_COUNT];

void *sim_obj_new(int kind, size_t size, sim_ctx *ctx)
{
    sim_obj *o = sim_xcalloc(1, size);
    o->self = o;
    o->kind = kind;
    o->ordinal = ++next_ordinal[kind];
    o->ctx = ctx;
    HASH_ADD_PTR(registry, self, o);
    return o;
}

void *sim_obj_get(const void *handle, int kind)
{
    sim_obj *o = NULL;
    if (!handle)
        return NULL;
    HASH_FIND_PTR(registry, &handle, o);
    return o && o->kind == kind ? o : NULL;
}

void sim_obj_free(void *obj)
{
    sim_obj *o = obj;
    if (!o)
        return;
    HASH_DEL(registry, o);
    free(o);
}

void *sim_obj_need(const void *handle, int kind, CUresult missing, CUresult *rc)
{
    void *o;
    if ((*rc = sim_need_init()) != CUDA_SUCCESS)
        return NULL;
    if (!(o = sim_obj_get(handle, kind)))
        *rc = missing;
    return o;
}

static int by_ordinal(const void *a, const void *b)
{
    const sim_obj *x = *(sim_obj *const *)a, *y = *(sim_obj *const *)b;
    return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

size_t sim_obj_list(int kind, sim_ctx *ctx, void ***out)
{
    size_t n = 0;
    sim_obj *o, *tmp;
    void **v = sim_xcalloc(HASH_COUNT(registry) + 1, sizeof *v);
    HASH_ITER(hh, registry, o, tmp) {
        if (o->kind == kind && (!ctx || o->ctx == ctx))
            v[n++] = o;
    }
    qsort(v, n, sizeof *v, by_ordinal);
    *out = v;
    return n;
}
