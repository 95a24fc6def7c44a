/* report_introspect.c -- report: the graphs as include/autograph.h shows them.
 *
 * build_template.c reports two events: a chunk captured (before instantiation;
 * with AUTOGRAPH_KEEP_GRAPH the first instantiation waits for the first replay or
 * autograph_instantiate) and an executable instantiated.  Each is dumped
 * (report_dump.c) and given to the hooks (engine_hooks.c); an instantiation may
 * pass a cache bound (build_cache.c).  The template being built is not registered
 * yet; while its hooks run it is `ag_eng.building`, so that a hook can look it up.
 * The queries below run with every engine's lock held (ag_introspect_lock, in the
 * table's order; inside a hook, only the hook's engine's, which its thread holds, and
 * they see that engine's graphs only), and name a graph by (template id, chunk) and
 * an executable by (template id, chunk, variant); template ids are unique in the
 * process, whichever context's engine built them.
 */
#include "engine_internal.h"
#include "report_introspect.h"


void ag_introspect_captured(struct ag_template *t, int chunk)
{
    autograph_graph_event ev = { t->id, chunk, -1, t->chunks[chunk].graph, NULL };
    ag_dump_captured(t, chunk);
    ag_eng.building = t;
    ag_hooks_fire(AG_HOOK_CAPTURE_END, &ev);
    ag_eng.building = NULL;
}

void ag_introspect_instantiated(struct ag_template *t, int chunk, int variant)
{
    const struct ag_chunk *c = &t->chunks[chunk];
    autograph_graph_event ev = { t->id, chunk, variant, c->graph, c->variants[variant].exec };
    ag_dump_instantiated(t, chunk, variant);
    ag_eng.building = t;
    ag_hooks_fire(AG_HOOK_POST_INSTANTIATE, &ev);
    ag_eng.building = NULL;
    ag_cache_enforce(t);
}

/* The backend's introspection entries, with the engine stepping aside for this thread
 * as in a hook: a driver call they cause on the way (CUPTI initialising itself, say)
 * must not wait for the lock this thread holds.  AUTOGRAPH_ERR_UNSUPPORTED without. */
#define ASIDE(call)                                                            \
    __extension__({                                                            \
        int rc_;                                                               \
        ag_step_aside(1);                                                      \
        rc_ = (call);                                                          \
        ag_step_aside(-1);                                                     \
        rc_;                                                                   \
    })

int ag_backend_graph_data(void *graph, void *exec, char **json)
{
    return ag_eng.be->graph_data ? ASIDE(ag_eng.be->graph_data(graph, exec, json))
                                 : AUTOGRAPH_ERR_UNSUPPORTED;
}

int ag_backend_dump_dot(void *graph, const char *path, int verbose)
{
    return ag_eng.be->dump_dot ? ASIDE(ag_eng.be->dump_dot(graph, path, verbose))
                               : AUTOGRAPH_ERR_UNSUPPORTED;
}

/* ---- queries ------------------------------------------------------------------- */

/* The engines a query reads: all of them, or inside a hook the hook's. */
static int first_engine(void)
{
    return ag_in_hook() ? ag_eng.index : 0;
}

static int end_engine(void)
{
    return ag_in_hook() ? ag_eng.index + 1 : ag_engines_count();
}

/* Visits each engine a query reads: its state is ag_eng's meanwhile. */
#define EACH_ENGINE(i)                                                         \
    for (int i = first_engine(), end_ = end_engine(); i < end_ &&              \
         (ag_thread_hot.eng = ag_engine_at(i)) != NULL; i++)

static int locked_engines;           /* taken by ag_introspect_lock (its owner's) */

int ag_introspect_lock(void)
{
    struct ag_engine *was = ag_thread_hot.eng;
    int n;
    if (ag_in_hook())
        return 0;                    /* this thread holds its engine's lock already */
    ag_engine_drain_thread();        /* its light ops into its own engine first */
    n = ag_engines_count();
    for (int i = 0; i < n; i++) {    /* in the table's order, as no one else takes two */
        ag_thread_hot.eng = ag_engine_at(i);
        ag_engine_lock();
    }
    ag_thread_hot.eng = was;
    locked_engines = n;
    return 1;
}

void ag_introspect_unlock(int taken)
{
    if (taken)
        for (int i = locked_engines; i-- > 0;)
            ag_lock_give(&ag_engine_at(i)->lock);
}

/* Outside ag_eng: a flag every held launch reads, in the AG_HOT line (op.h). */
AG_HOT int ag_engine_paused;
AG_HOT unsigned ag_pause_epoch = 1;     /* moves at every pause or resume */

/* autograph_disable / _enable, and the speed guard's pause (who: AG_PAUSE_*).
 * Paused, the wrappers pass recordable calls straight to the driver
 * (ag_engine_is_paused) and ag_engine_offer lets through any that was already on its
 * way; the ops a replay holds go out first, in order (ops after them must not
 * overtake).  Graphing resumes when no one has it paused. */
void ag_introspect_pause(int who, int paused)
{
    struct ag_engine *was = ag_thread_hot.eng;
    int flags = __atomic_load_n(&ag_engine_paused, __ATOMIC_RELAXED);
    flags = paused ? flags | who : flags & ~who;
    EACH_ENGINE(i)
        if (flags && ag_eng.r.t)
            ag_replay_abort(who == AG_PAUSE_API ? "autograph_disable()" : "the speed guard");
    ag_thread_hot.eng = was;
    __atomic_add_fetch(&ag_pause_epoch, 1, __ATOMIC_SEQ_CST);  /* before the flags */
    __atomic_store_n(&ag_engine_paused, flags, __ATOMIC_RELEASE);
    ag_light_gate_update();
}

