// numlib_prog.cu -- loops built on the toolkit's numerical libraries, written the way the
// NVIDIA samples write them (realistic.bats, make bench-loose): the kernels are launched
// by cuSPARSE, cuBLAS and cuFFT from their own modules, and the program's memory is
// sometimes managed memory that the host reads and writes between launches.
//
// usage: numlib_prog --mode MODE [--iters I] [--time] [--warmup W]
//   cg         the conjugateGradient sample: a sparse SPD matrix (the 5-point Laplacian of a
//              512 x 512 grid plus 0.05 on the diagonal, CSR), cusparseSpMV (CSR_ALG2:
//              deterministic) and cuBLAS level 1 in host pointer mode on the legacy
//              stream.  Per iteration: cublasSscal, cublasSaxpy, cusparseSpMV, cublasSdot
//              into a stack float, two cublasSaxpy, cublasSdot into a stack float,
//              cudaDeviceSynchronize; the host computes alpha and beta and tests the
//              residual.  A solve ends at residual 1e-2 or 300 iterations; the next one
//              starts from a right-hand side derived from the last residual.  Default
//              6000 iterations.
//   cg_device  the same solver with the scalars kept on the device (CUBLAS_POINTER_MODE_DEVICE
//              and two one-thread kernels for alpha and beta, as conjugateGradientCudaGraphs
//              does), the residual read back (cudaMemcpy into a stack float) every 10th
//              iteration only.  Default 20000 iterations.
//   fft        a spectral diffusion step, simpleCUFFT style: cufftExecR2C of a 512 x 512
//              field, a kernel that damps each mode (and a forcing term that moves with the
//              step), cufftExecC2R, a kernel that scales and adds a source; every 8th step
//              block sums of the field (in a fixed order) copied back with cudaMemcpy into
//              a stack array.  Legacy stream.  Default 20000 steps.
//   managed    cudaMallocManaged memory: the host fills a 1 Mi element field, prefetches it
//              to the device once, then per iteration writes the salt into a managed
//              parameter block, 3 kernels on a created stream read it through a pointer,
//              a fourth adds block sums into the block; cudaStreamSynchronize; the host
//              reads the sums from managed memory directly, and every 64th iteration
//              rewrites 4096 elements of the field on the host.  Default 2000 iterations.
//   --iters I     iterations (default: per mode, above)
//   --time        host time per iteration over the iterations after W warm-up ones (default
//                 100), taken over each stretch that ends in a wait for the GPU (10
//                 iterations of cg_device, 8 steps of fft, one iteration of the others):
//                 "per_iter_us p50 <x> p90 <y>" (at least W+200 iterations then run)
//
// stdout: "iterations <n>", "result <16 hex>": FNV-1a over every scalar the host read back,
// every iteration, and the final device state.  The libraries' routines used here are
// deterministic run to run (cuBLAS level 1, cuSPARSE CSR_ALG2, cuFFT with one plan), so
// the result is bit-identical with and without the shim.  Every CUDA and library call is
// checked: an error prints a message and exits 2.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <cusparse.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.cuh" // KL, CK, mix32
#include "mode_loop.cuh"   // tick_block, fold, fold_dev, xmalloc, mode_main

