// errors_prog.cu -- GPU test program: the program's own errors, made while the engine is
// replaying (issue 4 item 6; tests/gpu/safety.bats).
//
// Built by tests/gpu/gpu.mk as build/gpu/errors_static and errors_shared.
//
//   errors_prog CASE API
//     API   rt   the runtime API: cudaLaunchKernel, cudaEventRecord, ...; codes are
//                cudaError_t, and after every logged segment cudaGetLastError() is logged
//           drv  the driver API, entry points from cudaGetDriverEntryPointByVersion:
//                cuLaunchKernel, cuEventRecord, ...; codes are CUresult
//     CASE  config     invalid launch configuration (block of 2048 threads, grid of 0) as
//                      the very first launch of the process, then in the middle of the
//                      window while it is being replayed
//           smem       1 MiB of dynamic shared memory: first launch, then mid-window
//           smem_attr  the window launches a kernel with 64 KiB of dynamic shared memory
//                      (allowed by cudaFuncSetAttribute); the program lowers the limit to
//                      48 KiB and runs the window again: that launch must fail, at its call
//           event      cudaEventRecord and cudaStreamWaitEvent on a NULL event mid-window
//           stream     (invalid handles) a launch of a function that is no kernel (NULL
//                      CUfunction, or a host function for cudaLaunchKernel) mid-window
//           oom        cudaMalloc, cudaMallocAsync, cudaMallocHost of 1 PiB mid-window
//           fault      a kernel writing to an illegal address mid-window: the error surfaces
//                      at the next sync (700); then the calls after the fault
//
// The window (W_OPS calls, then a sync of s): kernels on s, a fork to s2 with event e0,
// kernels on s2 (one reads x), a join back with e1, kernels on s (one with dynamic shared
// memory).  Every case first runs it WARM times (the engine builds it into graphs and
// replays it), then makes its errors in the middle of a window.
//
// stdout: every call of the error segments, "<index> <call> <code>"; "warm N
// failed_calls M" for each block of warm windows; then (not after a fault) one hash line
// per buffer.  Compare it with and without the shim: the same call must return the same
// code.  Setup calls are checked (an error exits 2).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.cuh"

enum { T = 128, W_OPS = 13, WARM = 24, REWARM = 6, SMEM_OK = 1024 };
static const size_t HUGE_BYTES = (size_t)1 << 50;      // 1 PiB: out of memory everywhere

__global__ void k_smem(unsigned *x, unsigned k)
{
    extern __shared__ unsigned sh[];
    sh[threadIdx.x] = x[threadIdx.x] ^ k;
    __syncthreads();
    x[threadIdx.x] = sh[(threadIdx.x + 1) % blockDim.x] * 5u + 1u;
}

// --- the two APIs ----------------------------------------------------------------------

static int g_drv;   // 1: driver API

#define DRV_FNS(X)                                                                     \
    X(cuLaunchKernel) X(cuEventRecord) X(cuStreamWaitEvent) X(cuStreamSynchronize)     \
    X(cuCtxSynchronize) X(cuMemAlloc) X(cuMemAllocAsync) X(cuMemAllocHost) X(cuMemFree) \
    X(cuMemcpyDtoH) X(cuFuncSetAttribute) X(cuStreamDestroy) X(cuEventDestroy)
#define DRV_DECL(name) static decltype(&name) d_##name;
DRV_FNS(DRV_DECL)

static void drv_load_one(const char *name, void **slot)
{
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion(name, slot, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !*slot) {
        fprintf(stderr, "no driver entry point %s\n", name);
        exit(2);
    }
}

static void drv_load(void)
{
#define DRV_LOAD(name) drv_load_one(#name, (void **)&d_##name);
    DRV_FNS(DRV_LOAD)
}

// The driver's CUfunction of each kernel, looked up once (before any launch).
static const void *const g_kernels[] = {(const void *)k_tiny, (const void *)k_heavy,
                                        (const void *)k_smem};
static CUfunction g_cufn[3];

static CUfunction cufn(const void *fn)
{
    for (int i = 0; i < 3; i++)
        if (g_kernels[i] == fn)
            return g_cufn[i];
    fprintf(stderr, "unknown kernel\n");
    exit(2);
}

