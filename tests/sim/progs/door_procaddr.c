/* door_procaddr.c -- door 3: a program that gets cuGetProcAddress_v2 with
 * dlsym, asks it for "cuGetProcAddress" itself (11030: the 4-argument resolver,
 * 12000: the 5-argument one) and resolves everything else through those, with
 * flags default / legacy stream / per-thread default stream and cudaVersion
 * 3000 (the 32-bit cuMemAlloc ABI and the pre-4.0 launch API), 12000, 13000.
 * For each pointer it prints which export it is (compared with dlsym).
 * Launch counts (tests/bats/sim.bats relies on them):
 *   cuLaunchKernel 3, cuLaunchKernel_ptsz 4, cuLaunchGrid 1
 */
#define __CUDA_API_VERSION_INTERNAL 1   /* prototypes of every ABI by export name */
#include "prog.h"

#include <dlfcn.h>
#include <string.h>

static void *lib;
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa4_fn)(const char *, void **, int, cuuint64_t);
static gpa2_fn gpa2;
static gpa4_fn gpa4;

static const char *flag_name(cuuint64_t flags)
{
    return flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM ? "ptds"
           : flags == CU_GET_PROC_ADDRESS_LEGACY_STREAM           ? "legacy"
                                                                  : "default";
}

/* The exported name p is, among the plausible ABIs of base. */
static const char *which(const char *base, void *p)
{
    static const char *suffixes[] = { "", "_v2", "_v3", "_v4", "_ptsz", "_ptds", "_v2_ptsz",
                                      "_v2_ptds", "WithFlags" };
    static char name[128];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        snprintf(name, sizeof name, "%s%s", base, suffixes[i]);
        if (p && dlsym(lib, name) == p)
            return name;
    }
    return p ? "?" : "NULL";
}

/* Resolves base through the 5-argument resolver and prints the outcome. */
static void *resolve(const char *base, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult status = 0;
    CUresult rc = gpa2(base, &p, version, flags, &status);
    printf("resolve %s@%d/%s: rc=%d status=%d -> %s\n", base, version, flag_name(flags),
           (int)rc, (int)status, which(base, p));
    return p;
}

static void *must(const char *base, int version, cuuint64_t flags)
{
    void *p = resolve(base, version, flags);
    if (!p)
        exit(1);
    return p;
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

static void setup(CUfunction *add_one, CUdeviceptr *p)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CK(((__typeof__(&cuInit))must("cuInit", 12000, 0))(0));
    CK(((__typeof__(&cuDeviceGet))must("cuDeviceGet", 12000, 0))(&dev, 0));
    CK(((__typeof__(&cuDevicePrimaryCtxRetain))must("cuDevicePrimaryCtxRetain", 12000, 0))(
        &ctx, dev));
    CK(((__typeof__(&cuCtxSetCurrent))must("cuCtxSetCurrent", 12000, 0))(ctx));
    prog_register((sim_register_kernel_t)dlsym(lib, SIM_REGISTER_KERNEL_SYMBOL));
    CK(((__typeof__(&cuModuleLoadData))must("cuModuleLoadData", 13000, 0))(&mod, "m"));
    CK(((__typeof__(&cuModuleGetFunction))must("cuModuleGetFunction", 13000, 0))(
        add_one, mod, "add_one"));
    CK(((__typeof__(&cuMemAlloc_v2))must("cuMemAlloc", 12000, 0))(p, PROG_N * sizeof(int)));
    CK(((__typeof__(&cuMemsetD32_v2))must("cuMemsetD32", 12000, 0))(*p, 0, PROG_N));
}

