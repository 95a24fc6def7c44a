/* staged_copies.c -- copies to and from pageable memory, and synchronous copies and
 * memsets, in a loop, for tests/bats/engine_sim.bats (the shim's staging ring,
 * shim/record_stage.c):
 *
 *   staged_copies MODE ITER
 *
 *   async   created blocking stream s; each iteration: a host array (pageable, on the
 *           stack) filled with the iteration's values, cuMemcpyHtoDAsync of it into
 *           x, the array overwritten at once (the driver took it at the call), add_one
 *           on x, cuMemcpyHtoDAsync of the overwritten array into y, scale on y, add_one
 *           on x, cuMemcpyDtoHAsync of x[0] and y[0] into two stack scalars (pageable:
 *           the call returns once done), which the host adds to its sums at once.  No
 *           other synchronization.
 *   sync    the C trainer's habits: add_one on x on blocking stream s, cuMemsetD8 of
 *           z (legacy stream), scale on z on s, cuMemcpyHtoD of the host array into y
 *           (overwritten at once), add_one on y on s, add_one on z on s, cuMemcpyDtoH
 *           of z's first word into a stack scalar and of y's first 4 words into pinned
 *           memory, read at once; cuCtxSynchronize every 4th iteration only.  Each
 *           synchronous copy to the host ends a window (the first one the step's, held
 *           and staged out; the second one alone).
 *   burst   created blocking stream s; each iteration: the host array filled,
 *           cuMemcpyHtoDAsync of it into y, add_one on y, scale on x, add_one on x,
 *           with no synchronization at all until the end (the ring fills up unless
 *           its slots are fenced when a full ring ends a window).
 *   page    one 4 KiB page of pageable memory whose first 64 bytes are registered
 *           (cuMemHostRegister: pinned); created blocking stream s; each iteration:
 *           add_one on x, add_one on y, cuMemcpyDtoHAsync of x[0] into the registered
 *           bytes (pinned: asynchronous) and of y[0] into the page's second half
 *           (pageable: the call returns once done), the latter added to the host's sums
 *           at once, then a memset and a kernel more; cuStreamSynchronize every 8th
 *           iteration, the registered word added then.  A memory type taken per page
 *           would take the pageable half for pinned and hold its copy without a wait.
 *   solver  the solver loop (issue 31): created blocking stream s; each iteration:
 *           cuMemsetD8Async of z's first word, add_one on x, cuMemcpyDtoHAsync of
 *           x[0] into a stack scalar (pageable: returns once done), cuStreamSynchronize,
 *           the host adding it to its sums.  Too short a window to graph.
 *   reuse   host memory given back and taken again as device memory (the simulator's
 *           device memory comes from the program's heap, large blocks mapped anew):
 *           created blocking stream s; each iteration: 1 MiB of host memory mapped
 *           (mmap), add_one on x, scale on y, add_one on x, cuMemcpyDtoHAsync of x into
 *           the mapping (pageable: staged, done at the return), its sum added, the
 *           mapping unmapped, cuMemAlloc of a temporary t (at the host buffer's
 *           address), add_one on y, cuMemcpyDtoDAsync of x into t, scale on t,
 *           cuMemcpyDtoDAsync of t into z, cuStreamSynchronize, cuMemFree(t).  An
 *           address known as pageable that comes back as device memory must be taken
 *           for device memory: its copies are not staged.  Prints "staged_copies: host
 *           address reused N" on stderr (iterations whose t had the host buffer's
 *           address).
 *
 * stdout: the host's sums of what it read back, and the sums of x, y and z at the end.
 * Exit status 0, 1 on an unexpected CUDA error, 2 on bad arguments.
 */
#include "prog.h"

#include <malloc.h>
#include <string.h>
#include <sys/mman.h>

static CUfunction add_one, scale;
static CUstream s;
static CUdeviceptr x, y, z;
static int n = PROG_N, minus = -1;
static long long host_sum;

static void add(CUdeviceptr *p)
{
    void *args[] = { p, &n };
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, args, NULL));
}

static void neg(CUdeviceptr *p)
{
    void *args[] = { p, &minus, &n };
    CK(cuLaunchKernel(scale, 2, 1, 1, PROG_N / 2, 1, 1, 0, s, args, NULL));
}

static void fill(int *host, int it, int salt)
{
    for (int i = 0; i < PROG_N; i++)
        host[i] = it * 7 + i * salt;
}

static void async_iteration(int it)
{
    int host[PROG_N], x0 = 0, y0 = 0;
    fill(host, it, 3);
    CK(cuMemcpyHtoDAsync(x, host, sizeof host, s));
    fill(host, it, 5);                   /* the copy took the array at its call */
    add(&x);
    CK(cuMemcpyHtoDAsync(y, host, sizeof host, s));
    memset(host, 0x7f, sizeof host);
    neg(&y);
    add(&x);
    CK(cuMemcpyDtoHAsync(&x0, x, sizeof x0, s));
    CK(cuMemcpyDtoHAsync(&y0, y, sizeof y0, s));
    host_sum += (long long)x0 * 3 + y0;  /* done at the return: no synchronization */
}

static void sync_iteration(int it, int *pinned)
{
    int host[PROG_N], z0 = 0;
    add(&x);
    CK(cuMemsetD8(z, (unsigned char)(it & 0x3f), sizeof host));
    neg(&z);
    fill(host, it, 11);
    CK(cuMemcpyHtoD(y, host, sizeof host));
    memset(host, 0x55, sizeof host);
    add(&y);
    add(&z);
    CK(cuMemcpyDtoH(&z0, z, sizeof z0));
    CK(cuMemcpyDtoH(pinned, y, 4 * sizeof(int)));
    host_sum += (long long)pinned[0] + (long long)pinned[3] * 2 + (long long)z0 * 5;
    if (it % 4 == 3)
        CK(cuCtxSynchronize());
}

