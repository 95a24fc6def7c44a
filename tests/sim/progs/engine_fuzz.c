/* engine_fuzz.c -- property-test program for the graphing engine:
 *
 *   engine_fuzz SEED NOPS [noevents]
 *
 * From SEED it builds a random program and runs it until NOPS stream operations
 * have been submitted: 2-4 created streams (blocking and non-blocking), maybe the
 * legacy stream, 4-6 device buffers, 2-3 pinned host buffers, a pool of events and
 * four CPU kernels with different parameter lists, launched through different
 * doors (kernelParams, `extra`, cuLaunchKernelEx, the _ptsz exports).  A loop body
 * of 4-40 operations (kernels, async memsets, DtoD / HtoD / DtoH copies with pinned
 * memory, explicit fork/join through events) runs many iterations, each ending with
 * a synchronisation (stream, context or event), with perturbations picked by the
 * seed: scalars that change every iteration, ping-pong pointers, kernels whose grid
 * changes every iteration (one in 8: a decoder's attention as its cache grows; the
 * kernels' work depends on the grid), memsets and copies whose size halves every
 * other iteration (one in 3: those whose element count is a multiple of 3), an occasional
 * iteration of a different shape (missing or extra op, other grid), iterations
 * without a sync, long runs without any sync, host checks (synchronous copies),
 * host-side rewrites of pinned inputs, host functions, queries and allocations in
 * the middle of an iteration, events destroyed and made anew (after a sync or in
 * the middle of an iteration).
 *
 * The program is a valid CUDA program: every access to a buffer that another
 * stream touched since the two were last ordered is preceded by an event record
 * on that stream and a cuStreamWaitEvent (inserted as it runs), and the host
 * reads or writes memory only after a cuCtxSynchronize.  So an engine that keeps
 * CUDA's ordering must give the same SIM_LOG (with SIM_LOG_SKIP=event and
 * SIM_LOG_STREAMS=hide) and the same stdout as the plain simulator.  Kernels
 * compute on uint32 data and depend on the order of operations, so a reordering
 * shows up in the checksums printed on stdout (host checks and the end).
 *
 * noevents: the program never calls cuStreamCreate (its 2 streams come from
 * cuStreamCreateWithPriority), cuEventCreate, cuEventRecord or cuStreamWaitEvent:
 * every op touches only buffers owned by its stream, so no join is needed, and
 * SIM_FAIL on those functions hits the shim's own calls (tests/bats/engine_sim.bats).
 *
 * stdout: one line describing the program, "check" / "final" checksum lines of
 * every buffer, and "engine_fuzz: seed=S ops=N iterations=I ...".  Exit status 0,
 * 1 on an unexpected CUDA error, 2 on bad arguments, 3 on a generator bug.
 * ENGINE_FUZZ_DUMP=1 describes the generated loop body on stderr.
 * ENGINE_FUZZ_PACE_US=N spends N us of the program's own time before each op of the
 * body: a program slower than its GPU, whose windows the shim paces (and launches on
 * its launcher thread).  The output does not depend on it.
 * ENGINE_FUZZ_STREAM_CHURN=N destroys one created stream and makes it anew (same flags,
 * after synchronizing it) at one in N of the iterations' ends, as programs that make a
 * stream per iteration do: the new stream often gets the old one's handle.  Unset or 0:
 * never (the program and its output are then as without the variable).
 */
#include "prog.h"

#include <inttypes.h>
#include <string.h>

/* cuda.h declares these only under CUDA_API_PER_THREAD_DEFAULT_STREAM. */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int smem, CUstream s, void **params, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params,
                               void **extra);

#define NELEM 256                  /* uint32 elements in every buffer */
#define MAX_STREAMS 5              /* 4 created + legacy */
#define MAX_DEV 6
#define MAX_PIN 3
#define MAX_BUF (MAX_DEV + MAX_PIN) /* buffer index b: device b, or pinned b - MAX_DEV */
#define NEVENTS 6
#define MAX_BODY 40

/* ---- kernels (uint32 data; every one depends on what it overwrites) */

enum { K_AXPB, K_REDUCE, K_MIX, K_STENCIL, NKERN };

typedef struct coef4 { int32_t c[3]; uint32_t shift; } coef4;

static size_t limit(sim_dim3 g, sim_dim3 b, int n)
{
    size_t t = SIM_THREADS_X(g, b), m = n < 0 ? 0 : (size_t)n;
    if (m > NELEM)
        m = NELEM;
    return t < m ? t : m;
}

static uint32_t rotl32(uint32_t v, unsigned r)
{
    r &= 31;
    return r ? (v << r) | (v >> (32 - r)) : v;
}

/* axpb(uint32 *y, const uint32 *x, uint32 a, uint64 b, int n): y = a*x + b + y/8 */
static void k_axpb(sim_dim3 grid, sim_dim3 block, void **params)
{
    uint32_t *y = DEVPTR(uint32_t, params, 0);
    const uint32_t *x = DEVPTR(const uint32_t, params, 1);
    uint32_t a = PARAM(uint32_t, params, 2);
    uint64_t b = PARAM(uint64_t, params, 3);
    size_t lim = limit(grid, block, PARAM(int, params, 4));
    for (size_t i = 0; i < lim; i++)
        y[i] = a * x[i] + (uint32_t)b + (uint32_t)(b >> 32) * (uint32_t)i + (y[i] >> 3);
}

