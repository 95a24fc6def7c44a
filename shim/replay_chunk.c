/* replay_chunk.c -- replay: a chunk's executables and its launch.
 *
 * A chunk's executables (variants) are made from its graph here, holding the args it
 * was built with, and dropped here.  A replay launches the variant that already holds its args, else the one that
 * needs the fewest nodes patched (node by node, only where the args changed); when
 * some of those nodes take args they had lately (ping-pong buffers, remembered per
 * op), a new variant is made instead while there is room, so that alternating arg
 * sets each keep one.  Per op, not per arg set: a program whose step passes a few
 * fresh values (a host pointer, a counter) besides alternating buffers then patches
 * only those few.  A launch is readied under the engine lock (ag_chunk_prepare),
 * fired on any thread (ag_chunk_fire) and counted under the lock (ag_chunk_count).
 */
#include "engine_internal.h"
#include "log.h"
#include "report_introspect.h"

#include <stdlib.h>
#include <string.h>

void ag_template_op_view(const struct ag_template *t, int i, const unsigned char *args,
                         struct ag_op *out)
{
    const struct ag_top *top = &t->ops[i];
    *out = (struct ag_op){ .id = top->id, .ctx = t->ctx, .shape = t->shapes + top->shape_off,
                           .args = args };
    if (args && ag_is_event_op(top->kind) && top->args_len == sizeof(uint64_t)) {
        uint64_t event;
        memcpy(&event, args, sizeof event);     /* the event is an argument */
        out->event = (uintptr_t)event;
    }
}

int ag_chunk_new_variant(struct ag_chunk *c)
{
    struct ag_variant *v = &c->variants[c->nvariants];
    double t0 = ag_now_us();
    int rc = ag_eng.be->instantiate(c->graph, &v->exec);
    ag_eng.s.instantiate_us += ag_now_us() - t0;
    if (rc != 0)
        return rc;
    v->args = malloc(c->args_len ? c->args_len : 1);
    if (v->args == NULL) {
        ag_eng.be->release_exec(v->exec);
        return -1;
    }
    memcpy(v->args, c->base, c->args_len);
    v->used = 0;                     /* fresh: pick_variant patches it, asks no other */
    c->nvariants++;
    ag_eng.s.variants++;
    return 0;
}

void ag_chunk_drop_variants(struct ag_chunk *c)
{
    for (int v = 0; v < c->nvariants; v++) {
        ag_eng.be->release_exec(c->variants[v].exec);
        free(c->variants[v].args);
    }
    c->nvariants = 0;
}

/* Replaces the chunk's executables by one made from its graph as it is now: when
 * it is built, at its first replay (AUTOGRAPH_KEEP_GRAPH), on autograph_instantiate. */
int ag_chunk_instantiate(struct ag_template *t, int chunk)
{
    struct ag_chunk *c = &t->chunks[chunk];
    int rc;
    ag_chunk_drop_variants(c);
    rc = ag_chunk_new_variant(c);
    if (rc == 0)
        ag_introspect_instantiated(t, chunk, 0);
    return rc;
}
/* ---- replaying a chunk --------------------------------------------------------- */

/* Whether op i of chunk c is a node that variant v would patch to hold `args`. */
static int needs_patch(const struct ag_template *t, const struct ag_chunk *c,
                       const struct ag_variant *v, const unsigned char *args, int i)
{
    const struct ag_top *top = &t->ops[i];
    return top->args_len != 0 && c->nodes[i - c->begin] != NULL &&
           memcmp(v->args + top->args_off, args + top->args_off, top->args_len) != 0;
}

/* How many nodes variant v would patch to hold `args`, counted up to limit + 1. */
static int patch_cost(const struct ag_template *t, const struct ag_chunk *c,
                      const struct ag_variant *v, const unsigned char *args, int limit)
{
    int cost = 0;
    for (int i = c->begin; i < c->end && cost <= limit; i++)
        cost += needs_patch(t, c, v, args, i);
    return cost;
}

