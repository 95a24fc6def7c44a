// samples_prog.cu -- loops written the way the NVIDIA CUDA samples and ordinary user code
// write them (realistic.bats, make bench-loose): Thrust algorithms, __constant__ updates,
// pitched 2D images, event timing, simpleStreams, event polling, host callbacks, cuRAND.
//
// usage: samples_prog --mode MODE [--iters I] [--time] [--warmup W]
//   thrust    thrust::transform (y = a*x + f(y), unsigned) over two device_vectors of 300000
//             elements, then thrust::reduce of y to a host scalar (Thrust: cudaMalloc of its
//             temporary, its kernels, a synchronous copy of the sum back, cudaFree; and a
//             stream sync after the transform); the host folds the sum and derives the next
//             iteration's coefficient a from it.  Legacy stream.  Default 10000 iterations.
//   symbol    cudaMemcpyToSymbol of 8 __constant__ coefficients from a stack array (derived
//             from the last read back), 5 kernels on the legacy stream that read them (the
//             last one atomically adds into a __device__ total), a synchronous cudaMemcpy of
//             64 block sums back into a stack array; at the end cudaMemcpyFromSymbol of the
//             total.  Default 20000 iterations.
//   pitch2d   an image filter: a 500 x 400 8-bit image in cudaMallocPitch memory; the host
//             redraws a moving band of its pageable image, cudaMemcpy2D uploads it, box blur,
//             Sobel magnitude and threshold kernels (integer), cudaMemcpy2D of the result back
//             into a pageable image.  Default 4000 iterations.
//   timing    cudaEventRecord(start), 6 kernels, cudaEventRecord(stop), cudaEventSynchronize,
//             cudaEventElapsedTime (checked: finite and >= 0; not hashed), then a synchronous
//             cudaMemcpy of the block sums.  Legacy stream.  Default 20000 iterations.
//   streams   simpleStreams: pinned buffers (cudaMallocHost), 4 created streams, each an
//             async upload of its chunk, a kernel, an async download; cudaDeviceSynchronize;
//             the host derives the next input from the output.  Default 8000 iterations.
//   query     asyncAPI: an async upload from pinned memory, 4 kernels, an async download to
//             pinned memory and an event record on the legacy stream, then
//             while (cudaEventQuery(ev) == cudaErrorNotReady) spins++; then cudaStreamQuery(0)
//             (must be cudaSuccess).  Default 20000 iterations.
//   hostfunc  on a created stream: a kernel, a kernel that stamps a word of mapped pinned
//             memory, a cudaLaunchHostFunc callback that records the stamp it saw and writes a
//             word that the next kernel reads, block sums, an async copy of them to pinned
//             memory, a second callback that records the iteration it saw and the copied sum;
//             cudaStreamSynchronize.  Default 2000 iterations.
//   curand    cuRAND's host API (Philox4_32_10, fixed seed, curandSetStream on a created
//             stream): curandGenerate of 2^20 uint32 per iteration, a memset, a 256-bin
//             histogram, an accumulate and a block-sum kernel, cudaMemcpyAsync of the
//             histogram and sums to pinned memory, cudaStreamSynchronize.  Default 20000
//             iterations.
//   --iters I     iterations (default: per mode, above: a second or two of loop)
//   --time        per-iteration host time over the iterations after W warm-up ones (default
//                 100): "per_iter_us p50 <x> p90 <y>" (at least W+200 iterations then run)
//
// stdout: "iterations <n>", "result <16 hex>": FNV-1a over everything the host read back,
// every iteration (large read backs: over 64-bit words, see fold_words), and the final
// device state; with --time also the timing line.  All arithmetic is integer (sums in
// 64 bits, or atomics of integers): bit-identical run to run.  Every CUDA (and cuRAND, and
// Thrust) call is checked: an error prints a message and exits 2.  stderr: per mode, values
// that must not be hashed (event times, spins of the query loop).
#include <cuda_runtime.h>
#include <curand.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <exception>
#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>