#define LIBCHECK(kind, okval, x)                                                      \
    do {                                                                               \
        int r_ = (int)(x);                                                             \
        if (r_ != (int)(okval)) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s status %d\n", __FILE__, __LINE__, #x, kind, \
                    r_);                                                               \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)
#define CB(x) LIBCHECK("cublas", CUBLAS_STATUS_SUCCESS, x)
#define CS(x) LIBCHECK("cusparse", CUSPARSE_STATUS_SUCCESS, x)
#define CF(x) LIBCHECK("cufft", CUFFT_SUCCESS, x)

#define TB 256 // threads per block of the 1D kernels
#define NB 64  // blocks of the block-sum kernels: the sums read back

// --- cg and cg_device: the sparse system ----------------------------------------------------

#define GRID 512 // the Laplacian's grid side: GRID * GRID unknowns

struct csr {
    int n, nnz;
    int *row, *col; // device
    float *val;     // device
};

// The 5-point Laplacian of a GRID x GRID grid (Dirichlet), plus `shift` on the diagonal:
// built on the host in CSR, uploaded once.
static struct csr laplacian(float shift)
{
    struct csr a;
    a.n = GRID * GRID;
    int *row = (int *)xmalloc(sizeof(int) * (size_t)(a.n + 1));
    int *col = (int *)xmalloc(sizeof(int) * (size_t)a.n * 5);
    float *val = (float *)xmalloc(sizeof(float) * (size_t)a.n * 5);
    int k = 0;
    for (int i = 0; i < a.n; i++) {
        int r = i / GRID, c = i % GRID;
        row[i] = k;
        const int nb[5] = {r > 0 ? i - GRID : -1, c > 0 ? i - 1 : -1, i,
                           c < GRID - 1 ? i + 1 : -1, r < GRID - 1 ? i + GRID : -1};
        for (int j = 0; j < 5; j++)
            if (nb[j] >= 0) {
                col[k] = nb[j];
                val[k++] = nb[j] == i ? 4.0f + shift : -1.0f;
            }
    }
    row[a.n] = a.nnz = k;
    CK(cudaMalloc(&a.row, sizeof(int) * (size_t)(a.n + 1)));
    CK(cudaMalloc(&a.col, sizeof(int) * (size_t)k));
    CK(cudaMalloc(&a.val, sizeof(float) * (size_t)k));
    CK(cudaMemcpy(a.row, row, sizeof(int) * (size_t)(a.n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(a.col, col, sizeof(int) * (size_t)k, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(a.val, val, sizeof(float) * (size_t)k, cudaMemcpyHostToDevice));
    free(row);
    free(col);
    free(val);
    return a;
}

// the right-hand side of solve number `solve`: smooth bumps whose place depends on salt
__global__ void k_rhs(float *b, int n, unsigned salt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = (float)(mix32((unsigned)i ^ salt) >> 20) * (1.0f / 4096.0f) - 0.5f;
}

// The solver's state: the matrix in cuSPARSE's descriptors, the vectors, the handles.
struct cg {
    struct csr a;
    float *x, *r, *p, *ap;
    void *spmv_buf;
    cusparseHandle_t sp;
    cublasHandle_t bl;
    cusparseSpMatDescr_t ma;
    cusparseDnVecDescr_t vp, vap;
};

static void cg_open(struct cg *s)
{
    s->a = laplacian(0.05f);
    const size_t vb = sizeof(float) * (size_t)s->a.n;
    CK(cudaMalloc(&s->x, vb));
    CK(cudaMalloc(&s->r, vb));
    CK(cudaMalloc(&s->p, vb));
    CK(cudaMalloc(&s->ap, vb));
    CB(cublasCreate(&s->bl));
    CS(cusparseCreate(&s->sp));
    CS(cusparseCreateCsr(&s->ma, s->a.n, s->a.n, s->a.nnz, s->a.row, s->a.col, s->a.val,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                         CUDA_R_32F));
    CS(cusparseCreateDnVec(&s->vp, s->a.n, s->p, CUDA_R_32F));
    CS(cusparseCreateDnVec(&s->vap, s->a.n, s->ap, CUDA_R_32F));
    const float one = 1.0f, zero = 0.0f;
    size_t bytes = 0;
    CS(cusparseSpMV_bufferSize(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->ma, s->vp,
                               &zero, s->vap, CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG2, &bytes));
    CK(cudaMalloc(&s->spmv_buf, bytes ? bytes : 1));
}

static void cg_close(struct cg *s)
{
    CS(cusparseDestroyDnVec(s->vp));
    CS(cusparseDestroyDnVec(s->vap));
    CS(cusparseDestroySpMat(s->ma));
    CS(cusparseDestroy(s->sp));
    CB(cublasDestroy(s->bl));
    void *bufs[] = {s->x, s->r, s->p, s->ap, s->spmv_buf, s->a.row, s->a.col, s->a.val};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        CK(cudaFree(bufs[i]));
}

// ap = A p (the scalars alpha = 1, beta = 0 in the handle's pointer mode's memory)
static void cg_spmv(struct cg *s, const float *one, const float *zero)
{
    CS(cusparseSpMV(s->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, one, s->ma, s->vp, zero, s->vap,
                    CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG2, s->spmv_buf));
}

// A new solve: x = 0, r = b (from salt); returns r.r (host pointer mode)
static float cg_restart(struct cg *s, unsigned salt)
{
    const int n = s->a.n;
    CK(cudaMemset(s->x, 0, sizeof(float) * (size_t)n));
    KL(k_rhs<<<(n + TB - 1) / TB, TB>>>(s->r, n, salt));
    float r1;
    CB(cublasSdot(s->bl, n, s->r, 1, s->r, 1, &r1));
    return r1;
}

#define CG_TOL2 (1e-2f * 1e-2f)
#define CG_MAX_ITERS 300

// The conjugateGradient sample's loop, as it is written there (host pointer mode)
static void run_cg(void)
{
    struct cg s;
    cg_open(&s);
    const int n = s.a.n;
    const float one = 1.0f, zero = 0.0f;
    unsigned salt = 1;
    float r1 = cg_restart(&s, salt), r0 = 0.0f;
    int k = 1;
    tick_start();
    for (int it = 0; it < g_iters; it++) {
        if (k > 1) {
            float b = r1 / r0;
            CB(cublasSscal(s.bl, n, &b, s.p, 1));
            CB(cublasSaxpy(s.bl, n, &one, s.r, 1, s.p, 1));
        } else
            CB(cublasScopy(s.bl, n, s.r, 1, s.p, 1));
        cg_spmv(&s, &one, &zero);
        float dot;
        CB(cublasSdot(s.bl, n, s.p, 1, s.ap, 1, &dot));
        float a = r1 / dot, na = -a;
        CB(cublasSaxpy(s.bl, n, &a, s.p, 1, s.x, 1));
        CB(cublasSaxpy(s.bl, n, &na, s.ap, 1, s.r, 1));
        r0 = r1;
        CB(cublasSdot(s.bl, n, s.r, 1, s.r, 1, &r1));
        CK(cudaDeviceSynchronize());
        fold(&r1, sizeof r1);
        k++;
        if (r1 <= CG_TOL2 || k > CG_MAX_ITERS) { // solved: the next right-hand side
            fold(&k, sizeof k);
            uint32_t bits;
            memcpy(&bits, &r1, sizeof bits);
            salt = salt * 2654435761u + bits;
            r1 = cg_restart(&s, salt);
            k = 1;
        }
        tick_block(it, 1);
    }
    fold_dev(s.x, sizeof(float) * (size_t)n);
    cg_close(&s);
}

// --- cg_device: the scalars on the device ----------------------------------------------

struct cg_scalars {
    float r0, r1, dot, a, na, b, one, zero;
};

// b = r1 / r0 (the step's first scalar), and r0 = r1 for the next
__global__ void k_cg_beta(struct cg_scalars *c)
{
    c->b = c->r1 / c->r0;
    c->r0 = c->r1;
}

// a = r0 / dot, na = -a
__global__ void k_cg_alpha(struct cg_scalars *c)
{
    c->a = c->r0 / c->dot;
    c->na = -c->a;
}

// The solver with its scalars on the device: a synchronous read of r1 every 10th iteration
static void run_cg_device(void)
{
    struct cg s;
    cg_open(&s);
    const int n = s.a.n;
    struct cg_scalars *d;
    CK(cudaMalloc(&d, sizeof *d));
    const struct cg_scalars init = {1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f};
    CS(cusparseSetPointerMode(s.sp, CUSPARSE_POINTER_MODE_DEVICE));
    unsigned salt = 7;
    int k = 0;
    tick_start();
    for (int it = 0; it < g_iters; it++) {
        if (k == 0) { // a new solve: p = r = b, r0 = r.r
            CK(cudaMemcpy(d, &init, sizeof init, cudaMemcpyHostToDevice));
            CB(cublasSetPointerMode(s.bl, CUBLAS_POINTER_MODE_HOST));
            float r1 = cg_restart(&s, salt);
            CK(cudaMemcpy(&d->r1, &r1, sizeof r1, cudaMemcpyHostToDevice));
            CB(cublasSetPointerMode(s.bl, CUBLAS_POINTER_MODE_DEVICE));
            CB(cublasScopy(s.bl, n, s.r, 1, s.p, 1));
            KL(k_cg_beta<<<1, 1>>>(d)); // r0 = r1
        } else {
            KL(k_cg_beta<<<1, 1>>>(d));
            CB(cublasSscal(s.bl, n, &d->b, s.p, 1));
            CB(cublasSaxpy(s.bl, n, &d->one, s.r, 1, s.p, 1));
        }
        cg_spmv(&s, &d->one, &d->zero);
        CB(cublasSdot(s.bl, n, s.p, 1, s.ap, 1, &d->dot));
        KL(k_cg_alpha<<<1, 1>>>(d));
        CB(cublasSaxpy(s.bl, n, &d->a, s.p, 1, s.x, 1));
        CB(cublasSaxpy(s.bl, n, &d->na, s.ap, 1, s.r, 1));
        CB(cublasSdot(s.bl, n, s.r, 1, s.r, 1, &d->r1));
        k++;
        if (k % 10 == 0) {
            float r1;
            CK(cudaMemcpy(&r1, &d->r1, sizeof r1, cudaMemcpyDeviceToHost));
            fold(&r1, sizeof r1);
            if (r1 <= CG_TOL2 || k >= CG_MAX_ITERS) {
                uint32_t bits;
                memcpy(&bits, &r1, sizeof bits);
                salt = salt * 2654435761u + bits;
                k = 0;
            }
        }
        tick_block(it, 10);
    }
    CK(cudaDeviceSynchronize());
    fold_dev(s.x, sizeof(float) * (size_t)n);
    CK(cudaFree(d));
    cg_close(&s);
}

// --- fft ------------------------------------------------------------------------------------

#define FN 512                  // the field's side
#define FNC (FN / 2 + 1)        // complex columns of its R2C transform

// Damp mode (r, c) by exp(-k^2 dt) and add a forcing mode that moves with the step
__global__ void k_spectral(cufftComplex *f, int step)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= FN * FNC)
        return;
    int r = i / FNC, c = i % FNC;
    float kr = (float)(r <= FN / 2 ? r : r - FN), kc = (float)c;
    float damp = __expf(-(kr * kr + kc * kc) * 2e-5f);
    f[i].x *= damp;
    f[i].y *= damp;
    if (r == 1 + step % 7 && c == 1 + step % 5)
        f[i].x += 0.25f * (float)(FN * FN);
}

// u = u / (FN * FN) + a small source at a point that moves with the step
__global__ void k_scale_source(float *u, int step)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= FN * FN)
        return;
    float v = u[i] * (1.0f / (float)(FN * FN));
    if (i == (step * 4099) % (FN * FN))
        v += 1.0f;
    u[i] = v;
}