static void solver_iteration(int it)
{
    int x0 = 0;
    CK(cuMemsetD8Async(z, (unsigned char)(it & 0x3f), sizeof x0, s));
    add(&x);
    CK(cuMemcpyDtoHAsync(&x0, x, sizeof x0, s));
    CK(cuStreamSynchronize(s));
    host_sum += x0;
}

static int reused;

/* Host memory of its own mapping, given back to the system before a temporary of
 * about its size is allocated: the simulator's allocation (glibc maps one for it, at a
 * fixed threshold) lands there.  reuse_offset: where in the mapping, found once. */
#define REUSE_MAP (1u << 20)
#define REUSE_TEMP (REUSE_MAP - 16384)
static size_t reuse_offset;

static char *reuse_map(void)
{
    char *map = mmap(NULL, REUSE_MAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (map == MAP_FAILED)
        exit(1);
    return map;
}

static void reuse_setup(void)
{
    char *map;
    CUdeviceptr t;
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);   /* fixed: not raised by frees */
    map = reuse_map();
    munmap(map, REUSE_MAP);
    CK(cuMemAlloc(&t, REUSE_TEMP));
    if (t >= (uintptr_t)map && t + PROG_N * sizeof(int) <= (uintptr_t)map + REUSE_MAP)
        reuse_offset = t - (uintptr_t)map;
    CK(cuMemFree(t));
}

static void reuse_iteration(void)
{
    char *map = reuse_map();
    int *host = (int *)(map + reuse_offset);
    CUdeviceptr t;
    add(&x);
    neg(&y);
    add(&x);
    CK(cuMemcpyDtoHAsync(host, x, PROG_N * sizeof(int), s));
    for (int i = 0; i < PROG_N; i++)
        host_sum += host[i];
    munmap(map, REUSE_MAP);
    CK(cuMemAlloc(&t, REUSE_TEMP));
    reused += t == (CUdeviceptr)(uintptr_t)host;
    add(&y);
    CK(cuMemcpyDtoDAsync(t, x, PROG_N * sizeof(int), s));
    neg(&t);
    CK(cuMemcpyDtoDAsync(z, t, PROG_N * sizeof(int), s));
    CK(cuStreamSynchronize(s));
    CK(cuMemFree(t));
}

static void page_iteration(int it, int *page)
{
    int *pinned = page, *pageable = page + 512;
    add(&x);
    add(&y);
    CK(cuMemcpyDtoHAsync(pinned, x, sizeof(int), s));
    CK(cuMemcpyDtoHAsync(pageable, y, sizeof(int), s));
    host_sum += *pageable;                /* done at the return */
    CK(cuMemsetD8Async(z, (unsigned char)(it & 0x3f), sizeof(int), s));
    neg(&x);
    if (it % 8 == 7) {
        CK(cuStreamSynchronize(s));
        host_sum += (long long)*pinned * 3;
    }
}

static void burst_iteration(int it)
{
    int host[PROG_N];
    fill(host, it, 13);
    CK(cuMemcpyHtoDAsync(y, host, sizeof host, s));
    memset(host, 0x33, sizeof host);
    add(&y);
    neg(&x);
    add(&x);
}

static long long device_sum(CUdeviceptr p)
{
    int host[PROG_N];
    long long sum = 0;
    CK(cuMemcpyDtoH(host, p, sizeof host));
    for (int i = 0; i < PROG_N; i++)
        sum += host[i];
    return sum;
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUmodule mod;
    const char *mode = argc > 1 ? argv[1] : "";
    int iters = argc > 2 ? atoi(argv[2]) : 0, *pinned;
    int sync = !strcmp(mode, "sync"), burst = !strcmp(mode, "burst");
    int solver = !strcmp(mode, "solver"), paged = !strcmp(mode, "page");
    int reuse = !strcmp(mode, "reuse");
    int *page = NULL;
    if ((!sync && !burst && !solver && !paged && !reuse && strcmp(mode, "async")) ||
        iters <= 0) {
        fprintf(stderr, "usage: staged_copies async|sync|burst|page|solver|reuse ITER\n");
        return 2;
    }
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    CK(cuMemAlloc(&x, PROG_N * sizeof(int)));
    CK(cuMemAlloc(&y, PROG_N * sizeof(int)));
    CK(cuMemAlloc(&z, PROG_N * sizeof(int)));
    CK(cuMemHostAlloc((void **)&pinned, 4 * sizeof(int), 0));
    CK(cuMemsetD32(x, 1u, PROG_N));
    CK(cuMemsetD32(y, 2u, PROG_N));
    CK(cuMemsetD32(z, 3u, PROG_N));
    if (paged) {
        if ((page = aligned_alloc(4096, 4096)) == NULL)
            return 1;
        memset(page, 0, 4096);
        CK(cuMemHostRegister(page, 64, 0));
    }
    if (reuse)
        reuse_setup();
    CK(cuCtxSynchronize());
    for (int it = 0; it < iters; it++) {
        if (paged)
            page_iteration(it, page);
        else if (sync)
            sync_iteration(it, pinned);
        else if (burst)
            burst_iteration(it);
        else if (solver)
            solver_iteration(it);
        else if (reuse)
            reuse_iteration();
        else
            async_iteration(it);
    }
    CK(cuCtxSynchronize());
    printf("host_sum %lld\n", host_sum);
    printf("sums %lld %lld %lld\n", device_sum(x), device_sum(y), device_sum(z));
    printf("staged_copies: mode=%s iterations=%d\n", mode, iters);
    if (reuse)
        fprintf(stderr, "staged_copies: host address reused %d\n", reused);
    return 0;
}