/* 1 when op i of chunk c had the bytes `args` (all the chunk's) lately, one of its
 * last AG_OP_SEEN distinct values; else 0, and they become its latest. */
static int op_args_recur(const struct ag_template *t, struct ag_chunk *c, int i,
                         const unsigned char *args)
{
    const struct ag_top *top = &t->ops[i];
    uint64_t h = ag_args_hash(args + top->args_off, top->args_len);
    uint64_t *seen = c->seen[i - c->begin];
    for (int k = 0; k < AG_OP_SEEN; k++)
        if (seen[k] == h)
            return 1;
    memmove(seen + 1, seen, (AG_OP_SEEN - 1) * sizeof *seen);
    seen[0] = h;
    return 0;
}

/* Of the nodes variant v would patch, how many take args they had lately: patches
 * that a variant of their own would save when the program alternates arg sets. */
static int recurring_patches(const struct ag_template *t, struct ag_chunk *c,
                             const struct ag_variant *v, const unsigned char *args)
{
    int n = 0;
    for (int i = c->begin; i < c->end; i++)
        if (needs_patch(t, c, v, args, i))
            n += op_args_recur(t, c, i, args);
    return n;
}

/* The variants of chunk c, least recently used first, into order[]. */
static void variants_by_age(const struct ag_chunk *c, int *order)
{
    for (int v = 0; v < c->nvariants; v++) {
        int k = v;
        for (; k > 0 && c->variants[order[k - 1]].used > c->variants[v].used; k--)
            order[k] = order[k - 1];
        order[k] = v;
    }
}

/* The variant to launch `args` with: one that holds them already (*exact set), else
 * the closest (fewest nodes to patch; of equals, the least recently used).  Looked
 * at least recently used first: where arg sets cycle, that one is the closest, and
 * counting the others' patches stops as soon as they need more.  When the closest
 * would patch nodes back to args they had lately, the chunk asks for a new variant,
 * made at its next launch (unless the closest is such a one, never launched).  Run
 * as the chunk is fired (on the launcher thread, where there is one): the chunk's
 * variants and seen hashes are the launch's own data until it is collected. */
static struct ag_variant *pick_variant(const struct ag_template *t, struct ag_chunk *c,
                                       const unsigned char *args, int *exact)
{
    int order[64], best = 0, best_cost = c->end - c->begin + 1;   /* 64: config.c caps VARIANTS */

    *exact = 1;
    for (int v = 0; v < c->nvariants; v++)
        if (memcmp(c->variants[v].args, args, c->args_len) == 0)
            return &c->variants[v];
    *exact = 0;
    if (c->nvariants > 1) {          /* one: it is the closest, nothing to count */
        variants_by_age(c, order);
        for (int k = 0; k < c->nvariants; k++) {
            int cost = patch_cost(t, c, &c->variants[order[k]], args, best_cost - 1);
            if (cost < best_cost)
                best = order[k], best_cost = cost;
        }
    }
    if (c->variants[best].used != 0 && c->nvariants < ag_eng.p.max_variants &&
        recurring_patches(t, c, &c->variants[best], args) > 0)
        c->want_variant = 1;         /* made at the chunk's next launch (prepare) */
    return &c->variants[best];
}

/* AUTOGRAPH_LOG=debug: which op of graph t a replay patched, and the first 8 bytes
 * that changed (a pointer that moved, a scalar that counts): why a window is patched. */
static void log_patch(const struct ag_template *t, int op, const unsigned char *was,
                      const unsigned char *now, uint32_t len)
{
    uint32_t at = 0, n;
    uint64_t a = 0, b = 0;
    if (!ag_log_enabled(AG_LOG_DEBUG))
        return;
    while (at < len && was[at] == now[at])
        at++;
    at &= ~7u;
    n = len - at < 8 ? len - at : 8;
    memcpy(&a, was + at, n);
    memcpy(&b, now + at, n);
    ag_log(AG_LOG_DEBUG, "graph %u: op %d (kind %u, %u arg bytes) patched at byte %u: "
           "%#llx -> %#llx", t->id, op, t->ops[op].kind, len, at,
           (unsigned long long)a, (unsigned long long)b);
}

