// churn_prog.cu -- loops that make and destroy their CUDA objects inside the loop, as
// quick user code and many samples do (realistic.bats, make bench-loose): events, streams,
// texture objects and pinned buffers created and destroyed every iteration, and a kernel
// that launches kernels itself (dynamic parallelism).  The shim must keep their results
// exact, and each loop at least as fast as without it.
//
// usage: churn_prog --mode MODE [--iters I] [--time] [--warmup W]
//   events   cudaEventCreate of start and stop, cudaEventRecord(start), 5 kernels on the
//            legacy stream, cudaEventRecord(stop), cudaEventSynchronize, cudaEventElapsedTime
//            (checked, not hashed), a synchronous cudaMemcpy of 4096 words into a pageable
//            buffer, cudaEventDestroy of both.  Default 20000 iterations.
//   streams  cudaStreamCreateWithFlags(non-blocking), 5 kernels on it, cudaMemcpyAsync of
//            4096 words to pinned memory, cudaStreamSynchronize, cudaStreamDestroy.
//            Default 20000 iterations.
//   texture  cudaCreateTextureObject over the current input (a linear buffer: the two
//            buffers take turns), a kernel reading it with tex1Dfetch, 3 kernels, a
//            synchronous copy back, cudaDestroyTextureObject.  Default 20000 iterations.
//   pinned   cudaMallocHost of a buffer (two sizes in turn), the host fills it, an async
//            upload, 4 kernels, an async download into it, cudaStreamSynchronize(0), the
//            host reads it, cudaFreeHost.  Default 10000 iterations.
//   cdp      a kernel of one thread launching 3 child kernels (CUDA dynamic parallelism;
//            the parent completes when they have), 2 more kernels from the host, a
//            synchronous copy back.  Default 20000 iterations.
//   --iters I, --time, --warmup W: see mode_loop.cuh.
//
// stdout: "iterations <n>", "result <16 hex>" (FNV-1a over every read back and the final
// device state), with --time "per_iter_us p50 <x> p90 <y>".  Integer arithmetic only:
// bit-identical run to run.  Every CUDA call is checked (exit 2 on an error).  Built with
// -rdc=true and cudadevrt (the cdp mode).
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.cuh"   // KL, k_seed_u, k_affine, k_heavy, k_combine, dev_u
#include "mode_loop.cuh"     // tick, fold, fold_free_pair, elapsed_ms, mode_main

#define TB 256        // threads per block
#define NELEM (1 << 16)
#define NBACK 4096    // words read back each iteration

// the kernels of one step on x (scratch y), on stream s: 4 launches
static void step_kernels(unsigned *x, unsigned *y, int it, cudaStream_t s)
{
    const int gb = NELEM / TB;
    KL(k_affine<<<gb, TB, 0, s>>>(x, NELEM, 2654435761u, (unsigned)it));
    KL(k_heavy<<<gb, TB, 0, s>>>(y, x, NELEM, (unsigned)it * 977u, 3));
    KL(k_combine<<<gb, TB, 0, s>>>(x, y, y, NELEM));
    KL(k_heavy<<<gb, TB, 0, s>>>(x, y, NELEM, 0x9e3779b1u ^ (unsigned)it, 2));
}

// --- events ---------------------------------------------------------------------------------

static void run_events(void)
{
    unsigned *x = dev_u(NELEM, 11, 0), *y = dev_u(NELEM, 12, 0);
    unsigned *back = (unsigned *)xmalloc(NBACK * sizeof(unsigned));
    double total_ms = 0;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        cudaEvent_t start, stop;
        CK(cudaEventCreate(&start));
        CK(cudaEventCreate(&stop));
        CK(cudaEventRecord(start, 0));
        step_kernels(x, y, it, 0);
        KL(k_affine<<<NELEM / TB, TB>>>(y, NELEM, 5u, (unsigned)it));
        CK(cudaEventRecord(stop, 0));
        CK(cudaEventSynchronize(stop));
        total_ms += elapsed_ms(start, stop, it); // not hashed: not deterministic
        CK(cudaMemcpy(back, x + (it % 16) * NBACK, NBACK * sizeof(unsigned),
                      cudaMemcpyDeviceToHost));
        fold(back, NBACK * sizeof(unsigned));
        CK(cudaEventDestroy(start));
        CK(cudaEventDestroy(stop));
        tick(it, t0);
    }
    fprintf(stderr, "event_ms_total %.3f\n", total_ms);
    free(back);
    fold_free_pair(x, y, NELEM);
}

// --- streams --------------------------------------------------------------------------------