/* reduce(uint32 *out, const uint32 *x, int n, uint8 tag): folds x into out[0..7] */
static void k_reduce(sim_dim3 grid, sim_dim3 block, void **params)
{
    uint32_t *out = DEVPTR(uint32_t, params, 0);
    const uint32_t *x = DEVPTR(const uint32_t, params, 1);
    size_t lim = limit(grid, block, PARAM(int, params, 2));
    uint8_t tag = PARAM(uint8_t, params, 3);
    uint32_t h = out[0] ^ tag;
    for (size_t i = 0; i < lim; i++)
        h = h * 31u + x[i];
    out[0] = h;
    out[1 + tag % 7] += h >> 7;
}

/* mix(uint32 *a, const uint32 *b, uint32 seed, uint16 shift, int n) */
static void k_mix(sim_dim3 grid, sim_dim3 block, void **params)
{
    uint32_t *a = DEVPTR(uint32_t, params, 0);
    const uint32_t *b = DEVPTR(const uint32_t, params, 1);
    uint32_t seed = PARAM(uint32_t, params, 2);
    uint16_t shift = PARAM(uint16_t, params, 3);
    int n = PARAM(int, params, 4);
    size_t lim = limit(grid, block, n);
    for (size_t i = 0; i < lim; i++) {
        size_t j = ((size_t)i * 7 + seed) % lim;
        a[i] = rotl32(a[i], 1u + shift % 31u) ^ (b[j] + seed + (uint32_t)i);
    }
}

/* stencil(uint32 *dst, const uint32 *src, coef4 c, float w, int n): 3-point */
static void k_stencil(sim_dim3 grid, sim_dim3 block, void **params)
{
    uint32_t *dst = DEVPTR(uint32_t, params, 0);
    const uint32_t *src = DEVPTR(const uint32_t, params, 1);
    coef4 c = PARAM(coef4, params, 2);
    float w = PARAM(float, params, 3);
    size_t lim = limit(grid, block, PARAM(int, params, 4));
    for (size_t i = 0; i < lim; i++) {
        uint32_t l = src[i ? i - 1 : 0], m = src[i], r = src[i + 1 < lim ? i + 1 : i];
        uint32_t v = (uint32_t)c.c[0] * l + (uint32_t)c.c[1] * m + (uint32_t)c.c[2] * r;
        dst[i] = (v >> (c.shift & 15)) + (uint32_t)(w * 8.0f) + dst[i] / 2;
    }
}

static const char *kern_name[NKERN] = { "fz_axpb", "fz_reduce", "fz_mix", "fz_stencil" };
static const sim_kernel_fn kern_fn[NKERN] = { k_axpb, k_reduce, k_mix, k_stencil };
static const int kern_np[NKERN] = { 5, 4, 5, 5 };
static const size_t kern_sizes[NKERN][5] = {
    { 8, 8, 4, 8, 4 }, { 8, 8, 4, 1 }, { 8, 8, 4, 2, 4 }, { 8, 8, sizeof(coef4), 4, 4 },
};
static const size_t kern_aligns[NKERN][5] = {
    { 8, 8, 4, 8, 4 }, { 8, 8, 4, 1 }, { 8, 8, 4, 2, 4 }, { 8, 8, 4, 4, 4 },
};

/* ---- the generated program */

enum { OP_KERNEL, OP_MEMSET, OP_COPY, OP_FORK };
enum { D_PARAMS, D_EXTRA, D_EX, D_PTSZ, D_EX_PTSZ, NDOORS };
enum { C_DTOD, C_HTOD, C_DTOH };
enum { SYNC_STREAM, SYNC_CTX, SYNC_EVENT };

static const char *door_name[NDOORS] = { "params", "extra", "ex", "ptsz", "ex_ptsz" };

typedef struct op {
    int type, stream, stream2;     /* stream2: the waiting stream of a fork */
    int legacy_alias;              /* the legacy stream as CU_STREAM_LEGACY, not NULL */
    int kern, door;
    int buf[2], alt[2];            /* kernel: dst, src; alt: used on odd iterations */
    uint32_t s32;
    uint64_t s64;
    int vary;                      /* scalars change every iteration */
    unsigned grid, block, smem;
    int n;
    int elem;                      /* memset: 1, 2 or 4 bytes */
    uint32_t value;
    int ckind, generic;            /* copy: kind; through cuMemcpyAsync */
    size_t doff, soff, count;      /* elements */
} op;

