/* test_introspect.c -- the introspection API of include/autograph.h on the engine with
 * a counting fake backend: hooks (order, events, removal, what a hook may call),
 * graph listing, executables, graph data, DOT dumps, AUTOGRAPH_KEEP_GRAPH (lazy and
 * explicit instantiation), the cache bounds (least recently used eviction),
 * disable / enable / flush / reset, and AUTOGRAPH_DEBUG_DUMP's files.
 *
 * The fake backend counts: every op the program submits must run exactly once,
 * either issued (eagerly, or late from a replay's held ops) or inside a launched
 * executable (issued + launched_ops == submitted after every sync).  The engine's
 * own unit test (test_engine.c) checks the order of that work.
 */
#include "check.h"
#include "engine.h"
#include "engine_internal.h"
#include "report_introspect.h"

#include <autograph.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the fake backend ---------------------------------------------------------- */

struct fake { int n, id; };
static int next_id = 1, issued, launched_ops, submitted, instantiations, live_graphs, live_execs;

static int fake_issue(const struct ag_op *op)
{
    (void)op;
    issued++;
    return 0;
}

static int fake_build(const struct ag_op *ops, int n, int nslots, void **graph, void **nodes)
{
    struct fake *g = calloc(1, sizeof *g);
    (void)ops, (void)nslots;
    g->n = n;
    g->id = next_id++;
    for (int i = 0; i < n; i++)
        nodes[i] = (void *)(intptr_t)(i + 1);
    *graph = g;
    live_graphs++;
    return 0;
}

static int fake_instantiate(void *graph, void **exec)
{
    struct fake *e = calloc(1, sizeof *e);
    e->n = ((struct fake *)graph)->n;
    e->id = next_id++;
    *exec = e;
    live_execs++;
    instantiations++;
    return 0;
}

static int fake_patch(void *exec, void *node, const struct ag_op *op)
{
    (void)exec, (void)node, (void)op;
    return 0;
}

static int fake_launch(void *exec, uintptr_t ctx, const uintptr_t *streams, int nstreams)
{
    (void)ctx, (void)streams, (void)nstreams;
    launched_ops += ((struct fake *)exec)->n;
    return 0;
}

static void fake_release_graph(void *graph, void **nodes, int n)
{
    (void)nodes, (void)n;
    free(graph);
    live_graphs--;
}

static void fake_release_exec(void *exec)
{
    free(exec);
    live_execs--;
}

static int aside;                    /* introspection entries called with the engine aside */

static int fake_dump_dot(void *graph, const char *path, int verbose)
{
    FILE *f = fopen(path, "w");
    aside += !ag_engine_running();
    if (f == NULL)
        return 1;
    fprintf(f, "digraph fake%d { verbose=%d }\n", ((struct fake *)graph)->id, verbose);
    return fclose(f) != 0;
}

static int fake_graph_data(void *graph, void *exec, char **json)
{
    char buf[96];
    aside += !ag_engine_running();
    snprintf(buf, sizeof buf, "{\"exec_graph_id\": %d, \"nodes\": %d}",
             ((struct fake *)exec)->id, ((struct fake *)graph)->n);
    *json = strdup(buf);
    return *json == NULL;
}

static const struct ag_backend fake = {
    .issue = fake_issue, .build = fake_build, .instantiate = fake_instantiate,
    .patch = fake_patch, .launch = fake_launch, .release_graph = fake_release_graph,
    .release_exec = fake_release_exec, .dump_dot = fake_dump_dot,
    .graph_data = fake_graph_data,
};

/* ---- the program ----------------------------------------------------------------- */

static void submit(int fn, uint64_t arg)
{
    unsigned char shape[8] = { (unsigned char)fn, (unsigned char)(fn >> 8) };
    struct ag_op op = {
        .kind = AG_OP_KERNEL, .stream = 0x1000, .ctx = 1, .shape = shape, .shape_len = 8,
        .args = (const unsigned char *)&arg, .args_len = 8, .hash = ag_hash_bytes(7, shape, 8),
    };
    int how;
    submitted++;
    how = ag_engine_offer(&op);
    if (how == AG_HELD)
        return;
    fake_issue(&op);                 /* AG_EAGER, or AG_PASS while disabled */
    if (how == AG_EAGER)
        ag_engine_done(&op, 0);
}

