// engine_prog.cu -- GPU test program for the auto-graphing engine (tests/gpu/engine.bats).
//
// Built twice by tests/gpu/gpu.mk: nvcc's default static cudart (build/gpu/engine_static)
// and -cudart=shared (build/gpu/engine_shared).  One workload per run, chosen by the
// first argument:
//
//   engine_prog tiny N ITERS     N tiny kernels (x = x*3 + j, order matters) then a sync
//   engine_prog jacobi ITERS     H2D of a host-computed factor (pinned), memset of a scratch
//                                buffer, stencil with ping-pong in/out pointers, reduction,
//                                D2H of the residual and of one row into pinned memory,
//                                cudaStreamSynchronize; the host reads the residual and
//                                derives the next factor from it
//   engine_prog scalar ITERS     5 kernels per window, two of them with a scalar argument
//                                (unsigned, float) that changes every iteration
//   engine_prog forkjoin ITERS   3 non-blocking streams: fork with an event on s0, kernels
//                                on s1 and s2, join back with events, sync s0
//   engine_prog churn ITERS      forkjoin's loop with its fork event made anew each
//                                iteration and destroyed after the sync (timing on: the
//                                time from a start event to it is asked for after the sync)
//   engine_prog eventmid ITERS [E]  forkjoin's loop as cuDNN runs it in a PyTorch CNN
//                                step: the fork and join events made anew every
//                                iteration and destroyed inside the window (fork after
//                                the joins, before k_combine; the joins after it, before a
//                                last k_affine), then the sync; every E-th iteration
//                                (default 0: never) k_affine comes before k_combine (a
//                                mismatch just after fork's destroy)
//   engine_prog legacy ITERS     5 kernels on the legacy default stream (stream 0), then
//                                cudaDeviceSynchronize
//   engine_prog legacymix ITERS  a blocking stream s (cudaStreamCreate) and the legacy
//                                stream taking turns, ordered only by the legacy stream's
//                                implicit synchronization: a long k_heavy on s writes x, a
//                                legacy kernel reads it, k_combine on s reads that, a
//                                legacy k_affine, a last kernel on s; cudaStreamSynchronize(s)
//                                (a graph without the implicit order as edges would let the
//                                legacy kernel read x before the long kernel wrote it)
//   engine_prog norepeat ITERS   windows that never repeat: the kernel sequence of window w
//                                is the base-4 digits of w+1 (all distinct), the grid size
//                                changes every launch; a sync after each window
//   engine_prog hostwork ITERS   6 launches per window, each after a few microseconds of
//                                host work that computes its argument; then a sync
//   engine_prog phases ITERS     three phases in one process: norepeat ITERS (the engine
//                                ends up recording light), then tiny 20 kernels x ITERS
//                                syncs (full recording comes back, graphs), then rare
//                                ITERS steps with one sync at the end (period detection)
//   engine_prog rare ITERS [E]   a training-like loop: ITERS steps of 20 kernels and one
//                                memset, sync (with a D2H of the loss) only every E steps
//                                (default 50) and at the end
//   engine_prog smemtoggle ITERS [E]  as cuDNN does: k_smem's dynamic shared memory limit
//                                set to 32 KiB, k_smem asking for 32 KiB (its input buffer
//                                turns every iteration: a patch), k_affine, the limit set
//                                to 8 KiB, k_smem asking for 8 KiB, k_affine, sync; every
//                                E-th iteration (default 0: never) k_affine instead of the
//                                8 KiB k_smem (a mismatch: the held 32 KiB launch goes out
//                                on its own under the lower limit)
//   engine_prog exattrs ITERS [E]  6 launches per window through cudaLaunchKernelEx
//                                (the driver's cuLaunchKernelEx) with a launch attribute,
//                                the stream priority the device calls least, k_affine on
//                                three buffers in turn, then a sync; every E-th iteration
//                                (default 0: never) the 4th launch asks for the greatest
//                                priority instead (another op: a mismatch)
//   engine_prog pdl ITERS        as XLA launches: 8 kernels per window through
//                                cudaLaunchKernelEx with programmatic stream
//                                serialization allowed, each waiting for the one before
//                                with cudaGridDependencySynchronize and letting the next
//                                start early (cudaTriggerProgrammaticLaunchCompletion
//                                after its writes), ping-pong between two buffers; a
//                                sync (a graph that lost the dependency races)
//
// stdout: one line per result buffer, "<mode> <buffer> bytes <n> fnv1a64 <hex>", the
// FNV-1a hash of its exact bytes -- nothing that varies between runs, so stdout with and
// without the shim compares byte for byte (the static and shared builds print the same).
// stderr: "expected_launches N" (kernel launches the program made).  Every CUDA call is
// checked; an error prints a message and exits 2.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prog_common.cuh"