typedef struct fuzz {
    uint64_t gen, run;             /* generator / runtime random states */
    int ncreated, legacy, ns;      /* created streams, legacy in use, total */
    CUstream st[MAX_STREAMS];
    unsigned st_flags[MAX_STREAMS];
    int nd, np;
    CUdeviceptr dev[MAX_DEV];
    uint32_t *pin[MAX_PIN];
    CUevent ev[NEVENTS];
    int ev_used;                   /* events used in this iteration */
    int noevents;                  /* no program events (see the top comment) */
    int pace_us;                   /* ENGINE_FUZZ_PACE_US (see the top comment) */
    int p_stream_churn;            /* ENGINE_FUZZ_STREAM_CHURN (see the top comment) */
    CUdevice device;
    CUmodule mod;
    CUfunction fn[NKERN];
    size_t poff[NKERN][5], psize[NKERN];
    int home[MAX_BUF];             /* the stream that mostly writes each buffer */
    op body[MAX_BODY];
    int nbody;

    /* knobs from the seed */
    int sync_every, sync_kind, sync_stream, p_othersync, p_skipsync;
    int p_long, long_min, long_max;
    int p_shape, check_every, p_hostfn, p_query, p_alloc, p_rewrite, p_memset_vary;
    int p_churn;                   /* an event destroyed and made anew (often: same handle) */

    /* progress */
    long ops, nops, iter, syncs, host_fns, churns, stream_churns;

    /* ordering: cnt[s] ops submitted to s; known[s][t]: s is ordered after the first
     * known[s][t] ops of t; host[t]: the host has waited for the first host[t] ops;
     * lw / la[b][t]: position on t of t's last write / access of buffer b */
    long cnt[MAX_STREAMS], known[MAX_STREAMS][MAX_STREAMS], host[MAX_STREAMS];
    long lw[MAX_BUF][MAX_STREAMS], la[MAX_BUF][MAX_STREAMS];
} fuzz;

static uint64_t rnd(uint64_t *s)      /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int pick(uint64_t *s, int n)   /* 0 .. n-1 */
{
    return (int)(rnd(s) % (uint64_t)n);
}

static int range(uint64_t *s, int lo, int hi)
{
    return lo + pick(s, hi - lo + 1);
}

static int chance(uint64_t *s, int one_in)   /* one_in <= 0: never */
{
    return one_in > 0 && pick(s, one_in) == 0;
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}

static CUstream handle(const fuzz *f, int s, int alias)
{
    if (f->legacy && s == f->ns - 1)
        return alias ? CU_STREAM_LEGACY : NULL;
    return f->st[s];
}

static int is_dev(int b)
{
    return b < MAX_DEV;
}

static CUdeviceptr bufptr(const fuzz *f, int b)
{
    return is_dev(b) ? f->dev[b] : (CUdeviceptr)(uintptr_t)f->pin[b - MAX_DEV];
}

/* A random buffer (noevents: one of stream s's own, and other than not). */
static int rand_buf(fuzz *f, uint64_t *r, int first, int n, int s, int not)
{
    int cand[MAX_BUF], k = 0;
    for (int b = first; b < first + n; b++)
        if (b != not && (!f->noevents || f->home[b] == s))
            cand[k++] = b;
    if (!k) {
        fprintf(stderr, "engine_fuzz: no buffer for stream %d\n", s);
        exit(3);
    }
    return cand[pick(r, k)];
}

static int rand_dev(fuzz *f, uint64_t *r, int s)
{
    return rand_buf(f, r, 0, f->nd, s, -1);
}

static int other_dev(fuzz *f, uint64_t *r, int s, int not)
{
    return rand_buf(f, r, 0, f->nd, s, not);
}

static int rand_pin(fuzz *f, uint64_t *r, int s)
{
    return rand_buf(f, r, MAX_DEV, f->np, s, -1);
}

/* ---- ordering */

static void host_learned(fuzz *f)
{
    for (int s = 0; s < f->ns; s++)
        for (int t = 0; t < f->ns; t++)
            if (f->known[s][t] < f->host[t])
                f->known[s][t] = f->host[t];
}

static void submitted(fuzz *f, int s)
{
    f->cnt[s]++;
    f->known[s][s] = f->cnt[s];
    f->ops++;
}

static CUevent next_event(fuzz *f)
{
    return f->ev[f->ev_used++ % NEVENTS];
}

/* Event record on t, wait on s: s is then ordered after everything t was. */
static void fork_join(fuzz *f, int t, int s, int alias_t, int alias_s)
{
    CUevent e = next_event(f);
    CK(cuEventRecord(e, handle(f, t, alias_t)));
    submitted(f, t);
    CK(cuStreamWaitEvent(handle(f, s, alias_s), e, 0));
    submitted(f, s);
    for (int u = 0; u < f->ns; u++)
        if (f->known[s][u] < f->known[t][u])
            f->known[s][u] = f->known[t][u];
}

/* Before an op on s reading buffer r (or -1) and writing w. */
static void order_before(fuzz *f, int s, int r, int w)
{
    for (int t = 0; t < f->ns; t++) {
        long need = 0;
        if (t == s)
            continue;
        if (r >= 0 && f->lw[r][t] > need)
            need = f->lw[r][t];
        if (w >= 0 && f->la[w][t] > need)
            need = f->la[w][t];
        if (need <= f->known[s][t])
            continue;
        if (f->noevents) {
            fprintf(stderr, "engine_fuzz: noevents program needs a join (bug)\n");
            exit(3);
        }
        fork_join(f, t, s, 0, 0);
    }
}

static void access_after(fuzz *f, int s, int r, int w)
{
    submitted(f, s);
    if (r >= 0)
        f->la[r][s] = f->cnt[s];
    if (w >= 0)
        f->lw[w][s] = f->la[w][s] = f->cnt[s];
}