#include "prog_common.cuh"   // KL, k_seed_u, k_affine, dev_u
#include "mode_loop.cuh"     // tick, fold, fold_words, fold_dev, xmalloc, mode_main

#define CR(x)                                                                          \
    do {                                                                               \
        curandStatus_t r_ = (x);                                                       \
        if (r_ != CURAND_STATUS_SUCCESS) {                                             \
            fprintf(stderr, "%s:%d: %s: curand status %d\n", __FILE__, __LINE__, #x,   \
                    (int)r_);                                                          \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

#define TB 256         // threads per block of the 1D kernels
#define NB 64          // blocks of k_blocksum: the block sums read back
#define NVEC (1 << 18) // elements of the vectors of symbol, timing and hostfunc

// --- kernels shared by the modes ----------------------------------------------------------

// out[i] = `rounds` rounds of mix32 over in[i] + salt (out may be in)
__global__ void k_rounds(unsigned *out, const unsigned *in, int n, unsigned salt, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = in[i];
        for (int r = 0; r < rounds; r++)
            v = mix32(v + salt + (unsigned)r);
        out[i] = v;
    }
}

// out[i] = in[i] ^ (in[(i*stride + off) % n] >> 3): reads other blocks' elements (out != in)
__global__ void k_gather(unsigned *out, const unsigned *in, int n, unsigned stride,
                         unsigned off)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned j = (unsigned)(((unsigned long long)i * stride + off) % (unsigned)n);
        out[i] = in[i] ^ (in[j] >> 3);
    }
}

// out[b] for the NB blocks: the sum of x[i] * (i | 1) over the block's grid-stride elements,
// in 64-bit integers with a fixed tree (blockDim.x == TB): exact, deterministic
__global__ void k_blocksum(unsigned long long *out, const unsigned *x, int n)
{
    __shared__ unsigned long long part[TB];
    unsigned long long s = 0;
    for (int i = blockIdx.x * TB + threadIdx.x; i < n; i += gridDim.x * TB)
        s += (unsigned long long)x[i] * (unsigned)(i | 1);
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = TB / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = part[0];
}

// --- thrust ---------------------------------------------------------------------------------

struct saxpy_u {
    unsigned a;
    __host__ __device__ unsigned operator()(unsigned x, unsigned y) const
    {
        return a * x + (y ^ (y >> 13));
    }
};

static void thrust_loop(void)
{
    const int n = 300000;
    thrust::device_vector<unsigned> x(n), y(n);
    thrust::sequence(x.begin(), x.end(), 1u, 7u);
    thrust::fill(y.begin(), y.end(), 0x9e3779b9u);
    unsigned a = 3;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        thrust::transform(x.begin(), x.end(), y.begin(), y.begin(), saxpy_u{a});
        unsigned long long sum = thrust::reduce(y.begin(), y.end(), 0ull);
        fold(&sum, sizeof sum);
        a = (unsigned)(sum >> 7) * 2u + 1u; // the host uses the scalar: the next coefficient
        tick(it, t0);
    }
    thrust::host_vector<unsigned> hy = y;
    fold_words(hy.data(), (size_t)n * sizeof(unsigned));
}

static void run_thrust(void)
{
    try {
        thrust_loop();
    } catch (const std::exception &e) {
        fprintf(stderr, "thrust: %s\n", e.what());
        exit(2);
    }
    CK(cudaGetLastError());
}

// --- symbol ---------------------------------------------------------------------------------

__constant__ unsigned c_coef[8];
__device__ unsigned long long g_total;

__global__ void k_sym_affine(unsigned *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * c_coef[0] + c_coef[1];
}

__global__ void k_sym_gather(unsigned *out, const unsigned *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned j = (unsigned)(((unsigned long long)i * c_coef[2] + c_coef[3]) % (unsigned)n);
        out[i] = in[i] ^ (in[j] >> (c_coef[4] & 15u));
    }
}