// --- kernels of this program (prog_common.cuh has seed, tiny, affine, heavy, combine) ---

// f = frac(f * alpha) - 0.5
__global__ void k_fscale(float *f, int n, float alpha)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = f[i] * alpha + 0.25f;
        f[i] = v - floorf(v) - 0.5f;
    }
}

// x ^= y + bits(f)
__global__ void k_fold(unsigned *x, const unsigned *y, const float *f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] ^= y[(i + 1) % n] + (unsigned)__float_as_int(f[i]);
}

// norepeat: four kernels over the first `count` elements (count varies per launch)
__global__ void k_nr0(unsigned *x, int count, unsigned k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        x[i] = x[i] * 3u + k;
}
__global__ void k_nr1(unsigned *x, int count, unsigned k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        x[i] = (x[i] ^ k) * 5u + 1u;
}
__global__ void k_nr2(unsigned *x, int count, unsigned k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        x[i] = mix32(x[i] + k);
}
__global__ void k_nr3(unsigned *x, int count, unsigned k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        x[i] = (x[i] << 3 | x[i] >> 29) + k;
}

// Block reduction in a fixed order (deterministic): returns the block's sum in thread 0.
__device__ float block_sum(float v)
{
    __shared__ float sh[256];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    return sh[0];
}

// out[j] = in[j] * 3 + a sum over every word of the block's dynamic shared memory (words
// of it), which is filled from in: a launch with less shared memory computes otherwise.
__global__ void k_smem(const unsigned *in, unsigned *out, int n, unsigned words, unsigned salt)
{
    extern __shared__ unsigned sm[];
    int base = blockIdx.x * blockDim.x, j = base + threadIdx.x;
    unsigned acc = 0;
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x)
        sm[i] = in[(base + (int)i) % n] * 2654435761u + salt + i;
    __syncthreads();
    for (unsigned i = 0; i < words; i++)
        acc += sm[(words - 1 - i + threadIdx.x) % words] ^ (i * 7u);
    if (j < n)
        out[j] = in[j] * 3u + acc;
}

// jacobi: relaxed 5-point stencil on a W x H grid, boundary copied; each block adds
// its sum of |out - in| to partial[block] (which the memset zeroed).
__global__ void k_stencil(const float *in, float *out, float *partial, const float *omega,
                          int w, int h)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float d = 0.0f;
    if (i < w * h) {
        int x = i % w, y = i / w;
        float v = in[i];
        if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
            float avg = 0.25f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
            float nv = v + omega[0] * (avg - v);
            d = fabsf(nv - v);
            v = nv;
        }
        out[i] = v;
    }
    float s = block_sum(d);
    if (threadIdx.x == 0)
        partial[blockIdx.x] += s;
}

// one block: res[0] = sum of partial[0..n), in a fixed order
__global__ void k_reduce(const float *partial, int n, float *res)
{
    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        v += partial[i];
    float s = block_sum(v);
    if (threadIdx.x == 0)
        res[0] = s;
}

// rare: a small "network" of L layers
__global__ void k_input(float *act0, int n, const unsigned *step)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        act0[i] = ag_fill_value(i, 0x1234u + step[0]);
}

__global__ void k_forward(const float *a, const float *w, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i] * w[i] + 0.5f * a[(i + 1) % n];
        b[i] = v / (1.0f + fabsf(v));
    }
}

// one block: loss = mean of squares; then advances the step counter
__global__ void k_loss(const float *a, int n, float *loss, unsigned *step)
{
    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        v += a[i] * a[i];
    float s = block_sum(v);
    if (threadIdx.x == 0) {
        loss[0] = s / (float)n;
        step[0] += 1u;
    }
}