static void run_streams(void)
{
    unsigned *x = dev_u(NELEM, 21, 0), *y = dev_u(NELEM, 22, 0), *h;
    CK(cudaDeviceSynchronize()); // the seeds ran on the legacy stream
    CK(cudaMallocHost(&h, NBACK * sizeof(unsigned)));
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        cudaStream_t s;
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        step_kernels(x, y, it, s);
        KL(k_affine<<<NELEM / TB, TB, 0, s>>>(y, NELEM, 7u, (unsigned)it));
        CK(cudaMemcpyAsync(h, y + (it % 16) * NBACK, NBACK * sizeof(unsigned),
                           cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        fold(h, NBACK * sizeof(unsigned));
        CK(cudaStreamDestroy(s));
        tick(it, t0);
    }
    CK(cudaFreeHost(h));
    fold_free_pair(x, y, NELEM);
}

// --- texture --------------------------------------------------------------------------------

// out[i] = mix32(tex[i] + tex[(i * 5 + it) % n]) ^ salt: reads its input through the
// texture object (linear memory, unsigned elements, no filtering)
__global__ void k_tex_read(unsigned *out, cudaTextureObject_t tex, int n, unsigned salt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned j = ((unsigned)i * 5u + salt) % (unsigned)n;
        out[i] = mix32(tex1Dfetch<unsigned>(tex, i) + tex1Dfetch<unsigned>(tex, (int)j)) ^ salt;
    }
}

static cudaTextureObject_t texture_over(const unsigned *buf, int n)
{
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = (void *)buf;
    res.res.linear.desc = cudaCreateChannelDesc<unsigned>();
    res.res.linear.sizeInBytes = (size_t)n * sizeof(unsigned);
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    CK(cudaCreateTextureObject(&tex, &res, &td, NULL));
    return tex;
}

static void run_texture(void)
{
    unsigned *a = dev_u(NELEM, 31, 0), *b = dev_u(NELEM, 32, 0), *t = dev_u(NELEM, 33, 0);
    unsigned *back = (unsigned *)xmalloc(NBACK * sizeof(unsigned));
    const int gb = NELEM / TB;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        cudaTextureObject_t tex = texture_over(a, NELEM);
        KL(k_tex_read<<<gb, TB>>>(b, tex, NELEM, (unsigned)it));
        KL(k_heavy<<<gb, TB>>>(t, b, NELEM, (unsigned)it, 2));
        KL(k_combine<<<gb, TB>>>(b, t, a, NELEM));
        KL(k_affine<<<gb, TB>>>(b, NELEM, 3u, (unsigned)it));
        CK(cudaMemcpy(back, b + (it % 16) * NBACK, NBACK * sizeof(unsigned),
                      cudaMemcpyDeviceToHost));
        fold(back, NBACK * sizeof(unsigned));
        CK(cudaDestroyTextureObject(tex));
        unsigned *s = a;
        a = b;
        b = s;
        tick(it, t0);
    }
    fold_dev(a, NELEM * sizeof(unsigned));
    free(back);
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(t));
}

// --- pinned ---------------------------------------------------------------------------------

static void run_pinned(void)
{
    unsigned *x = dev_u(NELEM, 41, 0), *y = dev_u(NELEM, 42, 0);
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        const int words = (it & 1) ? NBACK : NBACK / 2;
        const size_t bytes = (size_t)words * sizeof(unsigned);
        unsigned *h;
        CK(cudaMallocHost(&h, bytes));
        for (int i = 0; i < words; i++)
            h[i] = mix32((unsigned)(i + it * 31));
        CK(cudaMemcpyAsync(y, h, bytes, cudaMemcpyHostToDevice, 0));
        step_kernels(x, y, it, 0);
        CK(cudaMemcpyAsync(h, x + (it % 16) * NBACK, bytes, cudaMemcpyDeviceToHost, 0));
        CK(cudaStreamSynchronize(0));
        fold(h, bytes);
        CK(cudaFreeHost(h));
        tick(it, t0);
    }
    fold_free_pair(x, y, NELEM);
}

// --- cdp ------------------------------------------------------------------------------------

// one thread: 3 child grids in order on the parent's stream; the parent grid completes
// once they have
__global__ void k_parent(unsigned *x, unsigned *y, int n, unsigned salt)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int gb = (n + TB - 1) / TB;
        k_affine<<<gb, TB>>>(x, n, 2654435761u, salt);
        k_heavy<<<gb, TB>>>(y, x, n, salt * 977u, 3);
        k_combine<<<gb, TB>>>(x, y, y, n);
    }
}

static void run_cdp(void)
{
    unsigned *x = dev_u(NELEM, 51, 0), *y = dev_u(NELEM, 52, 0);
    unsigned *back = (unsigned *)xmalloc(NBACK * sizeof(unsigned));
    const int gb = NELEM / TB;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        KL(k_parent<<<1, 32>>>(x, y, NELEM, (unsigned)it));
        KL(k_heavy<<<gb, TB>>>(x, y, NELEM, 0x85ebca6bu ^ (unsigned)it, 2));
        KL(k_affine<<<gb, TB>>>(y, NELEM, 9u, (unsigned)it));
        CK(cudaMemcpy(back, x + (it % 16) * NBACK, NBACK * sizeof(unsigned),
                      cudaMemcpyDeviceToHost));
        fold(back, NBACK * sizeof(unsigned));
        tick(it, t0);
    }
    free(back);
    fold_free_pair(x, y, NELEM);
}

// --- main -----------------------------------------------------------------------------------

static const struct loop_mode modes[] = {
    {"events", run_events, 20000}, {"streams", run_streams, 20000},
    {"texture", run_texture, 20000}, {"pinned", run_pinned, 10000},
    {"cdp", run_cdp, 20000},
};

int main(int argc, char **argv)
{
    return mode_main(argc, argv, "churn_prog", modes, sizeof modes / sizeof modes[0]);
}
