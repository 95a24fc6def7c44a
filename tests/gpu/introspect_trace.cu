// introspect_trace.cu -- GPU program of tests/gpu/introspect.bats: a replay traced with
// CUPTI activity records, for the tools_id proof (scripts/tools_id_match.py).
//
//   introspect_trace trace ITERS   CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL is enabled before
//                                  the first CUDA call; the workload runs ITERS times; at
//                                  the end every kernel record is written to $AG_RECORDS
//                                  as "<graphId> <graphNodeId> <name>"
//   introspect_trace plain ITERS   the same workload, no CUPTI in the program (the shim
//                                  then loads CUPTI itself for the ids of its graph data)
//   introspect_trace memcal K M    captures one graph of K kernels, instantiates and
//                                  uploads it M times and prints the device memory that
//                                  took (to check the shim's estimate of 4096 B/node)
//
// Workload, one iteration: on s0 k_heavy(dst <- src), k_affine(dst); event; on s1
// k_heavy(c <- dst), k_affine(c); event; on s0 k_combine(dst, c, src), k_affine(dst);
// cudaStreamSynchronize(s0).  src and dst swap every iteration (ping-pong), so the
// shim's graph gets a second executable (variant).  stdout: hashes of the buffers,
// identical with and without the shim.  stderr: "expected_launches N", and
// "records N graph M dropped D" in trace mode.
//
// Under the shim (include/autograph.h with AUTOGRAPH_OPTIONAL: nothing without it), a
// post-instantiate hook writes, when the variables are set:
//   $AG_API_DIR/n<seq>-t<T>-c<C>-v<V>.json   autograph_graph_data of the new executable
//   $AG_RAW                                  "<exec id> <template graph id> <node id>"
//                                            per template node, CUPTI's raw ids (trace)
#define AUTOGRAPH_OPTIONAL
#include <autograph.h>

#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.cuh"

// CUPTI's kernel record of this toolkit (cupti_activity.h, CUDA 13.0).
typedef CUpti_ActivityKernel10 kernel_record;

// A CUPTI call that must succeed: on an error, say which and exit 2.
static void cupti_must(CUptiResult r, const char *what)
{
    const char *s = NULL;
    if (r == CUPTI_SUCCESS)
        return;
    cuptiGetResultString(r, &s);
    fprintf(stderr, "%s: %s\n", what, s ? s : "?");
    exit(2);
}
#define CUPTI_CK(x) cupti_must((x), #x)

static FILE *g_records;
static unsigned long long g_nrecords, g_ngraph, g_dropped;
static int g_tracing, g_saved;

// --- CUPTI activity buffers ----------------------------------------------------------

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    *size = posix_memalign(&p, 8, 16u << 20) == 0 ? 16u << 20 : 0;
    *buffer = (uint8_t *)p;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    CUpti_Activity *rec = NULL;
    size_t dropped = 0;
    (void)size;
    while (g_records && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        const kernel_record *k = (const kernel_record *)rec;
        fprintf(g_records, "%u %llu %s\n", k->graphId, (unsigned long long)k->graphNodeId,
                k->name ? k->name : "?");
        __atomic_fetch_add(&g_nrecords, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&g_ngraph, k->graphNodeId != 0, __ATOMIC_RELAXED);
    }
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        __atomic_fetch_add(&g_dropped, (unsigned long long)dropped, __ATOMIC_RELAXED);
    free(buffer);
}

static void start_tracing(void)
{
    const char *path = getenv("AG_RECORDS");
    g_records = fopen(path && *path ? path : "/dev/null", "w");
    if (g_records == NULL) {
        fprintf(stderr, "cannot write AG_RECORDS=%s\n", path);
        exit(2);
    }
    CUPTI_CK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    CUPTI_CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    g_tracing = 1;
}

static void stop_tracing(void)
{
    CK(cudaDeviceSynchronize());
    CUPTI_CK(cuptiActivityFlushAll(1));
    fclose(g_records);
    g_records = NULL;                  // records of later kernels are not written
    fprintf(stderr, "records %llu graph %llu dropped %llu\n", g_nrecords, g_ngraph, g_dropped);
}

// --- the post-instantiate hook --------------------------------------------------------

static void save_graph_data(const autograph_graph_event *e, const char *dir)
{
    char path[1024];
    int len = autograph_graph_data(e->template_id, e->chunk, e->variant, NULL, 0);
    char *json = len > 0 ? (char *)malloc((size_t)len + 1) : NULL;
    FILE *f;
    if (json && autograph_graph_data(e->template_id, e->chunk, e->variant, json,
                                     (size_t)len + 1) == len) {
        snprintf(path, sizeof path, "%s/n%d-t%u-c%d-v%d.json", dir, g_saved++, e->template_id,
                 e->chunk, e->variant);
        if ((f = fopen(path, "w")) != NULL) {
            fputs(json, f);
            fclose(f);
        }
    } else {
        fprintf(stderr, "hook: autograph_graph_data: %s\n", autograph_strerror(len));
    }
    free(json);
}