__global__ void k_backward(const float *a, const float *b, float *g, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        g[i] += a[i] * b[i] * (1.0f - fabsf(b[i]));
}

__global__ void k_update(float *w, const float *g, int n, float lr)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        w[i] -= lr * g[i];
}

// --- host helpers ----------------------------------------------------------------------

// --- modes -----------------------------------------------------------------------------

static int mode_tiny(int nk, int iters)
{
    const int t = 128;
    cudaStream_t s = new_stream();
    unsigned *x = dev_u(t, 1u, s);
    CK(cudaStreamSynchronize(s));
    for (int it = 0; it < iters; it++) {
        for (int j = 0; j < nk; j++)
            KL(k_tiny<<<1, t, 0, s>>>(x, (unsigned)j));
        CK(cudaStreamSynchronize(s));
    }
    print_dev("x", x, t * sizeof *x);
    CK(cudaFree(x));
    CK(cudaStreamDestroy(s));
    return 0;
}

static int mode_jacobi(int iters)
{
    const int w = 512, h = 512, n = w * h, bs = 256, nb = (n + bs - 1) / bs;
    cudaStream_t s = new_stream();
    float *a = dev_f(n, 7u, s), *b, *partial, *res, *omega;
    CK(cudaMalloc(&b, n * sizeof *b));
    CK(cudaMemcpyAsync(b, a, n * sizeof *b, cudaMemcpyDeviceToDevice, s));
    CK(cudaMalloc(&partial, nb * sizeof *partial));
    CK(cudaMalloc(&res, sizeof *res));
    CK(cudaMalloc(&omega, sizeof *omega));
    float *h_res, *h_omega, *h_row;  // pinned
    CK(cudaMallocHost(&h_res, sizeof *h_res));
    CK(cudaMallocHost(&h_omega, sizeof *h_omega));
    CK(cudaMallocHost(&h_row, w * sizeof *h_row));
    CK(cudaStreamSynchronize(s));

    float *in = a, *out = b;
    float resid = 1.0f;
    uint64_t hres = FNV_INIT, hrow = FNV_INIT;
    for (int it = 0; it < iters; it++) {
        // the host derives this iteration's factor from the residual it read last time
        h_omega[0] = 0.8f + 0.15f * (resid / (1.0f + resid));
        CK(cudaMemcpyAsync(omega, h_omega, sizeof *omega, cudaMemcpyHostToDevice, s));
        CK(cudaMemsetAsync(partial, 0, nb * sizeof *partial, s));
        KL(k_stencil<<<nb, bs, 0, s>>>(in, out, partial, omega, w, h));
        KL(k_reduce<<<1, 256, 0, s>>>(partial, nb, res));
        CK(cudaMemcpyAsync(h_res, res, sizeof *res, cudaMemcpyDeviceToHost, s));
        CK(cudaMemcpyAsync(h_row, out + (h / 2) * w, w * sizeof *h_row,
                           cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        resid = h_res[0];
        hres = fnv1a(&resid, sizeof resid, hres);
        hrow = fnv1a(h_row, w * sizeof *h_row, hrow);
        float *t = in;
        in = out;
        out = t;
    }
    print_dev("a", a, n * sizeof *a);
    print_dev("b", b, n * sizeof *b);
    print_hash("host_residuals", (size_t)iters * sizeof resid, hres);
    print_hash("host_rows", (size_t)iters * w * sizeof *h_row, hrow);
    CK(cudaFreeHost(h_res));
    CK(cudaFreeHost(h_omega));
    CK(cudaFreeHost(h_row));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(partial));
    CK(cudaFree(res));
    CK(cudaFree(omega));
    CK(cudaStreamDestroy(s));
    return 0;
}

static int mode_scalar(int iters)
{
    const int n = 1 << 16, bs = 256, g = n / bs;
    cudaStream_t s = new_stream();
    unsigned *x = dev_u(n, 3u, s), *y = dev_u(n, 4u, s);
    float *f = dev_f(n, 5u, s);
    CK(cudaStreamSynchronize(s));
    for (int it = 0; it < iters; it++) {
        KL(k_affine<<<g, bs, 0, s>>>(x, n, 3u, (unsigned)it * 17u + 1u));  // changes
        KL(k_heavy<<<g, bs, 0, s>>>(y, x, n, 5u, 4));
        KL(k_fscale<<<g, bs, 0, s>>>(f, n, 1.0f + 0.001f * (float)it));    // changes
        KL(k_fold<<<g, bs, 0, s>>>(x, y, f, n));
        KL(k_affine<<<g, bs, 0, s>>>(y, n, 5u, 7u));
        CK(cudaStreamSynchronize(s));
    }
    print_dev("x", x, n * sizeof *x);
    print_dev("y", y, n * sizeof *y);
    print_dev("f", f, n * sizeof *f);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(f));
    CK(cudaStreamDestroy(s));
    return 0;
}