/* ---- generation */

static void gen_kernel(fuzz *f, uint64_t *r, op *o, int s)
{
    static const int pref[NKERN] = { D_PARAMS, D_PARAMS, D_EXTRA, D_EX };
    static const unsigned blocks[] = { 32, 64, 128, 256 };
    o->kern = pick(r, NKERN);
    o->door = chance(r, 4) ? pick(r, NDOORS) : pref[o->kern];
    o->buf[0] = rand_dev(f, r, s);
    o->buf[1] = o->kern == K_STENCIL ? other_dev(f, r, s, o->buf[0]) : rand_dev(f, r, s);
    o->alt[0] = o->alt[1] = -1;
    if (chance(r, 3)) {                    /* ping-pong */
        if (o->buf[0] != o->buf[1] && chance(r, 2)) {
            o->alt[0] = o->buf[1];
            o->alt[1] = o->buf[0];
        } else {
            int i = pick(r, 2);
            o->alt[i] = rand_dev(f, r, s);
            if (o->kern == K_STENCIL && o->alt[i] == o->buf[!i])
                o->alt[i] = -1;
        }
    }
    o->s32 = (uint32_t)rnd(r);
    o->s64 = rnd(r);
    o->vary = chance(r, 2);
    o->block = blocks[pick(r, 4)];
    o->grid = (unsigned)range(r, 1, 4);
    o->smem = chance(r, 4) ? 128u * (unsigned)range(r, 1, 8) : 0;
    o->n = range(r, 1, NELEM);
}

static void gen_op(fuzz *f, uint64_t *r, op *o)
{
    int x = pick(r, f->noevents ? 18 : 20), s = pick(r, f->ns);
    memset(o, 0, sizeof *o);
    o->legacy_alias = chance(r, 3);
    if (x < 10) {
        o->type = OP_KERNEL;
        gen_kernel(f, r, o, s);
    } else if (x < 13) {
        static const int elems[] = { 1, 2, 4 };
        o->type = OP_MEMSET;
        o->elem = elems[pick(r, 3)];
        o->buf[0] = rand_dev(f, r, s);
        o->doff = (size_t)pick(r, NELEM / 2);
        o->count = (size_t)range(r, 1, NELEM - (int)o->doff);
        o->value = (uint32_t)rnd(r);
        o->vary = chance(r, f->p_memset_vary);   /* a value that changes every time */
    } else if (x < 18) {
        o->type = OP_COPY;
        o->ckind = pick(r, 3);
        o->generic = chance(r, 3);
        if (o->ckind == C_DTOD) {
            o->buf[0] = rand_dev(f, r, s);
            o->buf[1] = other_dev(f, r, s, o->buf[0]);
        } else if (o->ckind == C_HTOD) {
            o->buf[0] = rand_dev(f, r, s);
            o->buf[1] = rand_pin(f, r, s);
        } else {
            o->buf[0] = rand_pin(f, r, s);
            o->buf[1] = rand_dev(f, r, s);
        }
        o->doff = (size_t)pick(r, NELEM / 2);
        o->soff = (size_t)pick(r, NELEM / 2);
        o->count = (size_t)range(r, 1, NELEM / 2);
    } else {
        o->type = OP_FORK;
        o->stream = s;
        o->stream2 = (o->stream + range(r, 1, f->ns - 1)) % f->ns;
        return;
    }
    /* mostly on the stream that owns the written buffer: fewer cross-stream joins
     * (noevents: always, and every buffer of the op is that stream's) */
    o->stream = f->noevents ? s : chance(r, 4) ? pick(r, f->ns) : f->home[o->buf[0]];
}

static void describe(int i, const op *o)
{
    static const char *ck[] = { "DtoD", "HtoD", "DtoH" };
    fprintf(stderr, "  %2d: stream %d: ", i, o->stream);
    switch (o->type) {
    case OP_KERNEL:
        fprintf(stderr, "kernel %s door=%s buf=%d,%d alt=%d,%d vary=%d grid=%u block=%u "
                "smem=%u n=%d\n", kern_name[o->kern], door_name[o->door], o->buf[0],
                o->buf[1], o->alt[0], o->alt[1], o->vary, o->grid, o->block, o->smem, o->n);
        break;
    case OP_MEMSET:
        fprintf(stderr, "memset%d buf=%d off=%zu count=%zu value=%08" PRIx32 " vary=%d\n",
                o->elem * 8, o->buf[0], o->doff, o->count, o->value, o->vary);
        break;
    case OP_COPY:
        fprintf(stderr, "copy %s%s dst=%d+%zu src=%d+%zu count=%zu\n", ck[o->ckind],
                o->generic ? " (cuMemcpyAsync)" : "", o->buf[0], o->doff, o->buf[1], o->soff,
                o->count);
        break;
    default:
        fprintf(stderr, "fork/join -> stream %d\n", o->stream2);
    }
}