/* `times` windows of `nops` kernels (functions base..base+nops-1), each ended by a sync */
static void windows(int base, int nops, int times)
{
    for (int it = 0; it < times; it++) {
        for (int k = 0; k < nops; k++)
            submit(base + k, (uint64_t)k);
        ag_engine_flush(AG_FLUSH_SYNC);
    }
}

static int all_ran_once(void)
{
    return issued + launched_ops == submitted;
}

static void reset(void)
{
    ag_engine_reset_for_tests();
    issued = launched_ops = submitted = instantiations = 0;
}

static int graph_count(void)
{
    return autograph_list_graphs(NULL, 0);
}

/* ---- hooks ---------------------------------------------------------------------- */

struct seen { int kind; const char *who; autograph_graph_event ev; };
static struct seen seen[64];
static int nseen, listed_in_hook, refused_in_hook, data_in_hook, exec_in_hook;
static autograph_hook_handle self_removing;

static void note(int kind, const autograph_graph_event *ev, void *user)
{
    if (nseen < 64)
        seen[nseen++] = (struct seen){ kind, user, *ev };
}

static void on_capture(const autograph_graph_event *ev, void *user)
{
    note(AG_HOOK_CAPTURE_END, ev, user);
    CHECK(!ag_engine_running());     /* CUDA calls from a hook go straight to the driver */
    listed_in_hook = graph_count();
    refused_in_hook += autograph_flush() == AUTOGRAPH_ERR_IN_HOOK;
    refused_in_hook += autograph_reset() == AUTOGRAPH_ERR_IN_HOOK;
    refused_in_hook += autograph_instantiate(ev->template_id) == AUTOGRAPH_ERR_IN_HOOK;
    refused_in_hook += autograph_disable() == AUTOGRAPH_ERR_IN_HOOK;
}

static void on_instantiate(const autograph_graph_event *ev, void *user)
{
    char buf[128];
    void *exec = NULL;
    note(AG_HOOK_POST_INSTANTIATE, ev, user);
    data_in_hook += autograph_graph_data(ev->template_id, ev->chunk, ev->variant, buf,
                                         sizeof buf) > 0 && strstr(buf, "exec_graph_id");
    exec_in_hook += autograph_graph_exec(ev->template_id, ev->chunk, ev->variant, &exec) ==
                        AUTOGRAPH_OK && exec == ev->exec;
}

static void once_only(const autograph_graph_event *ev, void *user)
{
    note(AG_HOOK_CAPTURE_END, ev, user);
    CHECK(autograph_remove_hook(self_removing) == AUTOGRAPH_OK);
}

static void test_hooks(void)
{
    autograph_hook_handle a, b, c;
    reset();
    nseen = 0;
    CHECK(autograph_register_capture_end_hook(on_capture, "A", &a) == AUTOGRAPH_OK);
    CHECK(autograph_register_post_instantiate_hook(on_instantiate, "P", &b) == AUTOGRAPH_OK);
    CHECK(autograph_register_capture_end_hook(on_capture, "B", &c) == AUTOGRAPH_OK);
    CHECK(a && b && c && a != b && b != c);
    CHECK(autograph_register_capture_end_hook(NULL, NULL, NULL) == AUTOGRAPH_ERR_INVALID);

    windows(0, 12, 4);               /* built at the 2nd window: chunks of 4 and 8 ops */
    CHECK(all_ran_once() && launched_ops == 2 * 12);
    CHECK(nseen == 6);               /* capture A, B, instantiate: per chunk */
    CHECK(seen[0].kind == AG_HOOK_CAPTURE_END && !strcmp(seen[0].who, "A"));
    CHECK(seen[1].kind == AG_HOOK_CAPTURE_END && !strcmp(seen[1].who, "B"));
    CHECK(seen[2].kind == AG_HOOK_POST_INSTANTIATE && seen[2].ev.chunk == 0);
    CHECK(seen[3].ev.chunk == 1 && !strcmp(seen[4].who, "B") && seen[5].ev.chunk == 1);
    CHECK(seen[0].ev.variant == -1 && seen[0].ev.exec == NULL && seen[0].ev.graph != NULL);
    CHECK(seen[2].ev.variant == 0 && seen[2].ev.exec != NULL);
    CHECK(seen[2].ev.graph == seen[0].ev.graph && seen[5].ev.template_id == seen[0].ev.template_id);
    CHECK(listed_in_hook == 2);      /* the template being built, both chunks by then */
    CHECK(refused_in_hook == 4 * 4 && data_in_hook == 2 && exec_in_hook == 2);
    CHECK(aside == 2 && ag_engine_running());  /* the graph data asked for in the hooks */

    CHECK(autograph_remove_hook(c) == AUTOGRAPH_OK);
    CHECK(autograph_remove_hook(c) == AUTOGRAPH_ERR_NOT_FOUND);
    CHECK(autograph_register_capture_end_hook(once_only, "S", &self_removing) == AUTOGRAPH_OK);
    nseen = 0;
    windows(100, 6, 3);              /* one chunk: A, S (removes itself), P */
    CHECK(nseen == 3 && !strcmp(seen[1].who, "S") && seen[2].kind == AG_HOOK_POST_INSTANTIATE);
    nseen = 0;
    windows(200, 6, 3);
    CHECK(nseen == 2 && !strcmp(seen[0].who, "A"));
    CHECK(autograph_remove_hook(a) == AUTOGRAPH_OK && autograph_remove_hook(b) == AUTOGRAPH_OK);
    CHECK(all_ran_once());
}