__global__ void k_sym_rounds(unsigned *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = x[i];
        for (unsigned r = 0; r <= (c_coef[5] & 3u); r++)
            v = mix32(v + c_coef[6]);
        x[i] = v;
    }
}

// g_total += the block sums ^ c_coef[7] (one block of NB threads; integer atomics: exact)
__global__ void k_sym_total(const unsigned long long *part)
{
    atomicAdd(&g_total, part[threadIdx.x] ^ c_coef[7]);
}

static void run_symbol(void)
{
    const int n = NVEC, gb = (n + TB - 1) / TB;
    unsigned *a = dev_u(n, 11, 0), *b = dev_u(n, 12, 0);
    unsigned long long *d_part, zero = 0, part[NB], total;
    CK(cudaMalloc(&d_part, sizeof part));
    CK(cudaMemcpyToSymbol(g_total, &zero, sizeof zero));
    unsigned prev = 0;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        unsigned coef[8]; // on the stack: pageable
        for (int k = 0; k < 8; k++)
            coef[k] = mix32(prev ^ (unsigned)(it * 8 + k));
        coef[0] |= 1u;
        CK(cudaMemcpyToSymbol(c_coef, coef, sizeof coef));
        KL(k_sym_affine<<<gb, TB>>>(a, n));
        KL(k_sym_gather<<<gb, TB>>>(b, a, n));
        KL(k_sym_rounds<<<gb, TB>>>(b, n));
        KL(k_blocksum<<<NB, TB>>>(d_part, b, n));
        KL(k_sym_total<<<1, NB>>>(d_part));
        CK(cudaMemcpy(part, d_part, sizeof part, cudaMemcpyDeviceToHost));
        fold(part, sizeof part);
        prev = (unsigned)(part[it % NB] >> 5);
        unsigned *t = a;
        a = b;
        b = t;
        tick(it, t0);
    }
    CK(cudaMemcpyFromSymbol(&total, g_total, sizeof total));
    fold(&total, sizeof total);
    fold_dev(a, (size_t)n * sizeof(unsigned));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(d_part));
}

// --- pitch2d --------------------------------------------------------------------------------

#define IMG_W 500 // not a multiple of the pitch's alignment
#define IMG_H 400

// pixel (x, y) of a pitched 8-bit image, the coordinates clamped to the image
__device__ inline int px(const unsigned char *p, size_t pitch, int x, int y)
{
    x = min(max(x, 0), IMG_W - 1);
    y = min(max(y, 0), IMG_H - 1);
    return p[(size_t)y * pitch + x];
}

__global__ void k_box3(unsigned char *dst, size_t dp, const unsigned char *src, size_t sp)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= IMG_W || y >= IMG_H)
        return;
    int s = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            s += px(src, sp, x + dx, y + dy);
    dst[(size_t)y * dp + x] = (unsigned char)(s / 9);
}

// |gx| + |gy| of the Sobel operator, saturated to 255
__global__ void k_sobel(unsigned char *dst, size_t dp, const unsigned char *src, size_t sp)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= IMG_W || y >= IMG_H)
        return;
    int v[3][3]; // v[row][column] around (x, y)
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            v[dy + 1][dx + 1] = px(src, sp, x + dx, y + dy);
    int gx = v[0][2] + 2 * v[1][2] + v[2][2] - v[0][0] - 2 * v[1][0] - v[2][0];
    int gy = v[2][0] + 2 * v[2][1] + v[2][2] - v[0][0] - 2 * v[0][1] - v[0][2];
    dst[(size_t)y * dp + x] = (unsigned char)min(abs(gx) + abs(gy), 255);
}

// edges above t white, the rest the source at half brightness
__global__ void k_thresh(unsigned char *dst, size_t dp, const unsigned char *edge, size_t ep,
                         const unsigned char *src, size_t sp, int t)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= IMG_W || y >= IMG_H)
        return;
    int e = edge[(size_t)y * ep + x];
    dst[(size_t)y * dp + x] = e > t ? 255 : (unsigned char)(src[(size_t)y * sp + x] >> 1);
}