static void generate(fuzz *f)
{
    uint64_t *r = &f->gen;
    f->ncreated = f->noevents ? 2 : range(r, 2, 4);
    f->legacy = chance(r, 3);
    f->p_memset_vary = chance(r, 4) ? 3 : 0;
    f->ns = f->ncreated + f->legacy;
    f->nd = f->noevents ? MAX_DEV : range(r, 4, MAX_DEV);
    f->np = f->noevents ? MAX_PIN : range(r, 2, MAX_PIN);
    f->nbody = range(r, 4, MAX_BODY);
    for (int b = 0; b < MAX_BUF; b++)      /* noevents: >= 2 device, 1 pinned each */
        f->home[b] = f->noevents ? (b < MAX_DEV ? b : b - MAX_DEV) % f->ns : pick(r, f->ns);
    for (int i = 0; i < f->nbody; i++)
        gen_op(f, r, &f->body[i]);

    f->sync_every = chance(r, 4) ? range(r, 2, 5) : 1;
    f->sync_kind = pick(r, f->noevents ? 2 : 3);
    f->sync_stream = pick(r, f->ns);
    f->p_othersync = chance(r, 2) ? range(r, 4, 16) : 0;
    f->p_skipsync = chance(r, 4) ? range(r, 6, 20) : 0;
    f->p_long = chance(r, 3) ? range(r, 10, 40) : 0;
    f->long_min = range(r, 4, 10);
    f->long_max = f->long_min + range(r, 0, 30);
    f->p_shape = chance(r, 2) ? range(r, 8, 40) : 0;
    f->check_every = chance(r, 3) ? 0 : range(r, 5, 60);
    f->p_hostfn = chance(r, 4) ? range(r, 10, 50) : 0;
    f->p_query = chance(r, 4) ? range(r, 10, 50) : 0;
    f->p_alloc = chance(r, 5) ? range(r, 20, 80) : 0;
    f->p_rewrite = range(r, 1, 3);
    f->p_churn = f->noevents || chance(r, 2) ? 0 : range(r, 1, 6);
}

/* ---- emission */

static void launch(fuzz *f, const op *o, int s, unsigned grid, void **params)
{
    CUstream h = handle(f, s, o->legacy_alias);
    CUfunction fn = f->fn[o->kern];
    unsigned char buf[64];
    size_t size = f->psize[o->kern];
    CUlaunchAttribute attr = { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .value.priority = 0 };
    CUlaunchConfig cfg = { .gridDimX = grid, .gridDimY = 1, .gridDimZ = 1,
                           .blockDimX = o->block, .blockDimY = 1, .blockDimZ = 1,
                           .sharedMemBytes = o->smem, .hStream = h,
                           .attrs = o->legacy_alias ? &attr : NULL,
                           .numAttrs = o->legacy_alias ? 1 : 0 };

    switch (o->door) {
    case D_EXTRA: {
        void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
                          &size, CU_LAUNCH_PARAM_END };
        memset(buf, 0, sizeof buf);
        for (int i = 0; i < kern_np[o->kern]; i++)
            memcpy(buf + f->poff[o->kern][i], params[i], kern_sizes[o->kern][i]);
        CK(cuLaunchKernel(fn, grid, 1, 1, o->block, 1, 1, o->smem, h, NULL, extra));
        break;
    }
    case D_EX:
        CK(cuLaunchKernelEx(&cfg, fn, params, NULL));
        break;
    case D_PTSZ:      /* a 0 stream would be the per-thread stream here */
        CK(cuLaunchKernel_ptsz(fn, grid, 1, 1, o->block, 1, 1, o->smem,
                               h ? h : CU_STREAM_LEGACY, params, NULL));
        break;
    case D_EX_PTSZ:
        if (!cfg.hStream)
            cfg.hStream = CU_STREAM_LEGACY;
        CK(cuLaunchKernelEx_ptsz(&cfg, fn, params, NULL));
        break;
    default:
        CK(cuLaunchKernel(fn, grid, 1, 1, o->block, 1, 1, o->smem, h, params, NULL));
    }
}

/* regrid: this iteration uses another grid (a shape perturbation). */
static void emit_kernel(fuzz *f, const op *o, int regrid)
{
    int odd = (int)(f->iter & 1), s = o->stream;
    int b0 = odd && o->alt[0] >= 0 ? o->alt[0] : o->buf[0];
    int b1 = odd && o->alt[1] >= 0 ? o->alt[1] : o->buf[1];
    uint32_t it = (uint32_t)f->iter;
    uint32_t a = o->s32 + (o->vary ? it * 2654435761u : 0);
    uint64_t b = o->s64 ^ (o->vary ? (uint64_t)it << 21 : 0);
    uint8_t tag = (uint8_t)(a >> 5);
    uint16_t shift = (uint16_t)(a >> 11);
    coef4 c = { { (int32_t)(a & 7) - 3, (int32_t)((a >> 3) & 7) + 1, (int32_t)((a >> 6) & 7) - 2 },
                (a >> 9) & 7 };
    float w = (float)((a >> 12) % 13) * 0.25f;
    int n = o->n;
    CUdeviceptr y = f->dev[b0], x = f->dev[b1];
    unsigned grid = regrid ? (o->grid % 4) + 1 + (o->grid == 3) : o->grid;
    if ((o->s32 & 7) == 0)           /* grows: another grid every iteration */
        grid = 1 + (o->grid + it) % 4;
    void *p_axpb[] = { &y, &x, &a, &b, &n };
    void *p_reduce[] = { &y, &x, &n, &tag };
    void *p_mix[] = { &y, &x, &a, &shift, &n };
    void *p_stencil[] = { &y, &x, &c, &w, &n };
    void **params[NKERN] = { p_axpb, p_reduce, p_mix, p_stencil };

    order_before(f, s, b1, b0);
    launch(f, o, s, grid, params[o->kern]);
    access_after(f, s, b1, b0);
}