// The fork and join of forkjoin, churn and eventmid: k_heavy on s0, fork recorded there,
// s1 and s2 wait for it, k_heavy twice on s1 and once on s2, j1 and j2 recorded on them,
// s0 waits for both.
static void fork_and_join(cudaStream_t s0, cudaStream_t s1, cudaStream_t s2,
                          cudaEvent_t fork, cudaEvent_t j1, cudaEvent_t j2, unsigned *a,
                          unsigned *b, unsigned *c, int n)
{
    const int bs = 256, g = n / bs;
    KL(k_heavy<<<g, bs, 0, s0>>>(a, a, n, 11u, 32));
    CK(cudaEventRecord(fork, s0));
    CK(cudaStreamWaitEvent(s1, fork, 0));
    CK(cudaStreamWaitEvent(s2, fork, 0));
    KL(k_heavy<<<g, bs, 0, s1>>>(b, a, n, 22u, 64));
    KL(k_heavy<<<g, bs, 0, s2>>>(c, a, n, 33u, 64));
    KL(k_heavy<<<g, bs, 0, s1>>>(b, b, n, 23u, 16));
    CK(cudaEventRecord(j1, s1));
    CK(cudaEventRecord(j2, s2));
    CK(cudaStreamWaitEvent(s0, j1, 0));
    CK(cudaStreamWaitEvent(s0, j2, 0));
}

// eventmid: fork, j1 and j2 made anew every iteration and destroyed inside the window,
// as cuDNN does (the shim holds a destroy while a held op still names its event).
static void eventmid_iteration(int it, int every, cudaStream_t s0, cudaStream_t s1,
                               cudaStream_t s2, unsigned *a, unsigned *b, unsigned *c,
                               int n)
{
    const int bs = 256, g = n / bs;
    int swap = every > 0 && it % every == every - 1;
    cudaEvent_t fork, j1, j2;
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&j1, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&j2, cudaEventDisableTiming));
    fork_and_join(s0, s1, s2, fork, j1, j2, a, b, c, n);
    CK(cudaEventDestroy(fork));
    if (swap)
        KL(k_affine<<<g, bs, 0, s0>>>(a, n, 5u, 3u));
    KL(k_combine<<<g, bs, 0, s0>>>(a, b, c, n));
    CK(cudaEventDestroy(j1));
    CK(cudaEventDestroy(j2));
    KL(k_affine<<<g, bs, 0, s0>>>(a, n, 3u, 1u));
    CK(cudaStreamSynchronize(s0));
}

