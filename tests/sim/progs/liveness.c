/* liveness.c -- memory the program frees while graphs point into it.
 *
 *   liveness retire   a repeating window on buffer A (graphed), A freed, the same
 *                     window on a new buffer: the graph that pointed into A is
 *                     dropped and a new one built; a second buffer's graph stays
 *   liveness KIND     after a graphed loop on memory of KIND (device, host, vmm),
 *                     the memory is freed and one more launch passes a pointer
 *                     into it (with n = 0, so that the kernel touches nothing):
 *                     AUTOGRAPH_CHECK_LIVENESS=warn reports it, =error exits 87
 * Prints the sums and "dead launch issued" after the launch with the dead pointer.
 */
#include "prog.h"

#include <string.h>

static CUfunction add_one, scale;
static CUstream stream;

static void step(CUdeviceptr p, int n)
{
    int factor = 2;
    void *add_args[] = { &p, &n }, *scale_args[] = { &p, &factor, &n };
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, stream, add_args, NULL));
    CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, stream, scale_args, NULL));
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, stream, add_args, NULL));
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, stream, add_args, NULL));
}

static void loop(CUdeviceptr p, int iters)
{
    int h[PROG_N];
    CK(cuMemsetD32Async(p, 1, PROG_N, stream));
    for (int i = 0; i < iters; i++) {
        step(p, PROG_N);
        CK(cuStreamSynchronize(stream));
    }
    CK(cuMemcpyDtoH_v2(h, p, sizeof h));
    printf("sum %ld\n", prog_sum_int(h, PROG_N));
}

static void retire(void)
{
    CUdeviceptr a, b, c;
    CK(cuMemAlloc_v2(&a, PROG_N * sizeof(int)));
    CK(cuMemAlloc_v2(&b, PROG_N * sizeof(int)));
    loop(a, 6);
    loop(b, 6);
    CK(cuMemFree_v2(a));
    CK(cuMemAlloc_v2(&c, 2 * PROG_N * sizeof(int)));
    loop(c + 64, 6);
    loop(b, 6);
    CK(cuMemFree_v2(b));
    CK(cuMemFree_v2(c));
}

static CUdeviceptr vmm_map(CUmemGenericAllocationHandle *h, size_t *gran)
{
    CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
    CUmemAccessDesc acc = { prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    CUdeviceptr va;
    CK(cuMemGetAllocationGranularity(gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CK(cuMemAddressReserve(&va, *gran, 0, 0, 0));
    CK(cuMemCreate(h, *gran, &prop, 0));
    CK(cuMemMap(va, *gran, 0, *h, 0));
    CK(cuMemSetAccess(va, *gran, &acc, 1));
    return va;
}

/* Loops on memory of `kind`, frees it, launches once more with a pointer into it. */
static void dead(const char *kind)
{
    CUmemGenericAllocationHandle h = 0;
    CUdeviceptr p = 0;
    size_t gran = 0;
    void *host = NULL;
    if (strcmp(kind, "device") == 0) {
        CK(cuMemAlloc_v2(&p, PROG_N * sizeof(int)));
    } else if (strcmp(kind, "host") == 0) {
        CK(cuMemHostAlloc(&host, PROG_N * sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP));
        CK(cuMemHostGetDevicePointer_v2(&p, host, 0));
    } else {
        p = vmm_map(&h, &gran);
    }
    loop(p, 6);
    if (host)
        CK(cuMemFreeHost(host));
    else if (h) {
        CK(cuMemUnmap(p, gran));
        CK(cuMemRelease(h));
    } else
        CK(cuMemFree_v2(p));
    step(p + 16, 0);                    /* an interior pointer into the freed memory */
    CK(cuStreamSynchronize(stream));
    printf("dead launch issued\n");
    if (h)
        CK(cuMemAddressFree(p, gran));
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUmodule mod;
    const char *mode = argc > 1 ? argv[1] : "retire";
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    if (strcmp(mode, "retire") == 0)
        retire();
    else
        dead(mode);
    CK(cuStreamDestroy_v2(stream));
    return 0;
}