// CUPTI's ids before the shim's remap, for scripts/tools_id_match.py --raw.
static void save_raw_ids(const autograph_graph_event *e, const char *path)
{
    CUgraphNode nodes[1024];
    size_t n = 1024;
    uint32_t graph_id = 0, exec_id = 0;
    FILE *f = fopen(path, "a");
    if (f == NULL || cuGraphGetNodes((CUgraph)e->graph, nodes, &n) != CUDA_SUCCESS ||
        cuptiGetGraphId((CUgraph)e->graph, &graph_id) != CUPTI_SUCCESS ||
        cuptiGetGraphExecId((CUgraphExec)e->exec, &exec_id) != CUPTI_SUCCESS) {
        fprintf(stderr, "hook: raw CUPTI ids unavailable\n");
    } else {
        for (size_t i = 0; i < n && i < 1024; i++) {
            uint64_t id = 0;
            if (cuptiGetGraphNodeId(nodes[i], &id) == CUPTI_SUCCESS)
                fprintf(f, "%u %u 0x%llx\n", exec_id, graph_id, (unsigned long long)id);
        }
    }
    if (f)
        fclose(f);
}

static void on_instantiate(const autograph_graph_event *e, void *user)
{
    const char *dir = getenv("AG_API_DIR"), *raw = getenv("AG_RAW");
    (void)user;
    if (dir && *dir)
        save_graph_data(e, dir);
    if (raw && *raw && g_tracing)
        save_raw_ids(e, raw);
}

// --- the workload -----------------------------------------------------------------------

static const int N = 1 << 16;

static void iteration(int it, unsigned *a, unsigned *b, unsigned *c, cudaStream_t s0,
                      cudaStream_t s1, cudaEvent_t e0, cudaEvent_t e1)
{
    unsigned *src = it % 2 ? a : b, *dst = it % 2 ? b : a;
    int g = (N + 255) / 256;
    KL(k_heavy<<<g, 256, 0, s0>>>(dst, src, N, 1u, 8));
    KL(k_affine<<<g, 256, 0, s0>>>(dst, N, 3u, 1u));
    CK(cudaEventRecord(e0, s0));
    CK(cudaStreamWaitEvent(s1, e0, 0));
    KL(k_heavy<<<g, 256, 0, s1>>>(c, dst, N, 2u, 8));
    KL(k_affine<<<g, 256, 0, s1>>>(c, N, 5u, 7u));
    CK(cudaEventRecord(e1, s1));
    CK(cudaStreamWaitEvent(s0, e1, 0));
    KL(k_combine<<<g, 256, 0, s0>>>(dst, c, src, N));
    KL(k_affine<<<g, 256, 0, s0>>>(dst, N, 7u, 3u));
    CK(cudaStreamSynchronize(s0));
}

static int workload(int iters)
{
    cudaStream_t s0 = new_stream(), s1 = new_stream();
    cudaEvent_t e0 = new_event(), e1 = new_event();
    unsigned *a = dev_u(N, 1u, s0), *b = dev_u(N, 2u, s0), *c = dev_u(N, 3u, s0);
    autograph_hook_handle h = 0;
    int rc = autograph_register_post_instantiate_hook(on_instantiate, NULL, &h);
    fprintf(stderr, "hook: %s\n", autograph_strerror(rc));
    CK(cudaDeviceSynchronize());
    for (int it = 0; it < iters; it++)
        iteration(it, a, b, c, s0, s1, e0, e1);
    CK(cudaDeviceSynchronize());
    print_dev("a", a, N * sizeof *a);
    print_dev("b", b, N * sizeof *b);
    print_dev("c", c, N * sizeof *c);
    if (h)
        autograph_remove_hook(h);
    return 0;
}

// --- memcal: what an executable graph holds on the device -------------------------------

static int memcal(int k, int m)
{
    cudaStream_t s = new_stream();
    unsigned *x = dev_u(N, 5u, s);
    cudaGraph_t graph;
    cudaGraphExec_t *execs = (cudaGraphExec_t *)calloc((size_t)m, sizeof *execs);
    size_t free0, free1, total;
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < k; i++)
        KL(k_affine<<<(N + 255) / 256, 256, 0, s>>>(x, N, 3u, (unsigned)i));
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free0, &total));
    for (int i = 0; i < m; i++) {
        CK(cudaGraphInstantiate(&execs[i], graph, 0));
        CK(cudaGraphUpload(execs[i], s));
    }
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free1, &total));
    printf("memcal: %d executables of %d kernel nodes took %lld bytes of device memory: "
           "%.0f bytes per node (libautograph estimates 4096)\n", m, k,
           (long long)free0 - (long long)free1,
           ((double)free0 - (double)free1) / ((double)m * (double)k));
    for (int i = 0; i < m; i++)
        CK(cudaGraphExecDestroy(execs[i]));
    free(execs);
    return 0;
}

int main(int argc, char **argv)
{
    int iters = 0, k = 0, m = 0;
    g_mode = argc > 1 ? argv[1] : "?";
    if (argc == 3 && !strcmp(argv[1], "trace") && posint(argv[2], &iters)) {
        start_tracing();
        workload(iters);
        stop_tracing();
    } else if (argc == 3 && !strcmp(argv[1], "plain") && posint(argv[2], &iters)) {
        workload(iters);
    } else if (argc == 4 && !strcmp(argv[1], "memcal") && posint(argv[2], &k) &&
               posint(argv[3], &m)) {
        memcal(k, m);
    } else {
        fprintf(stderr, "usage: introspect_trace trace|plain ITERS | memcal K M\n");
        return 1;
    }
    return finish(0);
}