// out[b] = the sum of u over block b's grid-stride elements, in a fixed order (a tree in
// shared memory): the same bits every run
__global__ void k_fsum(float *out, const float *u, int n)
{
    __shared__ float part[TB];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += u[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = TB / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = part[0];
}

static void run_fft(void)
{
    float *u, *sums;
    cufftComplex *f;
    CK(cudaMalloc(&u, sizeof(float) * FN * FN));
    CK(cudaMalloc(&f, sizeof(cufftComplex) * FN * FNC));
    CK(cudaMalloc(&sums, sizeof(float) * NB));
    CK(cudaMemset(u, 0, sizeof(float) * FN * FN));
    cufftHandle fwd, inv;
    CF(cufftPlan2d(&fwd, FN, FN, CUFFT_R2C));
    CF(cufftPlan2d(&inv, FN, FN, CUFFT_C2R));
    const int gc = (FN * FNC + TB - 1) / TB, gr = (FN * FN + TB - 1) / TB;
    tick_start();
    for (int it = 0; it < g_iters; it++) {
        CF(cufftExecR2C(fwd, u, f));
        KL(k_spectral<<<gc, TB>>>(f, it));
        CF(cufftExecC2R(inv, f, u));
        KL(k_scale_source<<<gr, TB>>>(u, it));
        if (it % 8 == 7) {
            float h[NB];
            KL(k_fsum<<<NB, TB>>>(sums, u, FN * FN));
            CK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
            fold(h, sizeof h);
        }
        tick_block(it, 8);
    }
    CF(cufftDestroy(fwd));
    CF(cufftDestroy(inv));
    fold_dev(u, sizeof(float) * FN * FN);
    CK(cudaFree(u));
    CK(cudaFree(f));
    CK(cudaFree(sums));
}

// --- managed --------------------------------------------------------------------------------

#define MN (1 << 20) // the managed field's elements

struct mparams {
    unsigned salt;
    unsigned rounds;
    unsigned long long sums[NB];
};

// u = rounds of mixing of u with the salt that the host wrote into managed memory
__global__ void k_mmix(unsigned *u, int n, const struct mparams *p, unsigned lane)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = u[i] ^ lane;
        for (unsigned r = 0; r < p->rounds; r++)
            v = mix32(v + p->salt + r);
        u[i] = v;
    }
}