static int a_launch(const void *fn, unsigned grid, unsigned block, unsigned smem,
                    cudaStream_t s, void **args)
{
    int rc = g_drv ? (int)d_cuLaunchKernel(cufn(fn), grid, 1, 1, block, 1, 1, smem,
                                           (CUstream)s, args, NULL)
                   : (int)cudaLaunchKernel(fn, dim3(grid), dim3(block), args, smem, s);
    if (rc == 0)
        __atomic_fetch_add(&g_launches, 1, __ATOMIC_RELAXED);
    return rc;
}

static int a_record(cudaEvent_t e, cudaStream_t s)
{
    return g_drv ? (int)d_cuEventRecord((CUevent)e, (CUstream)s) : (int)cudaEventRecord(e, s);
}

static int a_wait(cudaStream_t s, cudaEvent_t e)
{
    return g_drv ? (int)d_cuStreamWaitEvent((CUstream)s, (CUevent)e, 0)
                 : (int)cudaStreamWaitEvent(s, e, 0);
}

static int a_sync(cudaStream_t s)
{
    return g_drv ? (int)d_cuStreamSynchronize((CUstream)s) : (int)cudaStreamSynchronize(s);
}

static int a_device_sync(void)
{
    return g_drv ? (int)d_cuCtxSynchronize() : (int)cudaDeviceSynchronize();
}

static int a_malloc(void **p, size_t n)
{
    CUdeviceptr d = 0;
    if (!g_drv)
        return (int)cudaMalloc(p, n);
    int rc = (int)d_cuMemAlloc(&d, n);
    *p = (void *)d;
    return rc;
}

static int a_malloc_async(void **p, size_t n, cudaStream_t s)
{
    CUdeviceptr d = 0;
    if (!g_drv)
        return (int)cudaMallocAsync(p, n, s);
    int rc = (int)d_cuMemAllocAsync(&d, n, (CUstream)s);
    *p = (void *)d;
    return rc;
}

static int a_malloc_host(void **p, size_t n)
{
    return g_drv ? (int)d_cuMemAllocHost(p, n) : (int)cudaMallocHost(p, n);
}

static int a_memcpy_d2h(void *dst, const void *src, size_t n)
{
    return g_drv ? (int)d_cuMemcpyDtoH(dst, (CUdeviceptr)src, n)
                 : (int)cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
}

static int a_max_dyn_smem(const void *fn, int bytes)
{
    return g_drv ? (int)d_cuFuncSetAttribute(cufn(fn),
                                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)
                 : (int)cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             bytes);
}

static int launch_tiny(unsigned *x, unsigned k, cudaStream_t s, unsigned grid, unsigned block)
{
    void *args[] = {&x, &k};
    return a_launch((const void *)k_tiny, grid, block, 0, s, args);
}

static int launch_smem(unsigned *x, unsigned k, unsigned smem, cudaStream_t s)
{
    void *args[] = {&x, &k};
    return a_launch((const void *)k_smem, 1, T, smem, s, args);
}

static int launch_heavy(unsigned *dst, const unsigned *src, cudaStream_t s)
{
    int n = T, rounds = 2;
    unsigned salt = 5u;
    void *args[] = {&dst, &src, &n, &salt, &rounds};
    return a_launch((const void *)k_heavy, 1, T, 0, s, args);
}

// --- the log ---------------------------------------------------------------------------

static int g_step;

static void log_call(const char *what, int code)
{
    printf("%d %s %d\n", g_step++, what, code);
}

// The end of a logged segment: sync of s and, with the runtime API, its last error.
static void log_sync(cudaStream_t s, const char *what)
{
    log_call(what, a_sync(s));
    if (!g_drv)
        log_call("cudaGetLastError", (int)cudaGetLastError());
}

// --- the window ------------------------------------------------------------------------

struct ctx {
    cudaStream_t s, s2;
    cudaEvent_t e0, e1;
    unsigned *x, *y;
    unsigned smem;           // dynamic shared memory of op 11
    void *p;                 // what the failing allocations return
};