// forkjoin, churn and eventmid (mid_every >= 0: eventmid_iteration).  churn makes the
// fork event anew every iteration and destroys it after the sync (as cuDNN and PyTorch
// do), with timing on: after each sync the time from `start` (recorded first) to `fork`
// is asked for, which fails unless both were really recorded.  The count of iterations
// where it did not fail goes to stderr.
static int mode_forkjoin(int iters, int churn, int mid_every)
{
    const int n = 1 << 16, bs = 256, g = n / bs;
    cudaStream_t s0 = new_stream(), s1 = new_stream(), s2 = new_stream();
    cudaEvent_t start, fork, j1, j2;
    int timed = 0;
    CK(cudaEventCreate(&start));
    if (!churn)
        CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&j1, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&j2, cudaEventDisableTiming));
    unsigned *a = dev_u(n, 11u, s0), *b = dev_u(n, 12u, s0), *c = dev_u(n, 13u, s0);
    CK(cudaStreamSynchronize(s0));
    for (int it = 0; it < iters; it++) {
        float ms;
        if (mid_every >= 0) {
            eventmid_iteration(it, mid_every, s0, s1, s2, a, b, c, n);
            continue;
        }
        if (churn) {
            CK(cudaEventCreate(&fork));
            CK(cudaEventRecord(start, s0));
        }
        fork_and_join(s0, s1, s2, fork, j1, j2, a, b, c, n);
        KL(k_combine<<<g, bs, 0, s0>>>(a, b, c, n));
        CK(cudaStreamSynchronize(s0));
        if (churn) {
            timed += cudaEventElapsedTime(&ms, start, fork) == cudaSuccess;
            CK(cudaEventDestroy(fork));
        }
    }
    CK(cudaDeviceSynchronize());
    if (churn)
        fprintf(stderr, "%s timed %d of %d\n", g_mode, timed, iters);
    print_dev("a", a, n * sizeof *a);
    print_dev("b", b, n * sizeof *b);
    print_dev("c", c, n * sizeof *c);
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
    if (!churn)
        CK(cudaEventDestroy(fork));
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(j1));
    CK(cudaEventDestroy(j2));
    CK(cudaStreamDestroy(s0));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    return 0;
}

// Prints each of three result buffers of n words ("<mode> <name> bytes ... fnv1a64 ...")
// and frees it.
static void print_free3(const char *names, unsigned *a, void *b, void *c, int n)
{
    void *bufs[3] = { a, b, c };
    for (int i = 0; i < 3; i++) {
        char name[2] = { names[i], 0 };
        print_dev(name, bufs[i], (size_t)n * 4);
        CK(cudaFree(bufs[i]));
    }
}

static int mode_legacy(int iters)
{
    const int n = 1 << 16, bs = 256, g = n / bs;
    unsigned *x = dev_u(n, 21u, 0), *y = dev_u(n, 22u, 0), *z = dev_u(n, 23u, 0);
    CK(cudaDeviceSynchronize());
    for (int it = 0; it < iters; it++) {
        KL(k_heavy<<<g, bs>>>(x, x, n, 1u, 4));
        KL(k_heavy<<<g, bs>>>(y, x, n, 2u, 4));
        KL(k_combine<<<g, bs>>>(x, y, z, n));
        KL(k_affine<<<g, bs>>>(z, n, 3u, 9u));
        KL(k_heavy<<<g / 2, bs>>>(z, y, n / 2, 4u, 2));
        CK(cudaDeviceSynchronize());
    }
    print_free3("xyz", x, y, z, n);
    return 0;
}

static int mode_legacymix(int iters)
{
    const int n = 1 << 16, bs = 256, g = n / bs;
    unsigned *x = dev_u(n, 41u, 0), *y = dev_u(n, 42u, 0), *z = dev_u(n, 43u, 0);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));            // blocking: implicitly ordered with stream 0
    CK(cudaDeviceSynchronize());
    for (int it = 0; it < iters; it++) {
        KL(k_heavy<<<g, bs, 0, s>>>(x, z, n, 1u + (unsigned)it, 2000));
        KL(k_heavy<<<g, bs>>>(y, x, n, 2u, 1));
        KL(k_combine<<<g, bs, 0, s>>>(z, y, x, n));
        KL(k_affine<<<g, bs>>>(z, n, 3u, 9u));
        KL(k_heavy<<<g / 2, bs, 0, s>>>(x, z, n / 2, 4u, 2));
        CK(cudaStreamSynchronize(s));
    }
    CK(cudaDeviceSynchronize());
    print_free3("xyz", x, y, z, n);
    CK(cudaStreamDestroy(s));
    return 0;
}

