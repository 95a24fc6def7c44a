/* driver_loader.c -- find the real CUDA driver and every wrapped function in it.
 *
 * The driver is opened lazily: never at start-up (a program that never touches CUDA
 * pays nothing, and a machine without libcuda behaves as without the shim), but on
 * the first wrapped call, or the first dlsym that returns a wrapped symbol (then the
 * object holding that answer is the driver, whatever its path).  Once loaded, every
 * table entry's real address is resolved with the real dlsym, and a sorted
 * (address -> id) map lets the dlsym and cuGetProcAddress doors swap a real pointer
 * for its wrapper, which respects exactly the ABI version and stream flavour the
 * driver chose.
 */
#include "driver.h"
#include "config.h"
#include "counters.h"
#include "log.h"
#include "timing.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

void *ag_real[AG_EP_COUNT];

struct addr_entry { uintptr_t addr; int id; };

static struct addr_entry addr_map[AG_EP_COUNT];
static int addr_map_len;
static struct addr_entry wrapper_map[AG_EP_COUNT];  /* our own wrappers, sorted */
static int driver_state;            /* 0: not tried, 1: ready, -1: libcuda.so.1 failed */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int driver_used;          /* this process has touched the driver */
static __thread int loading;        /* re-entry guard: dlsym called while we load */

static int compare_addr(const void *a, const void *b)
{
    uintptr_t x = ((const struct addr_entry *)a)->addr;
    uintptr_t y = ((const struct addr_entry *)b)->addr;
    return x < y ? -1 : x > y;
}

static void resolve_all(void *handle)
{
    int n = 0;
    for (int id = 0; id < AG_EP_COUNT; id++) {
        void *fn = ag_call_real_dlsym(handle, ag_entry_name[id]);
        if (fn == NULL)
            continue;
        addr_map[n].addr = (uintptr_t)fn;
        addr_map[n].id = id;
        n++;
    }
    qsort(addr_map, (size_t)n, sizeof addr_map[0], compare_addr);
    addr_map_len = n;
    for (int id = 0; id < AG_EP_COUNT; id++) {
        wrapper_map[id].addr = (uintptr_t)ag_wrapper[id];
        wrapper_map[id].id = id;
    }
    qsort(wrapper_map, AG_EP_COUNT, sizeof wrapper_map[0], compare_addr);
    /* Publish the real pointers last: a reader that sees one sees the map too. */
    for (int i = 0; i < n; i++)
        __atomic_store_n(&ag_real[addr_map[i].id], (void *)addr_map[i].addr,
                         __ATOMIC_RELEASE);
}

static void *open_driver(const void *hint)
{
    Dl_info info;
    if (hint && dladdr(hint, &info) && info.dli_fname)
        return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    return dlopen("libcuda.so.1", RTLD_LAZY);
}

static void load_locked(const void *hint)
{
    void *handle = open_driver(hint);
    if (handle == NULL) {
        if (hint == NULL) {
            driver_state = -1;
            ag_log(AG_LOG_INFO, "cannot load the CUDA driver: %s", dlerror());
        }
        return;
    }
    resolve_all(handle);
    ag_log(AG_LOG_DEBUG, "driver loaded: %d of %d wrapped entry points present",
           addr_map_len, AG_EP_COUNT);
    __atomic_store_n(&driver_state, 1, __ATOMIC_RELEASE);
}

int ag_driver_used(void)
{
    return __atomic_load_n(&driver_used, __ATOMIC_RELAXED);
}

/* Loading is tried again only where it could now succeed: once ready, never;
 * after libcuda.so.1 failed to open, only for a hint into a loaded object. */
static int worth_loading(int state, const void *hint)
{
    return state == 0 || (state == -1 && hint != NULL);
}

int ag_driver_ensure(const void *hint)
{
    int state = __atomic_load_n(&driver_state, __ATOMIC_ACQUIRE);
    if (state == 1)
        return 1;
    if (!__atomic_exchange_n(&driver_used, 1, __ATOMIC_RELAXED)) {
        const struct ag_config *cfg = ag_config();  /* bad values are reported now, once */
        ag_timing_start(cfg->timing, cfg->mode == AG_MODE_ON);
    }
    if (loading || !worth_loading(state, hint))
        return 0;
    pthread_mutex_lock(&load_lock);
    loading = 1;
    if (worth_loading(driver_state, hint))
        load_locked(hint);
    state = driver_state;
    loading = 0;
    pthread_mutex_unlock(&load_lock);
    return state == 1;
}

int ag_driver_missing(int id)
{
    static int told[AG_EP_COUNT];
    if (!__atomic_exchange_n(&told[id], 1, __ATOMIC_RELAXED))
        ag_log(AG_LOG_WARN, "%s: %s", ag_entry_name[id],
               driver_state == 1 ? "not provided by this driver"
                                 : "the CUDA driver (libcuda.so.1) cannot be loaded");
    /* CUDA_ERROR_NOT_FOUND for an absent symbol, CUDA_ERROR_STUB_LIBRARY (as the
     * toolkit's stub libcuda answers) when there is no driver at all. */
    return driver_state == 1 ? 500 : 34;
}

static int find_addr(const struct addr_entry *map, int len, uintptr_t addr)
{
    int lo = 0, hi = len - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (map[mid].addr == addr)
            return map[mid].id;
        if (map[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void *ag_driver_map(void *fn, const char *name, enum ag_door door)
{
    int id;
    if (fn == NULL || !ag_driver_ensure(fn))
        return fn;
    id = find_addr(addr_map, addr_map_len, (uintptr_t)fn);
    if (id < 0)   /* a driver that resolves through its GOT hands out our wrapper */
        id = find_addr(wrapper_map, AG_EP_COUNT, (uintptr_t)fn);
    if (id >= 0) {
        ag_count_door(door);
        return ag_wrapper[id];
    }
    if (name && ag_entry_family_known(name)) {
        ag_count_unmapped();
        ag_log(AG_LOG_WARN, "%s: the driver returned %p, which is no known entry "
               "point; passed through unwrapped", name, fn);
    }
    return fn;
}