// Op i of the window; *what names it.
static int op(const struct ctx *c, int i, const char **what)
{
    *what = "launch";
    switch (i) {
    case 3: *what = "record_e0"; return a_record(c->e0, c->s);
    case 4: *what = "s2_wait_e0"; return a_wait(c->s2, c->e0);
    case 5: return launch_heavy(c->y, c->x, c->s2);
    case 6: return launch_tiny(c->y, 6u, c->s2, 1, T);
    case 7: *what = "record_e1"; return a_record(c->e1, c->s2);
    case 8: *what = "s_wait_e1"; return a_wait(c->s, c->e1);
    case 11: return launch_smem(c->x, 11u, c->smem, c->s);
    default: return launch_tiny(c->x, (unsigned)i, c->s, 1, T);
    }
}

// Ops [from, to) of the window, each logged.
static void ops(const struct ctx *c, int from, int to)
{
    char label[32];
    for (int i = from; i < to; i++) {
        const char *what;
        int rc = op(c, i, &what);
        snprintf(label, sizeof label, "op%d:%s", i, what);
        log_call(label, rc);
    }
}

// The rest of the window from op `from`, then the sync of s, all logged.
static void rest(const struct ctx *c, int from)
{
    ops(c, from, W_OPS);
    log_sync(c->s, "sync");
}

// n whole windows, each with a sync; only the number of failed calls is printed.
static void warm(const struct ctx *c, int n)
{
    int failed = 0;
    const char *what;
    for (int it = 0; it < n; it++) {
        for (int i = 0; i < W_OPS; i++)
            failed += op(c, i, &what) != 0;
        failed += a_sync(c->s) != 0;
    }
    printf("warm %d failed_calls %d\n", n, failed);
}

// --- the cases -------------------------------------------------------------------------

// The window with an extra call (logged as `label`) made before its op `at`; then
// `after`, if any, and REWARM windows.
static void mid_window(struct ctx *c, int at, const char *label, int (*call)(struct ctx *),
                       void (*after)(struct ctx *) = nullptr)
{
    ops(c, 0, at);
    log_call(label, call(c));
    rest(c, at);
    if (after)
        after(c);
    warm(c, REWARM);
}

static void case_config(struct ctx *c)
{
    log_call("first_launch_block_2048", launch_tiny(c->x, 1u, c->s, 1, 2048));
    log_call("first_launch_grid_0", launch_tiny(c->x, 1u, c->s, 0, T));
    log_sync(c->s, "sync");
    warm(c, WARM);
    mid_window(c, 4, "mid_launch_block_2048",
               [](struct ctx *k) { return launch_tiny(k->x, 1u, k->s, 1, 2048); });
    mid_window(c, 10, "mid_launch_grid_0",
               [](struct ctx *k) { return launch_tiny(k->x, 1u, k->s, 0, T); });
}

static void case_smem(struct ctx *c)
{
    log_call("first_launch_smem_1MiB", launch_smem(c->x, 1u, 1u << 20, c->s));
    log_sync(c->s, "sync");
    warm(c, WARM);
    mid_window(c, 11, "mid_launch_smem_1MiB",
               [](struct ctx *k) { return launch_smem(k->x, 11u, 1u << 20, k->s); });
}

static void case_smem_attr(struct ctx *c)
{
    log_call("max_dyn_smem_64KiB", a_max_dyn_smem((const void *)k_smem, 64 << 10));
    c->smem = 64u << 10;
    warm(c, WARM);
    // op 11 now asks for more than the limit
    mid_window(c, 0, "max_dyn_smem_48KiB",
               [](struct ctx *) { return a_max_dyn_smem((const void *)k_smem, 48 << 10); },
               [](struct ctx *) {
                   log_call("max_dyn_smem_64KiB",
                            a_max_dyn_smem((const void *)k_smem, 64 << 10));
               });
}

// Handles destroyed just now: nothing is created between their destruction and their
// use (the driver may hand a freed handle out again).
// Handles the driver checks: a NULL event, a function that is no kernel.  (A destroyed
// stream or event is not one of them: using it crashes inside the driver, with or
// without the shim.)
static void case_event(struct ctx *c)
{
    warm(c, WARM);
    mid_window(c, 4, "record_null_event",
               [](struct ctx *k) { return a_record((cudaEvent_t)0, k->s); });
    mid_window(c, 9, "wait_null_event",
               [](struct ctx *k) { return a_wait(k->s, (cudaEvent_t)0); });
}

static void not_a_kernel(void) {}