/* The element count of a memset or copy this iteration: one in 3 halve theirs every
 * other iteration (a size the engine patches, as it does launch sizes). */
static size_t op_count(const fuzz *f, const op *o)
{
    return o->count % 3 == 0 && f->iter % 2 ? (o->count + 1) / 2 : o->count;
}

static void emit_memset(fuzz *f, const op *o)
{
    int s = o->stream;
    CUstream h = handle(f, s, o->legacy_alias);
    uint32_t v = o->value + (o->vary ? (uint32_t)f->iter : 0);
    CUdeviceptr p = f->dev[o->buf[0]] + o->doff * 4;
    order_before(f, s, -1, o->buf[0]);
    size_t count = op_count(f, o);
    if (o->elem == 1)
        CK(cuMemsetD8Async(p, (unsigned char)v, count * 4, h));
    else if (o->elem == 2)
        CK(cuMemsetD16Async(p, (unsigned short)v, count * 2, h));
    else
        CK(cuMemsetD32Async(p, v, count, h));
    access_after(f, s, -1, o->buf[0]);
}

static void emit_copy(fuzz *f, const op *o)
{
    int s = o->stream;
    CUstream h = handle(f, s, o->legacy_alias);
    CUdeviceptr d = bufptr(f, o->buf[0]) + o->doff * 4, src = bufptr(f, o->buf[1]) + o->soff * 4;
    size_t bytes = op_count(f, o) * 4;
    order_before(f, s, o->buf[1], o->buf[0]);
    if (o->generic)
        CK(cuMemcpyAsync(d, src, bytes, h));
    else if (o->ckind == C_DTOD)
        CK(cuMemcpyDtoDAsync(d, src, bytes, h));
    else if (o->ckind == C_HTOD)
        CK(cuMemcpyHtoDAsync(d, (const void *)(uintptr_t)src, bytes, h));
    else
        CK(cuMemcpyDtoHAsync((void *)(uintptr_t)d, src, bytes, h));
    access_after(f, s, o->buf[1], o->buf[0]);
}

static void emit(fuzz *f, const op *o, int regrid)
{
    prog_busy_us(f->pace_us);          /* the program's own time before the call */
    switch (o->type) {
    case OP_KERNEL:
        emit_kernel(f, o, regrid);
        break;
    case OP_MEMSET:
        emit_memset(f, o);
        break;
    case OP_COPY:
        emit_copy(f, o);
        break;
    default:
        fork_join(f, o->stream, o->stream2, o->legacy_alias, !o->legacy_alias);
    }
}

static void on_host(void *user)
{
    (*(long *)user)++;
}

static void sync_stream(fuzz *f, int s)
{
    CK(cuStreamSynchronize(handle(f, s, 0)));
    f->host[s] = f->cnt[s];
    for (int t = 0; t < f->ns; t++)
        if (f->host[t] < f->known[s][t])
            f->host[t] = f->known[s][t];
}

/* One of the pool's events destroyed and made anew, as PyTorch and cuDNN do (every
 * record of it so far was waited on at once: fork_join, end_sync). */
static void churn_event(fuzz *f)
{
    int e = pick(&f->run, NEVENTS);
    CK(cuEventDestroy(f->ev[e]));
    CK(cuEventCreate(&f->ev[e], CU_EVENT_DISABLE_TIMING));
    f->churns++;
}

/* Created stream s, with its flags, through cuStreamCreateWithPriority or cuStreamCreate
 * (noevents programs never call the latter). */
static void create_stream(fuzz *f, int s, int with_priority)
{
    if (with_priority)
        CK(cuStreamCreateWithPriority(&f->st[s], f->st_flags[s], 0));
    else
        CK(cuStreamCreate(&f->st[s], f->st_flags[s]));
}

/* One of the created streams destroyed and made anew with its flags, once the host has
 * waited for its work (sync_stream): every order it had is then the host's, so the new
 * stream starts with nothing to wait for. */
static void churn_stream(fuzz *f)
{
    int s = pick(&f->run, f->ncreated);
    sync_stream(f, s);
    CK(cuStreamDestroy(f->st[s]));
    create_stream(f, s, f->noevents);
    f->stream_churns++;
}

/* A flush point inside an iteration: host function, query, allocation or an event
 * made anew. */