/* Template `id` of the visited engine, or NULL. */
static struct ag_template *find_in_engine(unsigned id)
{
    struct ag_template *t, *tmp;
    if (ag_eng.building && ag_eng.building->id == id)
        return ag_eng.building;
    HASH_ITER(hh, ag_eng.by_hash, t, tmp)
        if (!t->failed && t->id == id)
            return t;
    return NULL;
}

/* Template `id`, its engine made the thread's (the caller puts *was back). */
static struct ag_template *find_template(unsigned id, struct ag_engine **was)
{
    struct ag_template *t = NULL;
    *was = ag_thread_hot.eng;
    EACH_ENGINE(i)
        if ((t = find_in_engine(id)) != NULL)
            return t;
    ag_thread_hot.eng = *was;
    return NULL;
}

/* Chunk `chunk` of template `id` if its graph exists (a hook may see a template
 * whose later chunks are not captured yet). */
static struct ag_chunk *find_chunk(unsigned id, int chunk)
{
    struct ag_engine *was;
    struct ag_template *t = find_template(id, &was);
    ag_thread_hot.eng = was;
    if (t == NULL || chunk < 0 || chunk >= t->nchunks || t->chunks[chunk].graph == NULL)
        return NULL;
    return &t->chunks[chunk];
}

static void describe(const struct ag_template *t, int chunk, autograph_graph_info *info)
{
    const struct ag_chunk *c = &t->chunks[chunk];
    info->template_id = t->id;
    info->chunk = chunk;
    info->nchunks = t->nchunks;
    info->ops = c->end - c->begin;
    info->kernels = (int)c->kernels;
    info->variants = c->nvariants;
    info->replays = t->replays;
    info->last_used = t->used;
    info->mem_bytes = (unsigned long long)c->nvariants * ag_chunk_exec_bytes(info->ops,
                                                                             c->args_len);
    info->graph = c->graph;
}

static int list_template(const struct ag_template *t, autograph_graph_info *out, int max,
                         int count)
{
    for (int c = 0; c < t->nchunks && t->chunks[c].graph; c++, count++)
        if (count < max)
            describe(t, c, &out[count]);
    return count;
}

static int list_engine(autograph_graph_info *out, int max, int count)
{
    struct ag_template *t, *tmp;
    int building_listed = 0;
    HASH_ITER(hh, ag_eng.by_hash, t, tmp) {
        building_listed |= t == ag_eng.building;
        if (!t->failed)
            count = list_template(t, out, max, count);
    }
    if (ag_eng.building && !building_listed)
        count = list_template(ag_eng.building, out, max, count);
    return count;
}

int ag_introspect_list(autograph_graph_info *out, int max)
{
    struct ag_engine *was = ag_thread_hot.eng;
    int count = 0;
    if (max < 0 || (max > 0 && out == NULL))
        return AUTOGRAPH_ERR_INVALID;
    EACH_ENGINE(i)
        count = list_engine(out, max, count);
    ag_thread_hot.eng = was;
    return count;
}

int ag_introspect_exec(unsigned id, int chunk, int variant, void **exec)
{
    struct ag_chunk *c = find_chunk(id, chunk);
    if (exec == NULL)
        return AUTOGRAPH_ERR_INVALID;
    if (c == NULL || variant < 0 || variant >= c->nvariants)
        return AUTOGRAPH_ERR_NOT_FOUND;
    *exec = c->variants[variant].exec;
    return AUTOGRAPH_OK;
}

int ag_introspect_instantiate(unsigned id)
{
    struct ag_engine *was;
    struct ag_template *t = find_template(id, &was);   /* its engine's, meanwhile */
    int rc = AUTOGRAPH_OK;
    if (t == NULL)
        return AUTOGRAPH_ERR_NOT_FOUND;
    for (int c = 0; c < t->nchunks && rc == AUTOGRAPH_OK; c++)
        if (ag_chunk_instantiate(t, c) != 0)
            rc = AUTOGRAPH_ERR_DRIVER;     /* that chunk instantiates again at its replay */
    ag_thread_hot.eng = was;
    return rc;
}

int ag_introspect_graph_data(unsigned id, int chunk, int variant, char **json)
{
    struct ag_chunk *c = find_chunk(id, chunk);
    int rc;
    if (c == NULL || variant < 0 || variant >= c->nvariants)
        return AUTOGRAPH_ERR_NOT_FOUND;
    rc = ag_backend_graph_data(c->graph, c->variants[variant].exec, json);
    return rc == 0 || rc == AUTOGRAPH_ERR_UNSUPPORTED ? rc : AUTOGRAPH_ERR_DRIVER;
}

int ag_introspect_dump(unsigned id, int chunk, const char *path, int verbose)
{
    struct ag_chunk *c = find_chunk(id, chunk);
    if (path == NULL)
        return AUTOGRAPH_ERR_INVALID;
    int rc;
    if (c == NULL)
        return AUTOGRAPH_ERR_NOT_FOUND;
    rc = ag_backend_dump_dot(c->graph, path, verbose);
    return rc == 0 || rc == AUTOGRAPH_ERR_UNSUPPORTED ? rc : AUTOGRAPH_ERR_DRIVER;
}
