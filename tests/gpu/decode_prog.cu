// decode_prog.cu -- an LLM-decode-shaped loop whose launch sizes grow every token (issue 35,
// "a C decode-like loop whose grids grow").
//
// A tiny random-init transformer (d_model 256, 4 heads of 64, MLP 1024, vocab 2048, L layers)
// decodes T tokens greedily on one cudaStreamCreate stream. The token never leaves the
// device: argmax writes a device int that the next token's embedding kernel reads. The
// kernel SEQUENCE per token is always the same; what changes with the position t:
//   - k_attn_scores and k_attn_pv run ceil((t+1)/64) x 4 blocks (the grid grows every 64
//     tokens),
//   - k_softmax's dynamic shared memory is ceil((t+1)/64) floats + its reduction buffer,
//   - scalar parameters (t, t+1, the number of chunks) change every token,
//   - pointer parameters change every token: k_kv_append writes row t of each layer's K and
//     V cache (it gets &cache[t * 256]); the token history copy goes to &hist[t].
//
// Per token, on the stream:
//   [cudaMemsetAsync(mask, 0, 4 * (t+1))      --memset-grow only: a size that grows; the
//                                             additive attention mask, -1e4 beyond t]
//   k_embed                                   x = wte[*d_tok] + sin/cos position code of t
//   per layer (11 kernels [+1 memcpy]):
//     k_layernorm  x -> h
//     k_matmul     qkv = h @ Wqkv + b          (a 16x16 tiled matmul, M = 1)
//     k_kv_append  K[t] = k, V[t] = v          (row t of the layer's caches)
//     [cudaMemcpyAsync(kwork, K, 1024 * (t+1), D2D)   --memcpy-grow only: a size that grows,
//                                             like torch.cat(past_k, k); scores read kwork]
//     k_attn_scores  s[h][j] = q.K[j] / 8 (+ mask[j]), per-chunk maxima
//                                             grid (ceil((t+1)/64), 4)
//     k_softmax    p = exp(s - max), sums      grid 4, dynamic smem grows with t
//     k_attn_pv    chunk partials of p @ V     grid (ceil((t+1)/64), 4)
//     k_attn_reduce  o = sum of partials / sum  grid 4 (sequential over chunks)
//     k_matmul     x += o @ Wo + b
//     k_layernorm  x -> h
//     k_matmul     u = gelu(h @ W1 + b1)
//     k_matmul     x += u @ W2 + b2
//   k_layernorm, k_matmul (logits = h @ Wout), k_argmax -> *d_tok
//   cudaMemcpyAsync(&hist[t], d_tok, 4, D2D)  (--no-copy: k_argmax writes hist[t] itself)
// All reductions are in a fixed order (tree reductions over a fixed block size, sequential
// loops over chunks): no float atomics, so the run is bit-for-bit deterministic.
//
// usage: decode_prog [--tokens T] [--layers L] [--sync-every K] [--memset-grow]
//                    [--memcpy-grow] [--no-copy] [--time] [--warmup W]
//   --tokens T      tokens to generate (default 400, 2..65536)
//   --layers L      layers (default 4, 1..64)
//   --sync-every K  every K tokens read the current token back into a stack variable
//                   (cudaMemcpyAsync D2H, pageable) and cudaStreamSynchronize, as HF
//                   generate() does for its stopping criteria (default 0: no sync inside the
//                   loop, one cudaStreamSynchronize after it)
//   --memset-grow   per token a cudaMemsetAsync whose size grows with t: the additive
//                   attention mask (made -1e4 once; the memset opens positions 0..t). A
//                   replay with a stale (smaller) size masks position t (likely other tokens)
//   --memcpy-grow   per layer a D2D cudaMemcpyAsync of the K cache's rows 0..t into a work
//                   buffer that the scores read: a stale size leaves row t stale
//   --no-copy       no token-history cudaMemcpyAsync: without the two options above, kernels
//                   only
//   --time          per-token host time after W warm-up tokens (default 50); --time adds one
//                   cudaStreamSynchronize after the warm-up tokens. The timed tokens are cut
//                   into segments that end with a sync (K tokens each with --sync-every K; one
//                   segment, tokens W..T-1 and the final sync, without it); each segment's host
//                   time / its tokens is one sample: "per_iter_us p50 <x> p90 <y>" (without
//                   --sync-every: one sample, p50 = p90 = the whole timed run per token, the
//                   drain included), also "enqueue_us p50 <x> p90 <y>" (host time per token
//                   spent issuing it).
//
// stdout: "tokens <T> layers <L> ops_per_token <n>", "last_token <id>", "first_tokens ...",
// "result <16 hex>" (FNV-1a over the T generated token ids: the same with or without
// --sync-every / --memset-grow / --memcpy-grow / --no-copy / --time), with --time the
// timing lines.  stderr at the end: "vm_hwm_kb <K>", the process's peak resident host memory.
// Every CUDA call is checked: an error prints a message and exits 2.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill_hash.cuh"
#include "loop_timing.cuh"
#include "../vm_hwm.h"

