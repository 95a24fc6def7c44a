/* introspect.c -- a repeating two-stream workload that uses include/autograph.h with
 * AUTOGRAPH_OPTIONAL, so that it runs unchanged with and without the shim
 * (tests/bats/introspect_sim.bats).
 *
 *   introspect ITER [api] [alternate] [long]
 *
 * Each iteration: on s1 add_one(a), scale(p or q by -1: the buffers alternate, so
 * graphs get a second variant), event record; s2 waits for it, add_one(b), memset(c); s1
 * saxpy; both streams synchronized.  `alternate`: blocks of 4 iterations alternate
 * between two launch configurations and, in the second, one more add_one(a) launch
 * (two templates that take turns: a launch size alone is patched, not another
 * template).  `long`: 100
 * more add_one launches on s1 per iteration (graphs of over 1 MiB, estimated).
 * stdout: the buffers' sums, the same with and without the shim.
 *
 * `api`: hooks count capture ends and instantiations, and each instantiation's
 * graph data is written to $INTROSPECT_API_DIR/n<seq>-t<T>-c<C>-v<V>.json; after the
 * first ITER iterations the graphs are listed ("api: graph ..." lines), every
 * executable is looked up and every chunk dumped as DOT there; then 3 iterations
 * disabled, 3 enabled, a flush in the middle of one, a reset, ITER more.  The hooks
 * also call the driver (cuGraphGetNodes, cuStreamQuery: a call the shim flushes at,
 * which inside a hook must go straight to the driver).  Results go to stderr as
 * "api: <what> <value>" lines ("api: not loaded" without the shim).
 */
#define AUTOGRAPH_OPTIONAL
#include <autograph.h>

#include "prog.h"

#include <string.h>

static CUfunction add_one, scale, saxpy;
static CUstream s1, s2;
static CUevent ev;
static CUdeviceptr a, b, c, p, q, x, y;
static int n = PROG_N, captures, instantiations, saved, extra, hook_nodes, hook_queries;
static const char *api_dir;

static void iteration(int it, int alternate, int flush_inside)
{
    int factor = -1, shape = alternate && (it / 4) % 2 ? 2 : 1;
    float alpha = 0.5f;
    CUdeviceptr scaled = it % 2 ? q : p;
    void *a_args[] = { &a, &n }, *b_args[] = { &b, &n };
    void *s_args[] = { &scaled, &factor, &n }, *x_args[] = { &alpha, &x, &y, &n };

    for (int k = 0; k < extra; k++)
        CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s1, a_args, NULL));

    CK(cuLaunchKernel(add_one, shape, 1, 1, PROG_N, 1, 1, 0, s1, a_args, NULL));
    if (shape == 2)
        CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s1, a_args, NULL));
    CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, s1, s_args, NULL));
    CK(cuEventRecord(ev, s1));
    if (flush_inside)
        fprintf(stderr, "api: flush %d\n", autograph_flush());
    CK(cuStreamWaitEvent(s2, ev, 0));
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s2, b_args, NULL));
    CK(cuMemsetD32Async(c, (unsigned)it & 1, PROG_N, s2));
    CK(cuLaunchKernel(saxpy, shape, 1, 1, PROG_N, 1, 1, 0, s1, x_args, NULL));
    CK(cuStreamSynchronize(s1));
    CK(cuStreamSynchronize(s2));
}

static void save_graph_data(const autograph_graph_event *e)
{
    char path[512];
    int len = autograph_graph_data(e->template_id, e->chunk, e->variant, NULL, 0);
    char *json = len > 0 ? malloc((size_t)len + 1) : NULL;
    FILE *f;
    if (json == NULL || autograph_graph_data(e->template_id, e->chunk, e->variant, json,
                                             (size_t)len + 1) != len) {
        fprintf(stderr, "api: graph_data failed %d\n", len);
        free(json);
        return;
    }
    snprintf(path, sizeof path, "%s/n%d-t%u-c%d-v%d.json", api_dir, saved++, e->template_id,
             e->chunk, e->variant);
    if ((f = fopen(path, "w")) != NULL) {
        fputs(json, f);
        fclose(f);
    }
    free(json);
}

static void on_capture(const autograph_graph_event *e, void *user)
{
    size_t nodes = 0;
    (void)user;
    captures += e->graph != NULL && e->exec == NULL && e->variant == -1;
    if (cuGraphGetNodes((CUgraph)e->graph, NULL, &nodes) == CUDA_SUCCESS)
        hook_nodes += (int)nodes;
}

static void on_instantiate(const autograph_graph_event *e, void *user)
{
    (void)user;
    instantiations += e->exec != NULL;
    hook_queries += cuStreamQuery(s2) == CUDA_SUCCESS;
    if (api_dir)
        save_graph_data(e);
}