static int launch_not_a_kernel(struct ctx *k)
{
    unsigned n = 0;
    void *args[] = {&k->x, &n};
    if (g_drv)
        return (int)d_cuLaunchKernel((CUfunction)0, 1, 1, 1, T, 1, 1, 0, (CUstream)k->s, args,
                                     NULL);
    return (int)cudaLaunchKernel((const void *)not_a_kernel, dim3(1), dim3(T), args, 0, k->s);
}

static void case_stream(struct ctx *c)
{
    warm(c, WARM);
    mid_window(c, 4, "launch_invalid_function", launch_not_a_kernel);
    mid_window(c, 10, "launch_invalid_function", launch_not_a_kernel);
}

static void case_oom(struct ctx *c)
{
    warm(c, WARM);
    mid_window(c, 4, "malloc_1PiB", [](struct ctx *k) { return a_malloc(&k->p, HUGE_BYTES); });
    mid_window(c, 4, "malloc_async_1PiB",
               [](struct ctx *k) { return a_malloc_async(&k->p, HUGE_BYTES, k->s); });
    log_call("malloc_host_1PiB", a_malloc_host(&c->p, HUGE_BYTES));
    log_sync(c->s, "sync");
    warm(c, REWARM);
}

// Ends the process: after the fault the context is unusable.
static int case_fault(struct ctx *c)
{
    warm(c, WARM);
    ops(c, 0, 10);
    // op 10 with an unmapped pointer: the same kernel, grid and block as the window's op 10
    log_call("launch_illegal_address", launch_tiny((unsigned *)0x100, 10u, c->s, 1, T));
    log_sync(c->s, "sync");              // the fault surfaces here: 700
    void *p = NULL;
    unsigned h[4];
    log_call("launch_after_fault", launch_tiny(c->x, 0u, c->s, 1, T));
    log_call("record_after_fault", a_record(c->e0, c->s));
    log_sync(c->s, "sync_after_fault");
    log_call("device_sync_after_fault", a_device_sync());
    log_call("malloc_after_fault", a_malloc(&p, 4096));
    log_call("memcpy_after_fault", a_memcpy_d2h(h, c->x, sizeof h));
    fflush(stdout);
    return 0;
}

static const char *const g_cases[] = {"config", "smem", "smem_attr", "event",
                                      "stream", "oom", "fault"};

int main(int argc, char **argv)
{
    int known = 0;
    for (size_t i = 0; argc == 3 && i < sizeof g_cases / sizeof *g_cases; i++)
        known |= !strcmp(argv[1], g_cases[i]);
    if (!known || (strcmp(argv[2], "rt") && strcmp(argv[2], "drv"))) {
        fprintf(stderr, "usage: %s config|smem|smem_attr|event|stream|oom|fault rt|drv\n",
                argv[0]);
        return 2;
    }
    g_mode = argv[1];
    g_drv = !strcmp(argv[2], "drv");
    setvbuf(stdout, NULL, _IOLBF, 0);

    // Setup without a kernel launch (the config and smem cases' first launch is the
    // process's first).
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.s = new_stream();
    c.s2 = new_stream();
    c.e0 = new_event();
    c.e1 = new_event();
    c.smem = SMEM_OK;
    unsigned init[T];
    for (int i = 0; i < T; i++)
        init[i] = mix32((unsigned)i * 2654435761u);
    CK(cudaMalloc(&c.x, sizeof init));
    CK(cudaMalloc(&c.y, sizeof init));
    CK(cudaMemcpy(c.x, init, sizeof init, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.y, init, sizeof init, cudaMemcpyHostToDevice));
    if (g_drv) {
        drv_load();
        for (int i = 0; i < 3; i++)
            CK(cudaGetFuncBySymbol((cudaFunction_t *)&g_cufn[i], g_kernels[i]));
    }

    if (!strcmp(g_mode, "fault"))
        return case_fault(&c);
    if (!strcmp(g_mode, "config"))
        case_config(&c);
    else if (!strcmp(g_mode, "smem"))
        case_smem(&c);
    else if (!strcmp(g_mode, "smem_attr"))
        case_smem_attr(&c);
    else if (!strcmp(g_mode, "event"))
        case_event(&c);
    else if (!strcmp(g_mode, "stream"))
        case_stream(&c);
    else
        case_oom(&c);
    print_dev("x", c.x, sizeof init);
    print_dev("y", c.y, sizeof init);
    return finish(0);
}
