/* drv_ptsz.c -- the per-thread default stream ABI for drv_prog (program (c)).
 * Built with -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1, so cuda.h maps cuLaunchKernel to
 * cuLaunchKernel_ptsz, cuLaunchKernelEx to cuLaunchKernelEx_ptsz, cuStreamSynchronize
 * to cuStreamSynchronize_ptsz, and stream 0 means this thread's default stream. */
#include "drv_common.h"
#include <string.h>

long ptsz_work(CUfunction f_fill, CUfunction f_axpy, CUdeviceptr buf, int iters,
               unsigned seed)
{
    long launches = 0;
    int n = NELEM;
    unsigned gs = (NELEM + 255) / 256, bs = 256;
    void *pf[] = {&buf, &n, &seed};
    CK(cuLaunchKernel(f_fill, gs, 1, 1, bs, 1, 1, 0, 0, pf, NULL));
    launches++;
    for (int it = 0; it < iters; it++) {
        float a = 1.0f / (float)(it + 2);
        void *pa[] = {&buf, &buf, &a, &n};
        CK(cuLaunchKernel(f_axpy, gs, 1, 1, bs, 1, 1, 0, 0, pa, NULL));
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = gs, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = bs, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.hStream = 0;
        CK(cuLaunchKernelEx(&cfg, f_axpy, pa, NULL));
        launches += 2;
        if (it % 4 == 3)
            CK(cuStreamSynchronize(0));
    }
    CK(cuStreamSynchronize(0));
    return launches;
}