// p->sums[b] += block b's grid-stride elements of u (integer: any order)
__global__ void k_msum(struct mparams *p, const unsigned *u, int n)
{
    unsigned long long acc = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += u[i];
    atomicAdd(&p->sums[blockIdx.x], acc);
}

static void run_managed(void)
{
    int dev;
    CK(cudaGetDevice(&dev));
    unsigned *u;
    struct mparams *p;
    CK(cudaMallocManaged(&u, sizeof(unsigned) * MN, cudaMemAttachGlobal));
    CK(cudaMallocManaged(&p, sizeof *p, cudaMemAttachGlobal));
    for (int i = 0; i < MN; i++) // first touch on the host
        u[i] = (unsigned)i * 2654435761u;
    memset(p, 0, sizeof *p);
    p->rounds = 4;
    struct cudaMemLocation loc;
    loc.type = cudaMemLocationTypeDevice;
    loc.id = dev;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CK(cudaMemPrefetchAsync(u, sizeof(unsigned) * MN, loc, 0, s));
    const int g = (MN + TB - 1) / TB;
    tick_start();
    for (int it = 0; it < g_iters; it++) {
        p->salt = (unsigned)it * 0x9e3779b9u ^ (unsigned)p->sums[it % NB];
        KL(k_mmix<<<g, TB, 0, s>>>(u, MN, p, 1));
        KL(k_mmix<<<g, TB, 0, s>>>(u, MN, p, 2));
        KL(k_mmix<<<g, TB, 0, s>>>(u, MN, p, 3));
        KL(k_msum<<<NB, TB, 0, s>>>(p, u, MN));
        CK(cudaStreamSynchronize(s));
        fold(p->sums, sizeof p->sums);
        if (it % 64 == 63) // the host edits part of the field in place
            for (int i = 0; i < 4096; i++)
                u[(it * 4096 + i) % MN] ^= (unsigned)it;
        tick_block(it, 1);
    }
    fold_words(u, sizeof(unsigned) * MN);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(u));
    CK(cudaFree(p));
}

// --- main -----------------------------------------------------------------------------------

static const struct loop_mode modes[] = {
    {"cg", run_cg, 6000},
    {"cg_device", run_cg_device, 20000},
    {"fft", run_fft, 20000},
    {"managed", run_managed, 2000},
};

int main(int argc, char **argv)
{
    return mode_main(argc, argv, "numlib_prog", modes, sizeof modes / sizeof modes[0]);
}