/* Lists the graphs, looks every executable up, dumps every chunk. */
static void report_graphs(void)
{
    autograph_graph_info info[64];
    int count = autograph_list_graphs(info, 64), found = 0, variants = 0;
    char path[512];
    fprintf(stderr, "api: graphs %d\n", count);
    for (int i = 0; i < count && i < 64; i++) {
        fprintf(stderr, "api: graph template %u chunk %d/%d ops %d kernels %d variants %d "
                "replays %llu\n", info[i].template_id, info[i].chunk, info[i].nchunks,
                info[i].ops, info[i].kernels, info[i].variants, info[i].replays);
        for (int v = 0; v < info[i].variants; v++) {
            void *exec = NULL;
            variants++;
            found += autograph_graph_exec(info[i].template_id, info[i].chunk, v, &exec) ==
                         AUTOGRAPH_OK && exec;
        }
        snprintf(path, sizeof path, "%s/t%u-c%d.dot", api_dir, info[i].template_id,
                 info[i].chunk);
        if (api_dir &&
            autograph_debug_dump(info[i].template_id, info[i].chunk, path, 1) != AUTOGRAPH_OK)
            fprintf(stderr, "api: debug_dump failed\n");
    }
    fprintf(stderr, "api: executables %d of %d\n", found, variants);
}

static void run_api(int iters, int alternate)
{
    autograph_hook_handle h1 = 0, h2 = 0;
    if (autograph_version() == NULL) {
        fprintf(stderr, "api: not loaded (%s)\n", autograph_strerror(autograph_flush()));
        for (int it = 0; it < 2 * iters + 6; it++)
            iteration(it, alternate, 0);
        return;
    }
    fprintf(stderr, "api: version %s\n", autograph_version());
    fprintf(stderr, "api: hooks %d %d\n",
            autograph_register_capture_end_hook(on_capture, NULL, &h1),
            autograph_register_post_instantiate_hook(on_instantiate, NULL, &h2));
    for (int it = 0; it < iters; it++)
        iteration(it, alternate, 0);
    report_graphs();
    fprintf(stderr, "api: disable %d\n", autograph_disable());
    for (int it = iters; it < iters + 3; it++)
        iteration(it, alternate, 0);
    fprintf(stderr, "api: enable %d\n", autograph_enable());
    for (int it = iters + 3; it < iters + 6; it++)
        iteration(it, alternate, it == iters + 4);
    fprintf(stderr, "api: reset %d\n", autograph_reset());
    fprintf(stderr, "api: graphs after reset %d\n", autograph_list_graphs(NULL, 0));
    for (int it = iters + 6; it < 2 * iters + 6; it++)
        iteration(it, alternate, 0);
    fprintf(stderr, "api: capture_end %d\napi: post_instantiate %d\n", captures, instantiations);
    fprintf(stderr, "api: in hooks: nodes %d queries %d\n", hook_nodes, hook_queries);
    int r1 = autograph_remove_hook(h1), r2 = autograph_remove_hook(h2);
    fprintf(stderr, "api: remove %d %d again %d\n", r1, r2, autograph_remove_hook(h2));
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUmodule mod;
    int iters = argc > 1 ? atoi(argv[1]) : 0, use_api = 0, alternate = 0;
    int ha[PROG_N], hb[PROG_N], hc[PROG_N], hp[PROG_N];
    float hx[PROG_N], hy[PROG_N];

    for (int i = 2; i < argc; i++) {
        use_api |= !strcmp(argv[i], "api");
        alternate |= !strcmp(argv[i], "alternate");
        extra = !strcmp(argv[i], "long") ? 100 : extra;
    }
    if (iters <= 0) {
        fprintf(stderr, "usage: introspect ITER [api] [alternate] [long]\n");
        return 2;
    }
    api_dir = getenv("INTROSPECT_API_DIR");
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuModuleGetFunction(&saxpy, mod, "saxpy"));
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr *bufs[] = { &a, &b, &c, &p, &q, &x, &y };
    for (int i = 0; i < 7; i++) {
        CK(cuMemAlloc(bufs[i], PROG_N * 4));
        CK(cuMemsetD32(*bufs[i], i < 5 ? 1 : 0x3f800000u, PROG_N));   /* 1, 1.0f */
    }
    if (use_api)
        run_api(iters, alternate);
    else
        for (int it = 0; it < iters; it++)
            iteration(it, alternate, 0);
    CK(cuMemcpyDtoH(ha, a, sizeof ha));
    CK(cuMemcpyDtoH(hb, b, sizeof hb));
    CK(cuMemcpyDtoH(hc, c, sizeof hc));
    CK(cuMemcpyDtoH(hp, p, sizeof hp));
    CK(cuMemcpyDtoH(hx, x, sizeof hx));
    CK(cuMemcpyDtoH(hy, y, sizeof hy));
    printf("introspect: a=%ld b=%ld c=%ld p=%ld x=%.3f y=%.3f\n", prog_sum_int(ha, PROG_N),
           prog_sum_int(hb, PROG_N), prog_sum_int(hc, PROG_N), prog_sum_int(hp, PROG_N),
           prog_sum_float(hx, PROG_N), prog_sum_float(hy, PROG_N));
    return 0;
}
