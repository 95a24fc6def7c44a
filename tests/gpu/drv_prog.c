/* drv_prog.c -- GPU test program (c): the CUDA driver API, no runtime.
 *
 * Loads the fatbin embedded by drv_blob.S with cuModuleLoadData (CUfunction) and with
 * cuLibraryLoadData (CUkernel, launched as a CUfunction), and launches through:
 *   cuLaunchKernel with kernelParams and with `extra` (packed buffer), on a created
 *   stream, on the legacy default stream and on CU_STREAM_PER_THREAD;
 *   cuLaunchKernelEx; cuLaunchCooperativeKernel;
 *   the per-thread-default-stream ABI (_ptsz) from drv_ptsz.c, from two threads;
 *   pointers from cuGetProcAddress (door 3) and dlsym (door 2).
 * Linked against libcuda (door 1: exported symbols).
 *
 *   drv_prog [iterations]        (default 10)
 *
 * stdout: raw bytes of every buffer; stderr: "expected_launches N" and, per launch entry
 * point the program calls, "expected_call SYMBOL N".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "drv_common.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char ag_fatbin[];

typedef CUresult (*launch_pfn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);

static CUcontext g_ctx;

struct thread_arg {
    CUfunction f_fill, f_axpy;
    CUdeviceptr buf;
    int iters;
    unsigned seed;
    long launches;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    CK(cuCtxSetCurrent(g_ctx));
    a->launches = ptsz_work(a->f_fill, a->f_axpy, a->buf, a->iters, a->seed);
    return NULL;
}

static void dump(CUdeviceptr d, size_t n)
{
    float *h = malloc(n * sizeof(float));
    CK(cuMemcpyDtoH(h, d, n * sizeof(float)));
    fwrite(h, sizeof(float), n, stdout);
    free(h);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 10;
    long launches = 0;
    int n = NELEM;
    unsigned gs = (NELEM + 255) / 256, bs = 256;
    CUdevice dev;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&g_ctx, dev));
    CK(cuCtxSetCurrent(g_ctx));

    CUmodule mod;
    CK(cuModuleLoadData(&mod, ag_fatbin));
    CUfunction f_fill, f_axpy, f_mix, f_packed;
    CK(cuModuleGetFunction(&f_fill, mod, "ag_fill"));
    CK(cuModuleGetFunction(&f_axpy, mod, "ag_axpy"));
    CK(cuModuleGetFunction(&f_mix, mod, "ag_mix"));
    CK(cuModuleGetFunction(&f_packed, mod, "ag_packed"));

    CUlibrary lib;
    CK(cuLibraryLoadData(&lib, ag_fatbin, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k_mix;
    CK(cuLibraryGetKernel(&k_mix, lib, "ag_mix"));

    CUdeviceptr x, y, t0, t1;
    CK(cuMemAlloc(&x, NELEM * sizeof(float)));
    CK(cuMemAlloc(&y, NELEM * sizeof(float)));
    CK(cuMemAlloc(&t0, NELEM * sizeof(float)));
    CK(cuMemAlloc(&t1, NELEM * sizeof(float)));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));

    /* 1. kernelParams on a created stream */
    {
        unsigned s1 = 11, s2 = 12;
        void *p1[] = {&x, &n, &s1}, *p2[] = {&y, &n, &s2};
        CK(cuLaunchKernel(f_fill, gs, 1, 1, bs, 1, 1, 0, s, p1, NULL));
        CK(cuLaunchKernel(f_fill, gs, 1, 1, bs, 1, 1, 0, s, p2, NULL));
        launches += 2;
        CK(cuStreamSynchronize(s));
    }

    /* the `extra` layout must match the kernel's: check it with cuFuncGetParamInfo */
    size_t off[5], sz[5];
    for (int i = 0; i < 5; i++)
        CK(cuFuncGetParamInfo(f_packed, (size_t)i, &off[i], &sz[i]));
    if (off[0] != 0 || off[1] != 8 || off[2] != 16 || off[3] != 24 || off[4] != 28) {
        fprintf(stderr, "unexpected ag_packed layout %zu %zu %zu %zu %zu\n", off[0], off[1],
                off[2], off[3], off[4]);
        return 2;
    }

    launch_pfn gpa_launch = NULL, gpa_ptsz = NULL, dlsym_launch = NULL;
    {
        CUdriverProcAddressQueryResult qr;
        void *p = NULL;
        CK(cuGetProcAddress("cuLaunchKernel", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &qr));
        if (!p || qr != CU_GET_PROC_ADDRESS_SUCCESS) {
            fprintf(stderr, "cuGetProcAddress(cuLaunchKernel) failed\n");
            return 2;
        }
        gpa_launch = (launch_pfn)p;
        p = NULL;
        CK(cuGetProcAddress("cuLaunchKernel", &p, 12000,
                            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &qr));
        if (!p || qr != CU_GET_PROC_ADDRESS_SUCCESS) {
            fprintf(stderr, "cuGetProcAddress(cuLaunchKernel, PER_THREAD) failed\n");
            return 2;
        }
        gpa_ptsz = (launch_pfn)p;
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (!h)
            h = dlopen("libcuda.so.1", RTLD_NOW);
        dlsym_launch = h ? (launch_pfn)dlsym(h, "cuLaunchKernel") : NULL;
        if (!dlsym_launch) {
            fprintf(stderr, "dlsym(cuLaunchKernel) failed\n");
            return 2;
        }
    }

    for (int it = 0; it < iters; it++) {
        float a = 0.5f;
        int step = it;
        void *pax[] = {&y, &x, &a, &n};
        void *pmx[] = {&x, &y, &n, &step};

        /* 2. kernelParams, created stream */
        CK(cuLaunchKernel(f_axpy, gs, 1, 1, bs, 1, 1, 0, s, pax, NULL));
        /* 3. `extra` packed buffer, created stream */
        {
            unsigned char buf[32];
            char c = (char)(it + 3);
            double d = 0.999;
            short sh = (short)(it * 5 - 7);
            memset(buf, 0, sizeof buf);
            memcpy(buf + off[0], &y, sizeof y);
            memcpy(buf + off[1], &c, 1);
            memcpy(buf + off[2], &d, 8);
            memcpy(buf + off[3], &n, 4);
            memcpy(buf + off[4], &sh, 2);
            size_t size = off[4] + sz[4];
            void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
                             &size, CU_LAUNCH_PARAM_END};
            CK(cuLaunchKernel(f_packed, gs, 1, 1, bs, 1, 1, 0, s, NULL, extra));
        }
        /* 4. CUkernel (library API) as CUfunction, kernelParams, created stream */
        CK(cuLaunchKernel((CUfunction)k_mix, gs, 1, 1, bs, 1, 1, 0, s, pmx, NULL));
        /* 5. cuLaunchKernelEx, created stream */
        {
            CUlaunchConfig cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.gridDimX = gs, cfg.gridDimY = 1, cfg.gridDimZ = 1;
            cfg.blockDimX = bs, cfg.blockDimY = 1, cfg.blockDimZ = 1;
            cfg.hStream = s;
            CK(cuLaunchKernelEx(&cfg, f_axpy, pax, NULL));
        }
        /* 6. cooperative launch */
        CK(cuLaunchCooperativeKernel(f_mix, 64, 1, 1, bs, 1, 1, 0, s, pmx)); /* co-resident */
        launches += 5;
        CK(cuEventRecord(ev, s));
        /* 7. legacy default stream (NULL) after the created stream's work */
        CK(cuStreamWaitEvent(NULL, ev, 0));
        CK(gpa_launch(f_axpy, gs, 1, 1, bs, 1, 1, 0, NULL, pax, NULL));
        CK(dlsym_launch(f_mix, gs, 1, 1, bs, 1, 1, 0, CU_STREAM_LEGACY, pmx, NULL));
        /* 8. CU_STREAM_PER_THREAD through the legacy ABI: blocking, so ordered */
        CK(cuLaunchKernel(f_axpy, gs, 1, 1, bs, 1, 1, 0, CU_STREAM_PER_THREAD, pax, NULL));
        /* 9. cuLaunchKernel_ptsz from cuGetProcAddress(PER_THREAD): same stream as 8 */
        CK(gpa_ptsz(f_mix, gs, 1, 1, bs, 1, 1, 0, NULL, pmx, NULL));
        launches += 4;
        CK(cuCtxSynchronize());
    }

    /* 10. per-thread default stream ABI (_ptsz), two threads, separate buffers */
    struct thread_arg ta[2] = {{f_fill, f_axpy, t0, iters, 21u, 0},
                               {f_fill, f_axpy, t1, iters, 22u, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, thread_main, &ta[i]) != 0)
            return 2;
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        launches += ta[i].launches;
    }
    CK(cuCtxSynchronize());

    dump(x, NELEM);
    dump(y, NELEM);
    dump(t0, NELEM);
    dump(t1, NELEM);
    fflush(stdout);

    CK(cuEventDestroy(ev));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
    CK(cuMemFree(t0));
    CK(cuMemFree(t1));
    CK(cuLibraryUnload(lib));
    CK(cuModuleUnload(mod));
    CK(cuDevicePrimaryCtxRelease(dev));
    fprintf(stderr, "expected_launches %ld\n", launches);
    /* per entry point, as a launch counter keyed by symbol should see them */
    fprintf(stderr, "expected_call cuLaunchKernel %d\n", 2 + 6 * iters);
    fprintf(stderr, "expected_call cuLaunchKernelEx %d\n", iters);
    fprintf(stderr, "expected_call cuLaunchCooperativeKernel %d\n", iters);
    fprintf(stderr, "expected_call cuLaunchKernel_ptsz %d\n", iters + 2 * (1 + iters));
    fprintf(stderr, "expected_call cuLaunchKernelEx_ptsz %d\n", 2 * iters);
    return 0;
}