/* ---- listing, executables, data, DOT ---------------------------------------------- */

static void test_list(void)
{
    autograph_graph_info info[4];
    char buf[16], path[64];
    void *exec = NULL;
    FILE *f;
    reset();
    windows(0, 12, 3);
    CHECK(autograph_list_graphs(info, 4) == 2 && autograph_list_graphs(info, 1) == 2);
    CHECK(autograph_list_graphs(NULL, 1) == AUTOGRAPH_ERR_INVALID);
    CHECK(info[0].chunk == 0 && info[0].nchunks == 2 && info[0].ops == 4 && info[0].kernels == 4);
    CHECK(info[0].variants == 1 && info[0].graph != NULL && info[0].replays == 1);
    CHECK(info[0].mem_bytes == ag_chunk_exec_bytes(4, 4 * 8));
    autograph_list_graphs(info, 4);
    CHECK(info[1].chunk == 1 && info[1].ops == 8 && info[1].template_id == info[0].template_id);

    CHECK(autograph_graph_exec(info[0].template_id, 1, 0, &exec) == AUTOGRAPH_OK && exec);
    CHECK(autograph_graph_exec(info[0].template_id, 1, 1, &exec) == AUTOGRAPH_ERR_NOT_FOUND);
    CHECK(autograph_graph_exec(info[0].template_id, 2, 0, &exec) == AUTOGRAPH_ERR_NOT_FOUND);
    CHECK(autograph_graph_exec(999, 0, 0, &exec) == AUTOGRAPH_ERR_NOT_FOUND);
    CHECK(autograph_graph_exec(info[0].template_id, 0, 0, NULL) == AUTOGRAPH_ERR_INVALID);

    /* as snprintf: the length, and as much as fits */
    CHECK(autograph_graph_data(info[0].template_id, 0, 0, buf, sizeof buf) > (int)sizeof buf);
    CHECK(strlen(buf) == sizeof buf - 1 && !strncmp(buf, "{\"exec_graph_id\"", 15));
    CHECK(autograph_graph_data(info[0].template_id, 0, 0, NULL, 0) > 0);
    CHECK(autograph_graph_data(info[0].template_id, 0, 0, NULL, 4) == AUTOGRAPH_ERR_INVALID);

    snprintf(path, sizeof path, "/tmp/ag_test_introspect_%d.dot", (int)getpid());
    CHECK(autograph_debug_dump(info[0].template_id, 1, path, 1) == AUTOGRAPH_OK);
    CHECK((f = fopen(path, "r")) != NULL && fgets(buf, sizeof buf, f) && !strncmp(buf, "digraph", 7));
    if (f)
        fclose(f);
    unlink(path);
    CHECK(autograph_debug_dump(info[0].template_id, 2, path, 0) == AUTOGRAPH_ERR_NOT_FOUND);
    CHECK(autograph_debug_dump(info[0].template_id, 0, NULL, 0) == AUTOGRAPH_ERR_INVALID);
}

