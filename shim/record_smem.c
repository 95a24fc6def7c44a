/* record_smem.c -- record: kernels' dynamic shared memory limits.
 *
 * A kernel launch may ask for no more dynamic shared memory than its function's limit
 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) at the time of the call.  cuDNN
 * moves some kernels' limits up and down around their launches, several times a
 * PyTorch training step.  A window goes on across such a change
 * (intercept_attributes.c), so a held op may meet a limit lower than the one it was
 * made under.  Once a node's limit is lowered, launching an instantiated graph, and
 * instantiating one, still work; capturing the launch, issuing it and patching its
 * node (cuGraphExecKernelNodeSetParams) fail with CUDA_ERROR_INVALID_VALUE.  Two
 * things live here:
 *
 *  - the check at the program's call (ag_smem_over_limit): a launch over its
 *    function's limit now is never recorded, it goes to the driver and fails there
 *    as without the shim.  The limits asked are kept per thread, valid while two
 *    generations stay as they were when asked;
 *  - raising (ag_smem_raise, ag_smem_restore): the backend lifts a kernel's limit
 *    to what a held op asks for around its own capture, issue or patch of that op,
 *    and puts the program's value back right after.  The raise lock is held from the
 *    first raise to the restore, and also around the program's own sets of the limit
 *    (ag_smem_lock) and every ask, so no thread ever reads or overwrites a raised
 *    value.
 *
 * Limits are read and raised through the handle the op was launched with: a
 * CUfunction's own, or a CUkernel's (the runtime launches those) on the current device.
 */
#include "record_ops.h"

#include "log.h"

#include <pthread.h>

int ag_smem_limit_changed;

static pthread_mutex_t raise_lock = PTHREAD_MUTEX_INITIALIZER;

void ag_smem_lock(void)
{
    pthread_mutex_lock(&raise_lock);
}

void ag_smem_unlock(void)
{
    pthread_mutex_unlock(&raise_lock);
}

/* ---- one launch handle's limit ---------------------------------------------------- *
 * Read and set at the level the program sets it: a CUfunction's own, or a CUkernel's
 * on the current device (which the driver hands on to the kernel's function in each
 * context).  Never a kernel's function directly: once its own limit is set, the
 * driver stops handing the kernel's on to it (the runtime's next
 * cudaFuncSetAttribute then leaves the function at the old limit, and the program's
 * launch fails). */

/* f's limit into *limit; *kernel: f is known to be a CUkernel (set here when a
 * function's attribute cannot be read through it). */
static int handle_limit(CUfunction f, unsigned char *kernel, int *limit)
{
    DRIVER_FN(func_get, cuFuncGetAttribute);
    DRIVER_FN(kernel_get, cuKernelGetAttribute);
    const CUfunction_attribute max = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    CUdevice dev = 0;
    if (!*kernel && func_get && func_get(limit, max, f) == CUDA_SUCCESS)
        return 1;
    *kernel = 1;
    return kernel_get && ag_current_device(&dev) &&
           kernel_get(limit, max, (CUkernel)f, dev) == CUDA_SUCCESS;
}

static int set_handle_limit(CUfunction f, int kernel, int limit)
{
    DRIVER_FN(func_set, cuFuncSetAttribute);
    DRIVER_FN(kernel_set, cuKernelSetAttribute);
    const CUfunction_attribute max = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    CUdevice dev = 0;
    if (!kernel)
        return func_set && func_set(f, max, limit) == CUDA_SUCCESS;
    return kernel_set && ag_current_device(&dev) &&
           kernel_set(max, limit, (CUkernel)f, dev) == CUDA_SUCCESS;
}

/* ---- the check at the program's call ---------------------------------------------- *
 * Asking the driver costs up to 3 calls, and cuDNN's kernels ask for dynamic shared
 * memory many times a step while moving few limits.  So each thread keeps the limits
 * it asked, valid while two generations stay as they were when asked: the one of the
 * handle's slot (bumped after a set through that handle: ag_smem_limit_set_on) and
 * the global one (bumped where the shim cannot tell which handles a change reaches:
 * ag_smem_limits_forget).  A slot is shared by the handles that hash to it: more asking, never less. */

#define SMEM_SLOTS 4096
#define SMEM_CACHE 32

static unsigned smem_global_gen;
static unsigned smem_slot_gen[SMEM_SLOTS];
static AG_TLS struct smem_limit {
    uintptr_t f, ctx;
    unsigned global_gen, slot_gen;
    int limit;
    unsigned char kernel;          /* f is a CUkernel: its function is asked */
} smem_cache[SMEM_CACHE];