static void launches(CUfunction f, CUdeviceptr p)
{
    int n = PROG_N;
    void *args[] = { &p, &n };
    launch_fn plain = (launch_fn)must("cuLaunchKernel", 12000, 0);
    launch_fn legacy = (launch_fn)must("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
    launch_fn ptds = (launch_fn)must("cuLaunchKernel", 12000,
                                     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    void *q = NULL;

    CK(plain(f, 1, 1, 1, PROG_N, 1, 1, 0, NULL, args, NULL));
    CK(plain(f, 1, 1, 1, PROG_N, 1, 1, 0, NULL, args, NULL));
    CK(legacy(f, 1, 1, 1, PROG_N, 1, 1, 0, NULL, args, NULL));
    for (int i = 0; i < 3; i++)
        CK(ptds(f, 2, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    /* the 4-argument resolver */
    CK(gpa4("cuLaunchKernel", &q, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
    printf("resolve4 cuLaunchKernel@12000/ptds -> %s\n", which("cuLaunchKernel", q));
    CK(((launch_fn)q)(f, 1, 1, 1, PROG_N, 1, 1, 0, NULL, args, NULL));
}

/* cudaVersion 3000: 32-bit CUdeviceptr ABI and the pre-4.0 launch API. */
static void legacy_abi(CUfunction f)
{
    CUdeviceptr_v1 d = 0;
    int h[PROG_N], n = PROG_N;
    CUdeviceptr wide;
    resolve("cuLaunchKernel", 3000, 0);            /* VERSION_NOT_SUFFICIENT */
    CK(((__typeof__(&cuMemAlloc))must("cuMemAlloc", 3000, 0))(&d, sizeof h));
    CK(((__typeof__(&cuMemsetD32))must("cuMemsetD32", 3000, 0))(d, 5, PROG_N));
    wide = d;
    CK(((__typeof__(&cuFuncSetBlockShape))must("cuFuncSetBlockShape", 3000, 0))(f, PROG_N, 1, 1));
    CK(((__typeof__(&cuParamSetSize))must("cuParamSetSize", 3000, 0))(f, 12));
    CK(((__typeof__(&cuParamSetv))must("cuParamSetv", 3000, 0))(f, 0, &wide, sizeof wide));
    CK(((__typeof__(&cuParamSeti))must("cuParamSeti", 3000, 0))(f, 8, (unsigned)n));
    CK(((__typeof__(&cuLaunchGrid))must("cuLaunchGrid", 3000, 0))(f, 1, 1));
    CK(((__typeof__(&cuMemcpyDtoH))must("cuMemcpyDtoH", 3000, 0))(h, d, sizeof h));
    printf("legacy ABI: allocated=%d sum=%ld\n", d != 0, prog_sum_int(h, PROG_N));
    CK(((__typeof__(&cuMemFree))must("cuMemFree", 3000, 0))(d));
}

int main(void)
{
    CUfunction add_one;
    CUdeviceptr p;
    int h[PROG_N];
    void *self4 = NULL, *self5 = NULL;

    if (!(lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    gpa2 = (gpa2_fn)dlsym(lib, "cuGetProcAddress_v2");
    if (!gpa2)
        return 1;
    CK(gpa2("cuGetProcAddress", &self4, 11030, 0, NULL));
    CK(gpa2("cuGetProcAddress", &self5, 12000, 0, NULL));
    printf("cuGetProcAddress@11030 -> %s\n", which("cuGetProcAddress", self4));
    printf("cuGetProcAddress@12000 -> %s\n", which("cuGetProcAddress", self5));
    gpa4 = (gpa4_fn)self4;
    gpa2 = (gpa2_fn)self5;

    setup(&add_one, &p);
    launches(add_one, p);
    legacy_abi(add_one);
    resolve("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    resolve("cuStreamBeginCapture", 10000, 0);
    resolve("cuStreamBeginCapture", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    resolve("cuGraphInstantiate", 11000, 0);
    resolve("cuGraphInstantiate", 12000, 0);
    resolve("cuCtxCreate", 12050, 0);
    resolve("cuMemAlloc_v2", 12000, 0);                  /* not a base name */
    resolve("cuDoesNotExist", 12000, 0);

    CK(((__typeof__(&cuMemcpyDtoH_v2))must("cuMemcpyDtoH", 12000, 0))(h, p, sizeof h));
    printf("door_procaddr: p[0]=%d sum=%ld\n", h[0], prog_sum_int(h, PROG_N));
    return 0;
}