// the host's change to its image: a band of 8 rows, moving down, drawn from it and fb
static void draw_band(unsigned char *img, int it, unsigned fb)
{
    int r0 = (it * 3) % (IMG_H - 8);
    for (int y = r0; y < r0 + 8; y++)
        for (int x = 0; x < IMG_W; x++)
            img[y * IMG_W + x] = (unsigned char)(x * 5 + y + it + fb);
}

static void run_pitch2d(void)
{
    unsigned char *img = (unsigned char *)xmalloc(IMG_W * IMG_H);
    unsigned char *res = (unsigned char *)xmalloc(IMG_W * IMG_H);
    for (int i = 0; i < IMG_W * IMG_H; i++)
        img[i] = (unsigned char)mix32((unsigned)i);
    unsigned char *d_src, *d_tmp, *d_edge, *d_out;
    size_t p_src, p_tmp, p_edge, p_out;
    CK(cudaMallocPitch((void **)&d_src, &p_src, IMG_W, IMG_H));
    CK(cudaMallocPitch((void **)&d_tmp, &p_tmp, IMG_W, IMG_H));
    CK(cudaMallocPitch((void **)&d_edge, &p_edge, IMG_W, IMG_H));
    CK(cudaMallocPitch((void **)&d_out, &p_out, IMG_W, IMG_H));
    dim3 tb(16, 16), gb((IMG_W + 15) / 16, (IMG_H + 15) / 16);
    unsigned fb = 0;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        draw_band(img, it, fb);
        CK(cudaMemcpy2D(d_src, p_src, img, IMG_W, IMG_W, IMG_H, cudaMemcpyHostToDevice));
        KL(k_box3<<<gb, tb>>>(d_tmp, p_tmp, d_src, p_src));
        KL(k_sobel<<<gb, tb>>>(d_edge, p_edge, d_tmp, p_tmp));
        KL(k_thresh<<<gb, tb>>>(d_out, p_out, d_edge, p_edge, d_src, p_src, 32 + it % 64));
        CK(cudaMemcpy2D(res, IMG_W, d_out, p_out, IMG_W, IMG_H, cudaMemcpyDeviceToHost));
        fold_words(res, IMG_W * IMG_H);
        fb = res[(size_t)it * 7919u % (IMG_W * IMG_H)];
        tick(it, t0);
    }
    fold_words(img, IMG_W * IMG_H);
    CK(cudaFree(d_src));
    CK(cudaFree(d_tmp));
    CK(cudaFree(d_edge));
    CK(cudaFree(d_out));
    free(img);
    free(res);
}

// --- timing ---------------------------------------------------------------------------------

static void run_timing(void)
{
    const int n = NVEC, gb = (n + TB - 1) / TB;
    unsigned *a = dev_u(n, 21, 0), *b = dev_u(n, 22, 0);
    unsigned long long *d_part, part[NB];
    CK(cudaMalloc(&d_part, sizeof part));
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    double total_ms = 0;
    unsigned salt = 1;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        CK(cudaEventRecord(start, 0));
        KL(k_affine<<<gb, TB>>>(a, n, 2654435761u, (unsigned)it));
        KL(k_rounds<<<gb, TB>>>(a, a, n, salt, 4));
        KL(k_gather<<<gb, TB>>>(b, a, n, 40503u, (unsigned)it * 977u));
        KL(k_affine<<<gb, TB>>>(b, n, 0x9e3779b1u, salt));
        KL(k_rounds<<<gb, TB>>>(b, b, n, (unsigned)it, 2));
        KL(k_blocksum<<<NB, TB>>>(d_part, b, n));
        CK(cudaEventRecord(stop, 0));
        CK(cudaEventSynchronize(stop));
        total_ms += elapsed_ms(start, stop, it); // not hashed: not deterministic
        CK(cudaMemcpy(part, d_part, sizeof part, cudaMemcpyDeviceToHost));
        fold(part, sizeof part);
        salt = (unsigned)part[it % NB] | 1u;
        unsigned *t = a;
        a = b;
        b = t;
        tick(it, t0);
    }
    fprintf(stderr, "event_ms_total %.3f\n", total_ms);
    fold_dev(a, (size_t)n * sizeof(unsigned));
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(d_part));
}