static unsigned *smem_slot(uintptr_t handle)
{
    return &smem_slot_gen[(uint64_t)(handle >> 4) * 0x9e3779b97f4a7c15ull >> 52];
}

void ag_smem_limits_forget(void)
{
    __atomic_add_fetch(&smem_global_gen, 1, __ATOMIC_RELEASE);
}

void ag_smem_limit_set_on(uintptr_t handle, int kernel)
{
    DRIVER_FN(kernel_function, cuKernelGetFunction);
    CUfunction f;
    __atomic_add_fetch(smem_slot(handle), 1, __ATOMIC_RELEASE);
    if (!kernel)
        return;
    if (kernel_function && kernel_function(&f, (CUkernel)handle) == CUDA_SUCCESS)
        __atomic_add_fetch(smem_slot((uintptr_t)f), 1, __ATOMIC_RELEASE);
    else
        ag_smem_limits_forget();
}

/* f's limit, asked of the driver into e (never a raised one: under the raise lock).
 * 0 when it cannot be read. */
static int ask_smem_limit(CUfunction f, struct smem_limit *e)
{
    int ok;
    if (e->f != (uintptr_t)f)
        e->kernel = 0;
    ag_smem_lock();
    ok = handle_limit(f, &e->kernel, &e->limit);
    ag_smem_unlock();
    return ok;
}

int ag_smem_over_limit(CUfunction f, uintptr_t ctx, unsigned smem)
{
    struct smem_limit *e = &smem_cache[((uintptr_t)f >> 4 ^ ctx >> 6) % SMEM_CACHE];
    unsigned global_gen = __atomic_load_n(&smem_global_gen, __ATOMIC_ACQUIRE);
    unsigned slot_gen = __atomic_load_n(smem_slot((uintptr_t)f), __ATOMIC_ACQUIRE);
    if (e->f != (uintptr_t)f || e->ctx != ctx || e->global_gen != global_gen ||
        e->slot_gen != slot_gen) {
        if (!ask_smem_limit(f, e)) {
            e->f = 0;
            return 1;
        }
        e->f = (uintptr_t)f;                 /* the generations read before asking */
        e->ctx = ctx;
        e->global_gen = global_gen;
        e->slot_gen = slot_gen;
    }
    return (long)smem > (long)e->limit;
}

/* ---- raising around the shim's own uses of a held op ------------------------------- */

int ag_smem_raise(struct ag_smem_raised *r, uintptr_t f, unsigned smem)
{
    unsigned char kernel = 0;
    int limit;
    if (smem == 0 || !__atomic_load_n(&ag_smem_limit_changed, __ATOMIC_RELAXED))
        return 0;
    if (!r->locked) {
        ag_smem_lock();
        r->locked = 1;
    }
    if (!handle_limit((CUfunction)f, &kernel, &limit) || (long)smem <= (long)limit)
        return 0;                    /* unreadable: the op's own call says what is wrong */
    if (r->n == AG_SMEM_RAISED_MAX) {
        ag_log(AG_LOG_WARN, "more than %d kernels' shared memory limits to lift at once: "
               "the shim's own launch of the next one will fail", AG_SMEM_RAISED_MAX);
        return 0;
    }
    if (!set_handle_limit((CUfunction)f, kernel, (int)smem))
        return 0;
    ag_log(AG_LOG_DEBUG, "lifted the dynamic shared memory limit of %s %p from %d to %u "
           "bytes", kernel ? "kernel" : "function", (void *)f, limit, smem);
    r->handle[r->n] = f;
    r->kernel[r->n] = kernel;
    r->old[r->n++] = limit;
    return 1;
}

void ag_smem_restore(struct ag_smem_raised *r)
{
    while (r->n > 0) {
        r->n--;
        ag_log(AG_LOG_DEBUG, "put the dynamic shared memory limit of %p back to %d bytes",
               (void *)r->handle[r->n], r->old[r->n]);
        if (!set_handle_limit((CUfunction)r->handle[r->n], r->kernel[r->n], r->old[r->n]))
            ag_log(AG_LOG_WARN, "could not put a kernel's dynamic shared memory limit back "
                   "to %d bytes", r->old[r->n]);
    }
    if (r->locked) {
        r->locked = 0;
        ag_smem_unlock();
    }
}