/* ---- AUTOGRAPH_KEEP_GRAPH ---------------------------------------------------------- */

static int post_hooks;
static void on_post(const autograph_graph_event *ev, void *user)
{
    (void)ev, (void)user;
    post_hooks++;
}

static void test_keep_graph(void)
{
    autograph_graph_info info[4];
    autograph_hook_handle h;
    reset();
    post_hooks = 0;
    CHECK(autograph_register_post_instantiate_hook(on_post, NULL, &h) == AUTOGRAPH_OK);
    ag_eng.p.keep_graph = 1;
    windows(0, 12, 2);               /* built, not instantiated */
    CHECK(autograph_list_graphs(info, 4) == 2 && info[0].variants == 0 && info[1].variants == 0);
    CHECK(instantiations == 0 && post_hooks == 0);
    CHECK(autograph_graph_exec(info[0].template_id, 0, 0, &(void *){ NULL }) ==
          AUTOGRAPH_ERR_NOT_FOUND);
    CHECK(autograph_instantiate(info[0].template_id) == AUTOGRAPH_OK);
    CHECK(instantiations == 2 && post_hooks == 2);
    CHECK(autograph_instantiate(info[0].template_id) == AUTOGRAPH_OK);  /* afresh */
    CHECK(instantiations == 4 && post_hooks == 4 && live_execs == 2);
    CHECK(autograph_instantiate(4242) == AUTOGRAPH_ERR_NOT_FOUND);
    windows(0, 12, 2);
    CHECK(all_ran_once() && launched_ops == 2 * 12 && instantiations == 4);

    reset();                         /* lazily, at the first replay of each chunk */
    post_hooks = 0;
    windows(0, 12, 2);
    CHECK(instantiations == 0);
    windows(0, 12, 1);
    CHECK(instantiations == 2 && post_hooks == 2 && all_ran_once() && launched_ops == 12);
    ag_eng.p.keep_graph = 0;
    CHECK(autograph_remove_hook(h) == AUTOGRAPH_OK);
}

/* ---- cache bounds ------------------------------------------------------------------ */

static void test_cache(void)
{
    autograph_graph_info info[8];
    reset();
    ag_eng.p.max_graphs = 1;
    for (int round = 0; round < 3; round++) {
        windows(0, 12, 3);           /* A is built (and B evicted from round 1 on) */
        windows(100, 12, 3);         /* B is built: A, the least recently used, goes */
    }
    CHECK(all_ran_once());
    CHECK(ag_eng.s.evicted == 5 && autograph_list_graphs(info, 8) == 2);
    CHECK(launched_ops == 6 * 12);   /* each build replayed once before its eviction */

    reset();
    ag_eng.p.max_graphs = 0;
    ag_eng.p.max_graph_mb = 1;       /* 21 templates of 12 ops at ~48 KiB each */
    for (int k = 0; k < 30; k++)
        windows(100 * k, 12, 3);
    CHECK(all_ran_once() && ag_eng.s.evicted == 30 - 21);
    CHECK(ag_eng.s.graph_bytes_peak <= (1u << 20) + ag_chunk_exec_bytes(12, 96));
    ag_eng.p.max_graph_mb = 0;

    reset();                         /* the one replayed last is kept, not the older one */
    ag_eng.p.max_graphs = 2;
    windows(0, 12, 3);
    windows(100, 12, 3);
    windows(0, 12, 1);               /* A used after B */
    windows(200, 12, 2);             /* C built: B goes */
    windows(0, 12, 1);
    windows(100, 12, 1);             /* B again: eager (warm-up), no replay */
    CHECK(ag_eng.s.evicted == 1 && launched_ops == 4 * 12 && all_ran_once());
    ag_eng.p.max_graphs = 0;
}

/* ---- disable, enable, flush, reset --------------------------------------------------- */