/* Patches job->v to job->args, node by node where they differ, counting into the
 * job.  An op without a node (an event wait the graph makes with an edge) only takes
 * the new bytes. */
static int patch_variant(struct ag_launch *job)
{
    const struct ag_template *t = job->t;
    const struct ag_chunk *c = job->c;
    const unsigned char *args = job->args;
    struct ag_variant *v = job->v;
    for (int i = c->begin; i < c->end; i++) {
        const struct ag_top *top = &t->ops[i];
        void *node = c->nodes[i - c->begin];
        struct ag_op view;
        int rc;
        if (top->args_len == 0 ||
            memcmp(v->args + top->args_off, args + top->args_off, top->args_len) == 0)
            continue;
        if (node != NULL) {
            ag_template_op_view(t, i, args + top->args_off, &view);
            log_patch(t, i, v->args + top->args_off, args + top->args_off, top->args_len);
            rc = ag_eng.be->patch(v->exec, node, &view);
            if (rc != 0)
                return rc;
            if (ag_is_event_op(top->kind))
                job->repointed++;
            else
                job->patches++;
        }
        memcpy(v->args + top->args_off, args + top->args_off, top->args_len);
    }
    return 0;
}

/* Readies the launch of chunk c with `args` (its ops' args, laid out as in c->base)
 * on the streams that the replay mapped to the template's slots: the chunk is
 * instantiated if it was not yet, and gets the new variant its last launch asked
 * for.  Its variant is picked when it is fired: comparing the args with the
 * variants' reads kilobytes the program's thread no longer has in its caches.
 * Under the engine lock.  0 or the error. */
int ag_chunk_prepare(struct ag_template *t, struct ag_chunk *c, const unsigned char *args,
                     const uintptr_t *slot_key, struct ag_launch *job)
{
    int chunk = (int)(c - t->chunks), rc;

    if (c->nvariants == 0 && (rc = ag_chunk_instantiate(t, chunk)) != 0)
        return rc;                   /* AUTOGRAPH_KEEP_GRAPH: instantiated at first use */
    if (c->want_variant) {
        c->want_variant = 0;
        if (c->nvariants < ag_eng.p.max_variants && ag_chunk_new_variant(c) == 0)
            ag_introspect_instantiated(t, chunk, c->nvariants - 1);
    }
    memset(job, 0, sizeof *job);
    job->t = t;
    job->c = c;
    job->args = args;
    for (int k = 0; k < c->nslots; k++)
        job->streams[k] = slot_key[c->slots[k]];
    job->used = ++ag_eng.clock;
    t->used = job->used;
    return 0;
}

/* Patches and launches a prepared chunk, on any thread; what it did and its result
 * go into the job. */
void ag_chunk_fire(struct ag_launch *job)
{
    double t0, t1;
    job->v = pick_variant(job->t, job->c, job->args, &job->exact);
    job->v->used = job->used;
    t0 = ag_now_us();                /* patch_us counts the patches alone, as before */
    job->rc = job->exact ? 0 : patch_variant(job);   /* exact: no op to look at */
    t1 = ag_now_us();
    job->patch_us = t1 - t0;
    if (job->rc == 0)
        job->rc = ag_eng.be->launch(job->v->exec, job->t->ctx, job->streams,
                                   job->c->nslots);
    job->launch_us = ag_now_us() - t1;
}

/* Counts a fired launch into the summary, under the engine lock.  Its result. */
int ag_chunk_count(const struct ag_launch *job)
{
    ag_eng.s.patches += job->patches;
    ag_eng.s.events_repointed += job->repointed;
    ag_eng.s.patch_us += job->patch_us;
    ag_eng.s.chunk_launch_us += job->launch_us;
    if (job->rc == 0) {
        ag_eng.s.chunk_launches++;
        ag_eng.s.launches_graphed += job->c->kernels;
    }
    return job->rc;
}