static void interlude(fuzz *f)
{
    uint64_t *r = &f->run;
    int s = pick(r, f->ns);
    if (chance(r, f->p_hostfn)) {
        CK(cuLaunchHostFunc(handle(f, s, 0), on_host, &f->host_fns));
        submitted(f, s);
    }
    if (chance(r, f->p_query)) {
        CUresult rc = f->noevents || chance(r, 2) ? cuStreamQuery(handle(f, s, 0))
                                   : cuEventQuery(f->ev[pick(r, NEVENTS)]);
        if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY) {
            fprintf(stderr, "query failed: %d\n", (int)rc);
            exit(1);
        }
    }
    if (chance(r, f->p_alloc)) {       /* scratch buffer: fill, copy out, sync, free */
        CUdeviceptr tmp;
        int b = rand_dev(f, r, s);
        CK(cuMemAlloc(&tmp, NELEM * 4));
        order_before(f, s, -1, b);
        CK(cuMemsetD32Async(tmp, (unsigned)f->iter, NELEM, handle(f, s, 0)));
        submitted(f, s);
        CK(cuMemcpyDtoDAsync(f->dev[b], tmp, NELEM * 2, handle(f, s, 0)));
        access_after(f, s, -1, b);
        sync_stream(f, s);
        host_learned(f);
        CK(cuMemFree(tmp));
    }
    if (chance(r, 4 * f->p_churn))
        churn_event(f);
}

static void iteration(fuzz *f)
{
    uint64_t *r = &f->run;
    int skip = -1, extra_at = -1, regrid = -1;
    op extra;

    f->ev_used = 0;
    if (chance(r, f->p_shape)) {
        int what = pick(r, 3), at = pick(r, f->nbody);
        if (what == 0)
            skip = at;
        else if (what == 1)
            extra_at = at, gen_op(f, r, &extra);
        else
            regrid = at;
    }
    for (int i = 0; i < f->nbody && f->ops < f->nops; i++) {
        if (i == extra_at)
            emit(f, &extra, 0);
        if (i != skip)
            emit(f, &f->body[i], i == regrid);
        if (i == f->nbody / 2 && (f->p_hostfn || f->p_query || f->p_alloc || f->p_churn))
            interlude(f);
    }
}

static void sync_all(fuzz *f)
{
    CK(cuCtxSynchronize());
    memcpy(f->host, f->cnt, sizeof f->host);
}

static void end_sync(fuzz *f)
{
    uint64_t *r = &f->run;
    int kind = f->sync_kind, s = f->sync_stream;
    if (chance(r, f->p_othersync))
        kind = pick(r, f->noevents ? 2 : 3), s = pick(r, f->ns);
    if (kind == SYNC_CTX) {
        sync_all(f);
    } else if (kind == SYNC_STREAM) {
        sync_stream(f, s);
    } else {
        CUevent e = next_event(f);
        CK(cuEventRecord(e, handle(f, s, 1)));
        submitted(f, s);
        CK(cuEventSynchronize(e));
        f->host[s] = f->cnt[s];
        for (int t = 0; t < f->ns; t++)
            if (f->host[t] < f->known[s][t])
                f->host[t] = f->known[s][t];
    }
    host_learned(f);
    f->syncs++;
    if (chance(r, f->p_churn))
        churn_event(f);
    if (chance(r, f->p_stream_churn)) {          /* 0: never, and no draw */
        churn_stream(f);
        host_learned(f);
    }
}

/* After a context sync: synchronous copies back, checksums on stdout, new inputs. */
static void host_check(fuzz *f, const char *what)
{
    uint32_t h[NELEM];
    sync_all(f);
    host_learned(f);
    for (int b = 0; b < f->nd; b++) {
        CK(cuMemcpyDtoH(h, f->dev[b], sizeof h));
        printf("%s iter=%ld ops=%ld dev%d fnv=%016" PRIx64 "\n", what, f->iter, f->ops, b,
               fnv(h, sizeof h));
    }
    for (int p = 0; p < f->np; p++)
        printf("%s iter=%ld ops=%ld pin%d fnv=%016" PRIx64 "\n", what, f->iter, f->ops, p,
               fnv(f->pin[p], NELEM * 4));
}

static void rewrite_inputs(fuzz *f)
{
    uint64_t *r = &f->run;
    for (int p = 0; p < f->np; p++)
        if (chance(r, f->p_rewrite))
            for (int i = 0; i < NELEM; i++)
                f->pin[p][i] = (uint32_t)rnd(r);
    if (chance(r, 3)) {                /* a synchronous upload too */
        uint32_t h[NELEM];
        for (int i = 0; i < NELEM; i++)
            h[i] = (uint32_t)(f->iter * 977 + i);
        CK(cuMemcpyHtoD(f->dev[pick(r, f->nd)], h, sizeof h));
    }
}