static int mode_norepeat(int iters)
{
    const int n = 8192, bs = 64;
    cudaStream_t s = new_stream();
    unsigned *x = dev_u(n, 31u, s);
    CK(cudaStreamSynchronize(s));
    long counter = 0;
    for (int w = 0; w < iters; w++) {
        // kernel sequence: the base-4 digits of w+1, most significant first (no two
        // windows alike); grid size from a counter that changes every launch
        int digits[32], nd = 0;
        for (unsigned v = (unsigned)w + 1u; v; v /= 4u)
            digits[nd++] = (int)(v % 4u);
        for (int d = nd - 1; d >= 0; d--, counter++) {
            int grid = 1 + (int)((counter * 37 + w) % 97);
            int count = grid * bs - (int)(counter % 17);
            unsigned k = (unsigned)counter * 2654435761u;
            switch (digits[d]) {
            case 0: KL(k_nr0<<<grid, bs, 0, s>>>(x, count, k)); break;
            case 1: KL(k_nr1<<<grid, bs, 0, s>>>(x, count, k)); break;
            case 2: KL(k_nr2<<<grid, bs, 0, s>>>(x, count, k)); break;
            default: KL(k_nr3<<<grid, bs, 0, s>>>(x, count, k)); break;
            }
        }
        CK(cudaStreamSynchronize(s));
    }
    print_dev("x", x, n * sizeof *x);
    CK(cudaFree(x));
    CK(cudaStreamDestroy(s));
    return 0;
}

// A few microseconds of host work: the argument of the next launch, computed on the
// host (deterministic), then spinning until at least `us` microseconds have passed.
static unsigned host_arg(long index, double us)
{
    double t0 = now_us();
    unsigned v = (unsigned)index;
    for (int r = 0; r < 500; r++)
        v = mix32(v + (unsigned)r);
    while (now_us() - t0 < us) {
    }
    return v;
}

static int mode_hostwork(int iters)
{
    const int n = 1 << 14, bs = 256, g = n / bs, per = 6;
    cudaStream_t s = new_stream();
    unsigned *x = dev_u(n, 41u, s), *y = dev_u(n, 42u, s);
    CK(cudaStreamSynchronize(s));
    for (int it = 0; it < iters; it++) {
        for (int j = 0; j < per; j++) {
            unsigned v = host_arg((long)it * per + j, 5.0);
            if (j % 2)
                KL(k_affine<<<g, bs, 0, s>>>(x, n, 3u, v));
            else
                KL(k_heavy<<<g, bs, 0, s>>>(y, x, n, v, 2));
        }
        CK(cudaStreamSynchronize(s));
    }
    print_dev("x", x, n * sizeof *x);
    print_dev("y", y, n * sizeof *y);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaStreamDestroy(s));
    return 0;
}