// --- streams --------------------------------------------------------------------------------

#define NSTREAMS 4
#define CHUNK 16384 // elements per stream

static void run_streams(void)
{
    const int n = NSTREAMS * CHUNK;
    const size_t cb = CHUNK * sizeof(unsigned);
    unsigned *h_in, *h_out, *d_in, *d_out;
    CK(cudaMallocHost(&h_in, n * sizeof(unsigned)));
    CK(cudaMallocHost(&h_out, n * sizeof(unsigned)));
    CK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CK(cudaMalloc(&d_out, n * sizeof(unsigned)));
    for (int i = 0; i < n; i++)
        h_in[i] = mix32((unsigned)i + 31u);
    cudaStream_t st[NSTREAMS];
    for (int k = 0; k < NSTREAMS; k++)
        CK(cudaStreamCreate(&st[k]));
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        for (int k = 0; k < NSTREAMS; k++) {
            int off = k * CHUNK;
            CK(cudaMemcpyAsync(d_in + off, h_in + off, cb, cudaMemcpyHostToDevice, st[k]));
            KL(k_rounds<<<CHUNK / TB, TB, 0, st[k]>>>(d_out + off, d_in + off, CHUNK,
                                                      (unsigned)(it * NSTREAMS + k), 16));
            CK(cudaMemcpyAsync(h_out + off, d_out + off, cb, cudaMemcpyDeviceToHost, st[k]));
        }
        CK(cudaDeviceSynchronize());
        fold_words(h_out, n * sizeof(unsigned));
        // the next input: the output shifted by one (across the chunks), salted
        for (int i = 0; i < n; i++)
            h_in[i] = h_out[(i + 1) % n] ^ (unsigned)it;
        tick(it, t0);
    }
    for (int k = 0; k < NSTREAMS; k++)
        CK(cudaStreamDestroy(st[k]));
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
}

// --- query ----------------------------------------------------------------------------------

static void run_query(void)
{
    const int n = 1 << 16, gb = (n + TB - 1) / TB;
    unsigned *h_a, *d_a, *d_b;
    unsigned long long *h_part, *d_part;
    CK(cudaMallocHost(&h_a, n * sizeof(unsigned)));
    CK(cudaMallocHost(&h_part, NB * sizeof *h_part));
    CK(cudaMalloc(&d_a, n * sizeof(unsigned)));
    CK(cudaMalloc(&d_b, n * sizeof(unsigned)));
    CK(cudaMalloc(&d_part, NB * sizeof *d_part));
    for (int i = 0; i < n; i++)
        h_a[i] = mix32((unsigned)i ^ 0x5bd1e995u);
    memset(h_part, 0, NB * sizeof *h_part);
    cudaEvent_t ev;
    CK(cudaEventCreate(&ev));
    long long spins = 0;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        for (int k = 0; k < NB; k++) // the host's change: 64 words from the last read back
            h_a[(it * NB + k) % n] ^= (unsigned)h_part[k];
        CK(cudaMemcpyAsync(d_a, h_a, n * sizeof(unsigned), cudaMemcpyHostToDevice, 0));
        KL(k_rounds<<<gb, TB>>>(d_a, d_a, n, (unsigned)it, 3));
        KL(k_gather<<<gb, TB>>>(d_b, d_a, n, 48271u, (unsigned)it));
        KL(k_affine<<<gb, TB>>>(d_b, n, 69069u, 1u));
        KL(k_blocksum<<<NB, TB>>>(d_part, d_b, n));
        CK(cudaMemcpyAsync(h_part, d_part, NB * sizeof *h_part, cudaMemcpyDeviceToHost, 0));
        CK(cudaEventRecord(ev, 0));
        cudaError_t q;
        while ((q = cudaEventQuery(ev)) == cudaErrorNotReady)
            spins++; // not hashed: depends on timing
        CK(q);
        q = cudaStreamQuery(0);
        if (q != cudaSuccess) {
            fprintf(stderr, "iteration %d: cudaStreamQuery(0) after the event completed: %s\n",
                    it, cudaGetErrorString(q));
            exit(2);
        }
        fold(h_part, NB * sizeof *h_part);
        tick(it, t0);
    }
    fprintf(stderr, "query_spins %lld\n", spins);
    fold_dev(d_b, n * sizeof(unsigned));
    CK(cudaEventDestroy(ev));
    CK(cudaFreeHost(h_a));
    CK(cudaFreeHost(h_part));
    CK(cudaFree(d_a));
    CK(cudaFree(d_b));
    CK(cudaFree(d_part));
}