static void setup(fuzz *f)
{
    CUcontext ctx;
    CUdevice dev;
    uint64_t *r = &f->gen;

    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    for (int k = 0; k < NKERN; k++)
        if (sim_register_kernel_aligned(kern_name[k], kern_fn[k], kern_np[k], kern_sizes[k],
                                        kern_aligns[k])) {
            fprintf(stderr, "kernel registration failed\n");
            exit(1);
        }
    CK(cuModuleLoadData(&f->mod, "sim-module"));
    for (int k = 0; k < NKERN; k++) {
        size_t off = 0, size = 0;
        CK(cuModuleGetFunction(&f->fn[k], f->mod, kern_name[k]));
        for (int i = 0; i < kern_np[k]; i++) {
            CK(cuFuncGetParamInfo(f->fn[k], (size_t)i, &off, &size));
            f->poff[k][i] = off;
        }
        f->psize[k] = off + size;
    }
    /* stream 0 blocking, stream 1 non-blocking, the others either */
    for (int s = 0; s < f->ncreated; s++) {
        f->st_flags[s] = s == 0 ? CU_STREAM_DEFAULT
                         : s == 1 || chance(r, 2) ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
        create_stream(f, s, f->noevents || chance(r, 3));
    }
    for (int e = 0; e < NEVENTS && !f->noevents; e++)
        CK(cuEventCreate(&f->ev[e], CU_EVENT_DISABLE_TIMING));
    for (int b = 0; b < f->nd; b++) {
        uint32_t h[NELEM];
        for (int i = 0; i < NELEM; i++)
            h[i] = (uint32_t)rnd(r);
        CK(cuMemAlloc(&f->dev[b], NELEM * 4));
        CK(cuMemcpyHtoD(f->dev[b], h, sizeof h));
    }
    for (int p = 0; p < f->np; p++) {
        void *hp;
        CK(cuMemAllocHost(&hp, NELEM * 4));
        f->pin[p] = hp;
        for (int i = 0; i < NELEM; i++)
            f->pin[p][i] = (uint32_t)rnd(r);
    }
    f->device = dev;
}

static void teardown(fuzz *f)
{
    for (int b = 0; b < f->nd; b++)
        CK(cuMemFree(f->dev[b]));
    for (int p = 0; p < f->np; p++)
        CK(cuMemFreeHost(f->pin[p]));
    for (int e = 0; e < NEVENTS && !f->noevents; e++)
        CK(cuEventDestroy(f->ev[e]));
    for (int s = 0; s < f->ncreated; s++)
        CK(cuStreamDestroy(f->st[s]));
    CK(cuModuleUnload(f->mod));
    CK(cuDevicePrimaryCtxRelease(f->device));
}

int main(int argc, char **argv)
{
    static fuzz f;
    unsigned long long seed;
    long nops;
    const char *dump = getenv("ENGINE_FUZZ_DUMP"), *pace = getenv("ENGINE_FUZZ_PACE_US");
    const char *stream_churn = getenv("ENGINE_FUZZ_STREAM_CHURN");
    int since_sync = 0, long_left = 0;

    if (argc < 3 || argc > 4 || sscanf(argv[1], "%llu", &seed) != 1 ||
        sscanf(argv[2], "%ld", &nops) != 1 || nops < 1 ||
        (argc == 4 && strcmp(argv[3], "noevents"))) {
        fprintf(stderr, "usage: engine_fuzz SEED NOPS [noevents]\n");
        return 2;
    }
    f.noevents = argc == 4;
    f.gen = seed * 0x9e3779b97f4a7c15ULL + 1;
    f.run = seed ^ 0x5851f42d4c957f2dULL;
    f.nops = nops;
    f.pace_us = pace ? atoi(pace) : 0;
    f.p_stream_churn = stream_churn ? atoi(stream_churn) : 0;
    generate(&f);
    setup(&f);

    printf("engine_fuzz seed=%llu nops=%ld%s streams=%d%s nonblocking=", seed, nops,
           f.noevents ? " noevents" : "", f.ncreated, f.legacy ? "+legacy" : "");
    for (int s = 0; s < f.ncreated; s++)
        printf("%d", f.st_flags[s] == CU_STREAM_NON_BLOCKING);
    printf(" dev=%d pinned=%d body=%d sync=%d/%d every=%d other=%d skip=%d long=%d:%d-%d "
           "shape=%d check=%d hostfn=%d query=%d alloc=%d churn=%d\n", f.nd, f.np, f.nbody,
           f.sync_kind, f.sync_stream, f.sync_every, f.p_othersync, f.p_skipsync, f.p_long,
           f.long_min, f.long_max, f.p_shape, f.check_every, f.p_hostfn, f.p_query,
           f.p_alloc, f.p_churn);
    if (dump && *dump && strcmp(dump, "0")) {
        fprintf(stderr, "engine_fuzz seed=%llu: body of %d ops (stream %d is %s)\n", seed,
                f.nbody, f.ns - 1, f.legacy ? "the legacy stream" : "created");
        for (int i = 0; i < f.nbody; i++)
            describe(i, &f.body[i]);
    }

    while (f.ops < f.nops) {
        iteration(&f);
        f.iter++;
        if (long_left > 0) {                       /* a long run without any sync */
            if (--long_left > 0)
                continue;
            end_sync(&f);
        } else if (chance(&f.run, f.p_long)) {
            long_left = range(&f.run, f.long_min, f.long_max);
            continue;
        } else if (++since_sync >= f.sync_every && !chance(&f.run, f.p_skipsync)) {
            since_sync = 0;
            end_sync(&f);
        }
        if (f.check_every && f.iter % f.check_every == 0) {
            host_check(&f, "check");
            rewrite_inputs(&f);
        }
    }
    host_check(&f, "final");
    printf("engine_fuzz: seed=%llu ops=%ld iterations=%ld syncs=%ld host_fns=%ld "
           "events_made_anew=%ld", seed, f.ops, f.iter, f.syncs, f.host_fns, f.churns);
    if (f.p_stream_churn)
        printf(" streams_made_anew=%ld", f.stream_churns);
    putchar('\n');
    teardown(&f);
    return 0;
}