#define KL(...)                                                                        \
    do {                                                                               \
        __VA_ARGS__;                                                                   \
        CK(cudaPeekAtLastError());                                                     \
    } while (0)

#define DM 256   // d_model
#define NH 4     // heads
#define HD 64    // head dim
#define FF 1024  // MLP width
#define VOC 2048 // vocabulary
#define CH 64    // attention positions per block
#define TILE 16  // matmul tile

// --- kernels ---------------------------------------------------------------------------

// w[i] = uniform in [-a, a) from a hash of (seed, i)
__global__ void k_fill(float *w, size_t n, unsigned seed, float a)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = mix32((unsigned)i * 2654435761u ^ mix32(seed + (unsigned)(i >> 32)));
        w[i] = a * ((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

__global__ void k_const(float *w, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        w[i] = v;
}

// x = wte[*tok] + position code of t (block DM)
__global__ void k_embed(float *x, const float *wte, const int *tok, int t)
{
    int i = threadIdx.x;
    int id = *tok;
    float f = expf(-(float)(i >> 1) * (9.21034f / (DM / 2))); // 10000^(-2i/d)
    float pe = (i & 1) ? cosf((float)t * f) : sinf((float)t * f);
    x[i] = wte[(size_t)id * DM + i] + pe;
}

// out = layernorm(in) * g + b over DM values (one block of 256 threads, tree reductions)
__global__ void k_layernorm(float *out, const float *in, const float *g, const float *b)
{
    __shared__ float red[DM];
    int i = threadIdx.x;
    float v = in[i];
    red[i] = v;
    __syncthreads();
    for (int o = DM / 2; o > 0; o >>= 1) {
        if (i < o)
            red[i] += red[i + o];
        __syncthreads();
    }
    float mean = red[0] * (1.0f / DM);
    __syncthreads();
    float d = v - mean;
    red[i] = d * d;
    __syncthreads();
    for (int o = DM / 2; o > 0; o >>= 1) {
        if (i < o)
            red[i] += red[i + o];
        __syncthreads();
    }
    float rstd = rsqrtf(red[0] * (1.0f / DM) + 1e-5f);
    out[i] = d * rstd * g[i] + b[i];
}

// y[M,N] = act(x[M,K] @ W[K,N] + bias) (+ res[M,N]); tiles of 16 x 16, block (16, 16),
// grid (ceil(N/16), ceil(M/16)). res may be y (in place: each thread reads then writes its
// own element). act 1: tanh-GELU.
__global__ void k_matmul(float *y, const float *x, const float *W, const float *bias,
                         const float *res, int M, int K, int N, int act)
{
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx, row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        xs[ty][tx] = (row < M && k0 + tx < K) ? x[(size_t)row * K + k0 + tx] : 0.0f;
        ws[ty][tx] = (k0 + ty < K && col < N) ? W[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k++)
            acc += xs[ty][k] * ws[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        float v = acc + bias[col];
        if (act == 1)
            v = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
        if (res)
            v += res[(size_t)row * N + col];
        y[(size_t)row * N + col] = v;
    }
}

// krow = k, vrow = v from qkv = [q | k | v] (block DM); krow / vrow point at row t
__global__ void k_kv_append(float *krow, float *vrow, const float *qkv)
{
    int i = threadIdx.x;
    krow[i] = qkv[DM + i];
    vrow[i] = qkv[2 * DM + i];
}

// grid (nchunk, NH), block CH: s[h * ld + j] = q_h . K[j]_h / 8 (+ mask[j]) for j < n;
// cmax[h * mc + c] the chunk's maximum. mask may be null.
__global__ void k_attn_scores(float *s, float *cmax, const float *qkv, const float *kc,
                              const float *mask, int n, int ld, int mc)
{
    __shared__ float qs[HD];
    __shared__ float red[CH];
    int h = blockIdx.y, c = blockIdx.x, i = threadIdx.x;
    qs[i] = qkv[h * HD + i];
    __syncthreads();
    int j = c * CH + i;
    float v = -INFINITY;
    if (j < n) {
        const float *kr = kc + (size_t)j * DM + h * HD;
        float acc = 0.0f;
        for (int d = 0; d < HD; d++)
            acc += qs[d] * kr[d];
        v = acc * 0.125f;
        if (mask)
            v += mask[j];
        s[(size_t)h * ld + j] = v;
    }
    red[i] = v;
    __syncthreads();
    for (int o = CH / 2; o > 0; o >>= 1) {
        if (i < o)
            red[i] = fmaxf(red[i], red[i + o]);
        __syncthreads();
    }
    if (i == 0)
        cmax[h * mc + c] = red[0];
}

// grid NH, block 128, dynamic shared memory (nchunk + 128) floats: p = exp(s - max) in place,
// sums[h] = sum of p (each thread sums a fixed stride, then a tree: a fixed order)
__global__ void k_softmax(float *s, float *sums, const float *cmax, int n, int nchunk, int ld,
                          int mc)
{
    extern __shared__ float sm[]; // [nchunk] chunk maxima, then [blockDim.x] partial sums
    float *red = sm + nchunk;
    int h = blockIdx.x, i = threadIdx.x, nt = blockDim.x;
    for (int c = i; c < nchunk; c += nt)
        sm[c] = cmax[h * mc + c];
    __syncthreads();
    float m = -INFINITY;
    for (int c = 0; c < nchunk; c++)
        m = fmaxf(m, sm[c]);
    float acc = 0.0f;
    float *sr = s + (size_t)h * ld;
    for (int j = i; j < n; j += nt) {
        float p = expf(sr[j] - m);
        sr[j] = p;
        acc += p;
    }
    red[i] = acc;
    __syncthreads();
    for (int o = nt / 2; o > 0; o >>= 1) {
        if (i < o)
            red[i] += red[i + o];
        __syncthreads();
    }
    if (i == 0)
        sums[h] = red[0];
}

// grid (nchunk, NH), block HD: part[(h * mc + c) * HD + d] = sum over the chunk's j of
// p[h][j] * V[j][h * HD + d] (sequential: a fixed order)
__global__ void k_attn_pv(float *part, const float *p, const float *vc, int n, int ld, int mc)
{
    int h = blockIdx.y, c = blockIdx.x, d = threadIdx.x;
    int j0 = c * CH, j1 = min(n, j0 + CH);
    const float *pr = p + (size_t)h * ld;
    float acc = 0.0f;
    for (int j = j0; j < j1; j++)
        acc += pr[j] * vc[(size_t)j * DM + h * HD + d];
    part[((size_t)h * mc + c) * HD + d] = acc;
}

// grid NH, block HD: o[h * HD + d] = (sum over chunks, in order) / sums[h]
__global__ void k_attn_reduce(float *o, const float *part, const float *sums, int nchunk,
                              int mc)
{
    int h = blockIdx.x, d = threadIdx.x;
    float acc = 0.0f;
    for (int c = 0; c < nchunk; c++)
        acc += part[((size_t)h * mc + c) * HD + d];
    o[h * HD + d] = acc / sums[h];
}

// one block of 1024: *tok = argmax (lowest index on ties); hist_t (if not null) = the same
__global__ void k_argmax(int *tok, int *hist_t, const float *logits, int n)
{
    __shared__ float bv[1024];
    __shared__ int bi[1024];
    int i = threadIdx.x;
    float best = -INFINITY;
    int arg = 0x7fffffff;
    for (int j = i; j < n; j += blockDim.x) {
        float v = logits[j];
        if (v > best) { // strictly greater: the first (lowest) j of this thread wins ties
            best = v;
            arg = j;
        }
    }
    bv[i] = best;
    bi[i] = arg;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (i < o) {
            float v2 = bv[i + o];
            int a2 = bi[i + o];
            if (v2 > bv[i] || (v2 == bv[i] && a2 < bi[i])) {
                bv[i] = v2;
                bi[i] = a2;
            }
        }
        __syncthreads();
    }
    if (i == 0) {
        int r = bi[0] == 0x7fffffff ? 0 : bi[0];
        *tok = r;
        if (hist_t)
            *hist_t = r;
    }
}

// --- host helpers ------------------------------------------------------------------------

static void usage(void)
{
    fprintf(stderr, "usage: decode_prog [--tokens T] [--layers L] [--sync-every K] "
                    "[--memset-grow] [--memcpy-grow] [--no-copy] [--time] [--warmup W]\n");
    exit(1);
}

struct Layer {
    float *ln1g, *ln1b, *wqkv, *bqkv, *wo, *bo, *ln2g, *ln2b, *w1, *b1, *w2, *b2;
    float *kc, *vc; // [T][DM] caches
};

static unsigned g_seed = 1;

static float *param(size_t n, float a, cudaStream_t s)
{
    float *p;
    CK(cudaMalloc(&p, n * sizeof(float)));
    KL(k_fill<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(p, n, g_seed++ * 0x9e3779b9u, a));
    return p;
}

static float *constant(int n, float v, cudaStream_t s)
{
    float *p;
    CK(cudaMalloc(&p, n * sizeof(float)));
    KL(k_const<<<(n + 255) / 256, 256, 0, s>>>(p, n, v));
    return p;
}

static void matmul(cudaStream_t s, float *y, const float *x, const float *W, const float *b,
                   const float *res, int M, int K, int N, int act)
{
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE), block(TILE, TILE);
    KL(k_matmul<<<grid, block, 0, s>>>(y, x, W, b, res, M, K, N, act));
}