static void test_control(void)
{
    reset();
    windows(0, 12, 3);
    CHECK(launched_ops == 12);
    submit(0, 0);
    submit(1, 1);                    /* held: the first chunk has 4 ops */
    CHECK(!all_ran_once());
    CHECK(autograph_flush() == AUTOGRAPH_OK && all_ran_once());
    ag_engine_flush(AG_FLUSH_SYNC);

    submit(0, 0);
    submit(1, 1);
    CHECK(autograph_disable() == AUTOGRAPH_OK && all_ran_once());   /* held ops went out */
    windows(0, 12, 3);
    CHECK(launched_ops == 12 && all_ran_once());                     /* nothing replayed */
    CHECK(autograph_enable() == AUTOGRAPH_OK);
    windows(0, 12, 2);
    CHECK(launched_ops == 3 * 12 && all_ran_once());

    /* the speed guard's pause and the API's are two bits: graphing resumes only when
     * neither has it paused, whichever lets go first */
    ag_introspect_pause(AG_PAUSE_GUARD, 1);
    CHECK(autograph_disable() == AUTOGRAPH_OK && ag_engine_is_paused());
    ag_introspect_pause(AG_PAUSE_GUARD, 0);
    CHECK(ag_engine_is_paused());
    ag_introspect_pause(AG_PAUSE_GUARD, 1);
    CHECK(autograph_enable() == AUTOGRAPH_OK && ag_engine_is_paused());
    windows(0, 12, 1);
    CHECK(launched_ops == 3 * 12 && all_ran_once());                 /* nothing replayed */
    ag_introspect_pause(AG_PAUSE_GUARD, 0);
    CHECK(!ag_engine_is_paused());
    windows(0, 12, 1);
    CHECK(launched_ops == 4 * 12 && all_ran_once());                 /* replayed again */

    CHECK(graph_count() == 2 && live_graphs == 2);
    CHECK(autograph_reset() == AUTOGRAPH_OK);
    CHECK(graph_count() == 0 && live_graphs == 0 && live_execs == 0);
    windows(0, 12, 1);               /* warm-up again: nothing replays */
    CHECK(launched_ops == 4 * 12 && all_ran_once());
}

/* ---- AUTOGRAPH_DEBUG_DUMP -------------------------------------------------------- */

static int file_starts(const char *dir, unsigned id, const char *tail, const char *text)
{
    char path[256], line[64] = "";
    FILE *f;
    snprintf(path, sizeof path, "%s/pid%d-t%u-%s", dir, (int)getpid(), id, tail);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    unlink(path);
    return strncmp(line, text, strlen(text)) == 0;
}

static void test_dump(void)
{
    char dir[64];
    autograph_graph_info info[4];
    snprintf(dir, sizeof dir, "/tmp/ag_test_dump_%d/sub", (int)getpid());
    reset();
    ag_dump_setup(dir);
    windows(0, 12, 2);
    CHECK(autograph_list_graphs(info, 4) == 2);
    CHECK(file_starts(dir, info[0].template_id, "c0.dot", "digraph fake"));
    CHECK(file_starts(dir, info[0].template_id, "c0-verbose.dot", "digraph fake"));
    CHECK(file_starts(dir, info[0].template_id, "c1-verbose.dot", "digraph fake"));
    CHECK(file_starts(dir, info[0].template_id, "c1.dot", "digraph fake"));
    CHECK(file_starts(dir, info[0].template_id, "c0-v0.json", "{\"exec_graph_id\""));
    CHECK(file_starts(dir, info[0].template_id, "c1-v0.json", "{\"exec_graph_id\""));
    CHECK(rmdir(dir) == 0);
    *strrchr(dir, '/') = '\0';
    CHECK(rmdir(dir) == 0);
    ag_dump_setup("/proc/self/no/such/folder");   /* one line on stderr, dumping off */
    ag_dump_setup(NULL);
}

int main(void)
{
    struct ag_engine_params p = { .warmup = 2, .min_ops = 4, .chunk_first = 4,
                                  .chunk_growth = 2, .chunk_max = 16, .max_variants = 4,
                                  .period_min = 8,
                                  .light_after = 0 };
    CHECK(autograph_list_graphs(NULL, 0) == 0);    /* before the engine starts */
    ag_engine_setup(&fake, &p);
    CHECK(!strcmp(autograph_version(), AUTOGRAPH_VERSION_STRING));
    test_hooks();
    test_list();
    test_keep_graph();
    test_cache();
    test_control();
    test_dump();
    return check_finish("test_introspect");
}