// --- hostfunc -------------------------------------------------------------------------------

struct hf_ctx {
    volatile unsigned *mapped;         // [0] stamped by k_stamp, [1] read by k_inject
    const unsigned long long *h_part;  // pinned: copied in just before the second callback
    unsigned *seen;                    // per iteration: the stamp the first callback saw
    unsigned long long *late;          // per iteration: what the second callback saw
    int iter;                          // set by the host before it enqueues an iteration
    int calls;                         // callbacks run
};

// the first callback: records the stamp, answers with a word for k_inject
static void CUDART_CB cb_stamp(void *p)
{
    struct hf_ctx *c = (struct hf_ctx *)p;
    unsigned v = c->mapped[0];
    c->seen[c->iter] = v;
    c->mapped[1] = mix32(v ^ (unsigned)c->calls);
    c->calls++;
}

// the second callback: records the iteration it saw, the calls so far and the copied sum
static void CUDART_CB cb_late(void *p)
{
    struct hf_ctx *c = (struct hf_ctx *)p;
    c->late[c->iter] = ((unsigned long long)c->iter << 40) ^
                       ((unsigned long long)c->calls << 20) ^ c->h_part[0];
    c->calls++;
}

__global__ void k_stamp(volatile unsigned *m, const unsigned *x, int n, int it)
{
    m[0] = x[it % n] ^ (unsigned)it;
    __threadfence_system();
}

// x[i] ^= m[1] * (i | 1): m[1] is what the callback before it wrote (read once a block)
__global__ void k_inject(unsigned *x, int n, const volatile unsigned *m)
{
    __shared__ unsigned v;
    if (threadIdx.x == 0)
        v = m[1];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] ^= v * (unsigned)(i | 1);
}

static void run_hostfunc(void)
{
    const int n = NVEC, gb = (n + TB - 1) / TB;
    unsigned *x = dev_u(n, 41, 0), *mapped, *d_mapped;
    unsigned long long *h_part, *d_part;
    CK(cudaHostAlloc(&mapped, 2 * sizeof(unsigned), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&d_mapped, mapped, 0));
    CK(cudaMallocHost(&h_part, NB * sizeof *h_part));
    CK(cudaMalloc(&d_part, NB * sizeof *d_part));
    struct hf_ctx c = {mapped, h_part, (unsigned *)xmalloc(g_iters * sizeof(unsigned)),
                       (unsigned long long *)xmalloc(g_iters * sizeof(unsigned long long)),
                       0, 0};
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CK(cudaDeviceSynchronize());
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        c.iter = it;
        KL(k_rounds<<<gb, TB, 0, s>>>(x, x, n, (unsigned)it, 2));
        KL(k_stamp<<<1, 1, 0, s>>>(d_mapped, x, n, it));
        CK(cudaLaunchHostFunc(s, cb_stamp, &c));
        KL(k_inject<<<gb, TB, 0, s>>>(x, n, d_mapped));
        KL(k_blocksum<<<NB, TB, 0, s>>>(d_part, x, n));
        CK(cudaMemcpyAsync(h_part, d_part, NB * sizeof *h_part, cudaMemcpyDeviceToHost, s));
        CK(cudaLaunchHostFunc(s, cb_late, &c));
        CK(cudaStreamSynchronize(s));
        fold(h_part, NB * sizeof *h_part);
        tick(it, t0);
    }
    fold(&c.calls, sizeof c.calls);
    fold_words(c.seen, g_iters * sizeof(unsigned));
    fold_words(c.late, g_iters * sizeof(unsigned long long));
    fold_dev(x, n * sizeof(unsigned));
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(mapped));
    CK(cudaFreeHost(h_part));
    CK(cudaFree(x));
    CK(cudaFree(d_part));
    free(c.seen);
    free(c.late);
}