static int mode_rare(int steps, int every)
{
    enum { L = 6 };
    const int n = 4096, bs = 256, g = n / bs;
    cudaStream_t s = new_stream();
    float *w[L], *act[L + 1], *grad, *loss;
    unsigned *step;
    for (int l = 0; l < L; l++)
        w[l] = dev_f(n, 100u + (unsigned)l, s);
    for (int l = 0; l <= L; l++)
        CK(cudaMalloc(&act[l], n * sizeof(float)));
    CK(cudaMalloc(&grad, (size_t)L * n * sizeof(float)));
    CK(cudaMalloc(&loss, sizeof(float)));
    CK(cudaMalloc(&step, sizeof(unsigned)));
    CK(cudaMemsetAsync(step, 0, sizeof(unsigned), s));
    float *h_loss;  // pinned
    CK(cudaMallocHost(&h_loss, sizeof *h_loss));
    CK(cudaStreamSynchronize(s));

    uint64_t hl = FNV_INIT;
    int reads = 0;
    for (int st = 0; st < steps; st++) {
        // 20 kernels and a memset per step, identical every step
        CK(cudaMemsetAsync(grad, 0, (size_t)L * n * sizeof(float), s));
        KL(k_input<<<g, bs, 0, s>>>(act[0], n, step));
        for (int l = 0; l < L; l++)
            KL(k_forward<<<g, bs, 0, s>>>(act[l], w[l], act[l + 1], n));
        KL(k_loss<<<1, 256, 0, s>>>(act[L], n, loss, step));
        for (int l = L - 1; l >= 0; l--)
            KL(k_backward<<<g, bs, 0, s>>>(act[l], act[l + 1], grad + (size_t)l * n, n));
        for (int l = 0; l < L; l++)
            KL(k_update<<<g, bs, 0, s>>>(w[l], grad + (size_t)l * n, n, 0.01f));
        if ((st + 1) % every == 0 || st + 1 == steps) {
            CK(cudaMemcpyAsync(h_loss, loss, sizeof *h_loss, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            hl = fnv1a(h_loss, sizeof *h_loss, hl);
            reads++;
        }
    }
    char name[32];
    for (int l = 0; l < L; l++) {
        snprintf(name, sizeof name, "w%d", l);
        print_dev(name, w[l], n * sizeof(float));
    }
    print_dev("act_out", act[L], n * sizeof(float));
    print_dev("step", step, sizeof(unsigned));
    print_hash("host_losses", (size_t)reads * sizeof(float), hl);
    for (int l = 0; l < L; l++)
        CK(cudaFree(w[l]));
    for (int l = 0; l <= L; l++)
        CK(cudaFree(act[l]));
    CK(cudaFree(grad));
    CK(cudaFree(loss));
    CK(cudaFree(step));
    CK(cudaFreeHost(h_loss));
    CK(cudaStreamDestroy(s));
    return 0;
}

static int mode_phases(int iters)
{
    int rc = mode_norepeat(iters);
    if (rc == 0)
        rc = mode_tiny(20, iters);
    if (rc == 0)
        rc = mode_rare(iters, iters);
    return rc;
}

static void smem_limit(int bytes)
{
    CK(cudaFuncSetAttribute(k_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

static int mode_smemtoggle(int iters, int every)
{
    const int n = 1 << 14, bs = 256, g = n / bs, hi = 32 << 10, lo = 8 << 10;
    cudaStream_t s = new_stream();
    unsigned *buf[3] = { dev_u(n, 3u, s), dev_u(n, 4u, s), dev_u(n, 5u, s) };
    unsigned *y = dev_u(n, 6u, s);
    CK(cudaStreamSynchronize(s));
    for (int it = 0; it < iters; it++) {
        smem_limit(hi);
        KL(k_smem<<<g, bs, hi, s>>>(buf[it % 3], y, n, hi / 4, 1u));
        KL(k_affine<<<g, bs, 0, s>>>(y, n, 3u, 1u));
        smem_limit(lo);
        if (every > 0 && it % every == every - 1)
            KL(k_affine<<<g, bs, 0, s>>>(buf[(it + 1) % 3], n, 5u, 2u));
        else
            KL(k_smem<<<g, bs, lo, s>>>(y, buf[(it + 1) % 3], n, lo / 4, 2u));
        KL(k_affine<<<g, bs, 0, s>>>(buf[0], n, 5u, 7u));
        CK(cudaStreamSynchronize(s));
    }
    print_dev("a", buf[0], n * sizeof(unsigned));
    print_dev("b", buf[1], n * sizeof(unsigned));
    print_dev("c", buf[2], n * sizeof(unsigned));
    print_dev("y", y, n * sizeof *y);
    for (int b = 0; b < 3; b++)
        CK(cudaFree(buf[b]));
    CK(cudaFree(y));
    CK(cudaStreamDestroy(s));
    return 0;
}

static void affine_with_priority(cudaStream_t s, unsigned *x, int n, unsigned mul,
                                 unsigned add, int priority)
{
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = {};
    memset(&attr, 0, sizeof attr);
    attr.id = cudaLaunchAttributePriority;
    attr.val.priority = priority;
    cfg.gridDim = dim3((unsigned)(n / 256));
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    KL(CK(cudaLaunchKernelEx(&cfg, k_affine, x, n, mul, add)));
}

static int mode_exattrs(int iters, int every)
{
    const int n = 1 << 14;
    int least = 0, greatest = 0;
    cudaStream_t s = new_stream();
    unsigned *buf[3] = { dev_u(n, 3u, s), dev_u(n, 4u, s), dev_u(n, 5u, s) };
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CK(cudaStreamSynchronize(s));
    for (int it = 0; it < iters; it++) {
        int odd = every > 0 && it % every == every - 1;
        for (int k = 0; k < 6; k++)
            affine_with_priority(s, buf[k % 3], n, 3u + 2u * (unsigned)k, (unsigned)k + 1u,
                                 k == 3 && odd ? greatest : least);
        CK(cudaStreamSynchronize(s));
    }
    print_dev("a", buf[0], n * sizeof(unsigned));
    print_dev("b", buf[1], n * sizeof(unsigned));
    print_dev("c", buf[2], n * sizeof(unsigned));
    for (int b = 0; b < 3; b++)
        CK(cudaFree(buf[b]));
    CK(cudaStreamDestroy(s));
    return 0;
}

// out = in * mul + add, after the kernel before it in the stream has written `in` (its
// programmatic completion); lets the next kernel start once its own writes are done.
__global__ void k_pdl(const unsigned *in, unsigned *out, int n, unsigned mul, unsigned add)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
    if (i < n)
        out[i] = in[i] * mul + add;
#if __CUDA_ARCH__ >= 900
    __syncthreads();
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

static void launch_pdl(cudaStream_t s, const unsigned *in, unsigned *out, int n,
                       unsigned mul, unsigned add)
{
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = {};
    memset(&attr, 0, sizeof attr);
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = dim3((unsigned)(n / 256));
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    KL(CK(cudaLaunchKernelEx(&cfg, k_pdl, in, out, n, mul, add)));
}

static int mode_pdl(int iters)
{
    const int n = 1 << 16;
    cudaStream_t s = new_stream();
    unsigned *buf[2] = { dev_u(n, 6u, s), dev_u(n, 7u, s) };
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 8; k++)
            launch_pdl(s, buf[k % 2], buf[(k + 1) % 2], n, 5u + 2u * (unsigned)k,
                       (unsigned)(it + k));
        CK(cudaStreamSynchronize(s));
    }
    print_dev("x", buf[0], n * sizeof(unsigned));
    print_dev("y", buf[1], n * sizeof(unsigned));
    for (int b = 0; b < 2; b++)
        CK(cudaFree(buf[b]));
    CK(cudaStreamDestroy(s));
    return 0;
}

// --- main ------------------------------------------------------------------------------

static int usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s tiny N ITERS | jacobi ITERS | scalar ITERS | forkjoin ITERS |\n"
            "       churn ITERS | eventmid ITERS [MISMATCH_EVERY] |\n"
            "       legacy ITERS | legacymix ITERS | norepeat ITERS | hostwork ITERS | rare ITERS [SYNC_EVERY] |\n"
            "       phases ITERS | smemtoggle ITERS [MISMATCH_EVERY] |\n"
            "       exattrs ITERS [MISMATCH_EVERY] | pdl ITERS\n",
            argv0);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage(argv[0]);
    g_mode = argv[1];
    int a = 0, b = 0, rc;
    if (!posint(argv[2], &a) || (argc > 3 && !posint(argv[3], &b)) || argc > 4)
        return usage(argv[0]);
    if (!strcmp(g_mode, "tiny")) {
        if (argc != 4)
            return usage(argv[0]);
        rc = mode_tiny(a, b);
    } else if (!strcmp(g_mode, "rare")) {
        rc = mode_rare(a, argc > 3 ? b : 50);
    } else if (!strcmp(g_mode, "smemtoggle")) {
        rc = mode_smemtoggle(a, argc > 3 ? b : 0);
    } else if (!strcmp(g_mode, "exattrs")) {
        rc = mode_exattrs(a, argc > 3 ? b : 0);
    } else if (!strcmp(g_mode, "eventmid")) {
        rc = mode_forkjoin(a, 0, argc > 3 ? b : 0);
    } else if (argc != 3) {
        return usage(argv[0]);
    } else if (!strcmp(g_mode, "pdl")) {
        rc = mode_pdl(a);
    } else if (!strcmp(g_mode, "jacobi")) {
        rc = mode_jacobi(a);
    } else if (!strcmp(g_mode, "scalar")) {
        rc = mode_scalar(a);
    } else if (!strcmp(g_mode, "forkjoin")) {
        rc = mode_forkjoin(a, 0, -1);
    } else if (!strcmp(g_mode, "churn")) {
        rc = mode_forkjoin(a, 1, -1);
    } else if (!strcmp(g_mode, "legacy")) {
        rc = mode_legacy(a);
    } else if (!strcmp(g_mode, "legacymix")) {
        rc = mode_legacymix(a);
    } else if (!strcmp(g_mode, "norepeat")) {
        rc = mode_norepeat(a);
    } else if (!strcmp(g_mode, "hostwork")) {
        rc = mode_hostwork(a);
    } else if (!strcmp(g_mode, "phases")) {
        rc = mode_phases(a);
    } else {
        return usage(argv[0]);
    }
    return finish(rc);
}