int main(int argc, char **argv)
{
    int T = 400, L = 4, sync_every = 0, memset_grow = 0, memcpy_grow = 0, copy = 1;
    int timing = 0, warmup = 50;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--time"))
            timing = 1;
        else if (!strcmp(argv[a], "--memset-grow"))
            memset_grow = 1;
        else if (!strcmp(argv[a], "--memcpy-grow"))
            memcpy_grow = 1;
        else if (!strcmp(argv[a], "--no-copy"))
            copy = 0;
        else if (!strcmp(argv[a], "--tokens") && a + 1 < argc)
            T = intarg(argv[++a], 2, 65536);
        else if (!strcmp(argv[a], "--layers") && a + 1 < argc)
            L = intarg(argv[++a], 1, 64);
        else if (!strcmp(argv[a], "--sync-every") && a + 1 < argc)
            sync_every = intarg(argv[++a], 0, 65536);
        else if (!strcmp(argv[a], "--warmup") && a + 1 < argc)
            warmup = intarg(argv[++a], 0, 65535);
        else
            usage();
    }
    if (timing && warmup >= T) {
        fprintf(stderr, "--warmup %d must be below --tokens %d\n", warmup, T);
        return 1;
    }

    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    const int MC = (T + CH - 1) / CH; // most chunks
    const float aD = sqrtf(3.0f / DM), aF = sqrtf(3.0f / FF);
    float *wte = param((size_t)VOC * DM, 1.0f, s);
    Layer *ly = (Layer *)calloc((size_t)L, sizeof(Layer));
    if (!ly) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    for (int l = 0; l < L; l++) {
        Layer &y = ly[l];
        y.ln1g = constant(DM, 1.0f, s);
        y.ln1b = param(DM, 0.02f, s);
        y.wqkv = param((size_t)DM * 3 * DM, aD, s);
        y.bqkv = param(3 * DM, 0.02f, s);
        y.wo = param((size_t)DM * DM, aD * 0.5f, s);
        y.bo = param(DM, 0.02f, s);
        y.ln2g = constant(DM, 1.0f, s);
        y.ln2b = param(DM, 0.02f, s);
        y.w1 = param((size_t)DM * FF, aD, s);
        y.b1 = param(FF, 0.02f, s);
        y.w2 = param((size_t)FF * DM, aF * 0.5f, s);
        y.b2 = param(DM, 0.02f, s);
        CK(cudaMalloc(&y.kc, (size_t)T * DM * sizeof(float)));
        CK(cudaMalloc(&y.vc, (size_t)T * DM * sizeof(float)));
        CK(cudaMemsetAsync(y.kc, 0, (size_t)T * DM * sizeof(float), s));
        CK(cudaMemsetAsync(y.vc, 0, (size_t)T * DM * sizeof(float), s));
    }
    float *lnfg = constant(DM, 1.0f, s), *lnfb = param(DM, 0.02f, s);
    float *wout = param((size_t)DM * VOC, aD * 4.0f, s), *bout = param(VOC, 0.1f, s);

    float *x, *h, *qkv, *o, *u, *logits, *sc, *cmax, *sums, *part, *mask = NULL, *kwork = NULL;
    int *d_tok, *hist;
    CK(cudaMalloc(&x, DM * sizeof(float)));
    CK(cudaMalloc(&h, DM * sizeof(float)));
    CK(cudaMalloc(&qkv, 3 * DM * sizeof(float)));
    CK(cudaMalloc(&o, DM * sizeof(float)));
    CK(cudaMalloc(&u, FF * sizeof(float)));
    CK(cudaMalloc(&logits, VOC * sizeof(float)));
    CK(cudaMalloc(&sc, (size_t)NH * T * sizeof(float)));
    CK(cudaMalloc(&cmax, (size_t)NH * MC * sizeof(float)));
    CK(cudaMalloc(&sums, NH * sizeof(float)));
    CK(cudaMalloc(&part, (size_t)NH * MC * HD * sizeof(float)));
    CK(cudaMalloc(&d_tok, sizeof(int)));
    CK(cudaMalloc(&hist, (size_t)T * sizeof(int)));
    CK(cudaMemsetAsync(sc, 0, (size_t)NH * T * sizeof(float), s));
    if (memset_grow) {
        mask = constant(T, -1e4f, s);
    }
    if (memcpy_grow) {
        CK(cudaMalloc(&kwork, (size_t)T * DM * sizeof(float)));
        CK(cudaMemsetAsync(kwork, 0, (size_t)T * DM * sizeof(float), s));
    }
    CK(cudaMemsetAsync(hist, 0, (size_t)T * sizeof(int), s));
    const int start_tok = 464;
    CK(cudaMemcpyAsync(d_tok, &start_tok, sizeof(int), cudaMemcpyHostToDevice, s));
    CK(cudaStreamSynchronize(s));

    double *seg = (double *)malloc(sizeof(double) * (size_t)T);
    double *enq = (double *)malloc(sizeof(double) * (size_t)T);
    int *hh = (int *)malloc(sizeof(int) * (size_t)T);
    if (!seg || !enq || !hh) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    int nseg = 0, nenq = 0, seg_start_tok = warmup;
    double seg_t0 = 0.0;
    uint64_t synced = FNV_INIT; // what the host saw at its syncs (stderr only)
    int nsync = 0;

    for (int t = 0; t < T; t++) {
        double t0 = now_us();
        if (timing && t == warmup)
            seg_t0 = t0;
        const int n = t + 1, nchunk = (n + CH - 1) / CH;
        if (memset_grow) // the additive mask: positions 0..t visible (0), the rest -1e4
            CK(cudaMemsetAsync(mask, 0, (size_t)n * sizeof(float), s));
        KL(k_embed<<<1, DM, 0, s>>>(x, wte, d_tok, t));
        for (int l = 0; l < L; l++) {
            Layer &y = ly[l];
            KL(k_layernorm<<<1, DM, 0, s>>>(h, x, y.ln1g, y.ln1b));
            matmul(s, qkv, h, y.wqkv, y.bqkv, NULL, 1, DM, 3 * DM, 0);
            KL(k_kv_append<<<1, DM, 0, s>>>(y.kc + (size_t)t * DM, y.vc + (size_t)t * DM, qkv));
            const float *kread = y.kc;
            if (memcpy_grow) { // like torch.cat(past_k, k): a copy that grows every token
                CK(cudaMemcpyAsync(kwork, y.kc, (size_t)n * DM * sizeof(float),
                                   cudaMemcpyDeviceToDevice, s));
                kread = kwork;
            }
            KL(k_attn_scores<<<dim3(nchunk, NH), CH, 0, s>>>(sc, cmax, qkv, kread,
                                                             memset_grow ? mask : NULL, n, T,
                                                             MC));
            KL(k_softmax<<<NH, 128, (nchunk + 128) * sizeof(float), s>>>(sc, sums, cmax, n,
                                                                          nchunk, T, MC));
            KL(k_attn_pv<<<dim3(nchunk, NH), HD, 0, s>>>(part, sc, y.vc, n, T, MC));
            KL(k_attn_reduce<<<NH, HD, 0, s>>>(o, part, sums, nchunk, MC));
            matmul(s, x, o, y.wo, y.bo, x, 1, DM, DM, 0);
            KL(k_layernorm<<<1, DM, 0, s>>>(h, x, y.ln2g, y.ln2b));
            matmul(s, u, h, y.w1, y.b1, NULL, 1, DM, FF, 1);
            matmul(s, x, u, y.w2, y.b2, x, 1, FF, DM, 0);
        }
        KL(k_layernorm<<<1, DM, 0, s>>>(h, x, lnfg, lnfb));
        matmul(s, logits, h, wout, bout, NULL, 1, DM, VOC, 0);
        KL(k_argmax<<<1, 1024, 0, s>>>(d_tok, copy ? NULL : hist + t, logits, VOC));
        if (copy)
            CK(cudaMemcpyAsync(hist + t, d_tok, sizeof(int), cudaMemcpyDeviceToDevice, s));
        double t1 = now_us();
        if (timing && t >= warmup)
            enq[nenq++] = t1 - t0;

        int sync_now = sync_every > 0 && (t + 1) % sync_every == 0;
        if (sync_now) {
            int tok; // on the stack: pageable, as generate() reads its stopping test
            CK(cudaMemcpyAsync(&tok, d_tok, sizeof tok, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            synced = fnv1a(&tok, sizeof tok, synced);
            nsync++;
        } else if (timing && t + 1 == warmup) {
            CK(cudaStreamSynchronize(s)); // --time: the timed part starts drained
        }
        if (timing && t >= warmup && sync_now) {
            double t2 = now_us();
            seg[nseg++] = (t2 - seg_t0) / (t + 1 - seg_start_tok);
            seg_t0 = t2;
            seg_start_tok = t + 1;
        }
    }
    CK(cudaStreamSynchronize(s));
    if (timing && seg_start_tok < T)
        seg[nseg++] = (now_us() - seg_t0) / (T - seg_start_tok);

    CK(cudaMemcpy(hh, hist, (size_t)T * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint64_t r = fnv1a(hh, (size_t)T * sizeof(int), FNV_INIT);
    int ops = memset_grow + 1 + L * (11 + memcpy_grow) + 3 + copy;
    printf("tokens %d layers %d ops_per_token %d\n", T, L, ops);
    printf("last_token %d\n", hh[T - 1]);
    printf("first_tokens");
    for (int i = 0; i < T && i < 16; i++)
        printf(" %d", hh[i]);
    printf("\n");
    printf("result %016llx\n", (unsigned long long)r);
    if (timing) {
        print_percentiles("per_iter_us", seg, nseg);
        print_percentiles("enqueue_us", enq, nenq);
    }
    fflush(stdout);
    if (nsync)
        fprintf(stderr, "decode_prog: %d syncs, host-side token hash %016llx\n", nsync,
                (unsigned long long)synced);

    for (int l = 0; l < L; l++) {
        Layer &y = ly[l];
        float *ps[] = {y.ln1g, y.ln1b, y.wqkv, y.bqkv, y.wo, y.bo, y.ln2g,
                       y.ln2b, y.w1,   y.b1,   y.w2,   y.b2, y.kc, y.vc};
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
            CK(cudaFree(ps[i]));
    }
    float *fs[] = {wte, lnfg, lnfb, wout, bout, x, h, qkv, o, u, logits, sc, cmax, sums, part};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        CK(cudaFree(fs[i]));
    if (mask)
        CK(cudaFree(mask));
    if (kwork)
        CK(cudaFree(kwork));
    CK(cudaFree(d_tok));
    CK(cudaFree(hist));
    CK(cudaStreamDestroy(s));
    free(ly);
    free(seg);
    free(enq);
    free(hh);
    fprintf(stderr, "vm_hwm_kb %ld\n", vm_hwm_kb());
    return 0;
}