// --- curand ---------------------------------------------------------------------------------

#define NBINS 256

// a 256-bin histogram of the top byte of r ^ salt: per block in shared memory, then integer
// atomics into hist (counts: exact in any order)
__global__ void k_hist(unsigned long long *hist, const unsigned *r, int n, unsigned salt)
{
    __shared__ unsigned bins[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[(r[i] ^ salt) >> 24], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        if (bins[b])
            atomicAdd(&hist[b], (unsigned long long)bins[b]);
}

// acc = (acc ^ r) * FNV prime + salt
__global__ void k_accum(unsigned *acc, const unsigned *r, int n, unsigned salt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        acc[i] = (acc[i] ^ r[i]) * 16777619u + salt;
}

static void run_curand(void)
{
    const int n = 1 << 20, gb = (n + TB - 1) / TB;
    const size_t rb = (NBINS + NB) * sizeof(unsigned long long); // histogram, block sums
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    unsigned *d_rand, *d_acc = dev_u(n, 51, 0);
    unsigned long long *d_res, *h_res;
    CK(cudaMalloc(&d_rand, n * sizeof(unsigned)));
    CK(cudaMalloc(&d_res, rb));
    CK(cudaMallocHost(&h_res, rb));
    CK(cudaDeviceSynchronize());
    curandGenerator_t gen;
    CR(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CR(curandSetPseudoRandomGeneratorSeed(gen, 20261124ull));
    CR(curandSetStream(gen, s));
    unsigned salt = 1;
    for (int it = 0; it < g_iters; it++) {
        double t0 = now_us();
        CR(curandGenerate(gen, d_rand, n));
        CK(cudaMemsetAsync(d_res, 0, NBINS * sizeof(unsigned long long), s));
        KL(k_hist<<<gb, TB, 0, s>>>(d_res, d_rand, n, salt));
        KL(k_accum<<<gb, TB, 0, s>>>(d_acc, d_rand, n, salt));
        KL(k_blocksum<<<NB, TB, 0, s>>>(d_res + NBINS, d_acc, n));
        CK(cudaMemcpyAsync(h_res, d_res, rb, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        fold(h_res, rb);
        salt = (unsigned)h_res[it % NBINS] * 2654435761u + (unsigned)h_res[NBINS];
        tick(it, t0);
    }
    CR(curandDestroyGenerator(gen));
    fold_dev(d_acc, n * sizeof(unsigned));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d_rand));
    CK(cudaFree(d_acc));
    CK(cudaFree(d_res));
    CK(cudaFreeHost(h_res));
}

// --- main -----------------------------------------------------------------------------------

static const struct loop_mode modes[] = {
    {"thrust", run_thrust, 10000},   {"symbol", run_symbol, 20000},
    {"pitch2d", run_pitch2d, 4000},  {"timing", run_timing, 20000},
    {"streams", run_streams, 8000},  {"query", run_query, 20000},
    {"hostfunc", run_hostfunc, 2000}, {"curand", run_curand, 20000},
};

int main(int argc, char **argv)
{
    return mode_main(argc, argv, "samples_prog", modes, sizeof modes / sizeof modes[0]);
}
