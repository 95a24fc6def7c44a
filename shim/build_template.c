/* build_template.c -- build: templates, chunks and their executables.
 *
 * A template is a copy of the ops of a window (or of one period of it) with streams
 * renumbered into slots by first use and event waits linked to the record they wait
 * for.  It is cut into chunks (AUTOGRAPH_CHUNK ops, growing AUTOGRAPH_CHUNK_GROWTH
 * times up to AUTOGRAPH_CHUNK_MAX, or a plan build_tune.c chose) so that a replay
 * can launch the first chunk while the program is still submitting the rest.  Each
 * chunk is one graph built by the backend on its own streams, with up to
 * AUTOGRAPH_VARIANTS executable graphs (replay_chunk.c picks and patches them).
 * Here also: registering templates by hash and by first op, the template a replay
 * that stopped can go on with (ag_template_same_prefix), retiring them, and dropping
 * those the program's frees and unloads make stale.
 */
#include "engine_internal.h"
#include "report_introspect.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The filter of the templates' first ops (engine.h): a bit per (hash >> 58) of each
 * built template's first op, read unlocked by the light and skimming paths, which must
 * send such an op to the full path (it may start a replay).  Outside ag_eng for them,
 * in the AG_HOT line beside the light gate they read with it. */
AG_HOT uint64_t ag_light_starts;

void ag_light_note_start(uint64_t start_hash)
{
    __atomic_or_fetch(&ag_light_starts, 1ull << (start_hash >> 58), __ATOMIC_RELAXED);
}

void ag_light_forget_starts(void)
{
    __atomic_store_n(&ag_light_starts, 0, __ATOMIC_RELAXED);
}

#define TEMPLATE_SEED 0x6a09e667f3bcc909ull   /* the window seed: equal hashes */

/* ---- building ------------------------------------------------------------------ */

/* Zeroed memory of at least `size` bytes starting on a cache line (what a held op
 * reads of a template and of its ops, a line each), or NULL. */
static void *calloc_lines(size_t size)
{
    size = (size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, size);
    if (p)
        memset(p, 0, size);
    return p;
}

static int copy_ops(struct ag_template *t, const struct ag_window *w, size_t a)
{
    int tslot_of[AG_MAX_SLOTS];
    size_t shape_bytes = 0;
    uint32_t shape_used = 0;

    for (int s = 0; s < AG_MAX_SLOTS; s++)
        tslot_of[s] = -1;
    for (int i = 0; i < t->nops; i++)
        shape_bytes += (w->ops[a + i].shape_len + 7u) & ~7u;
    t->ops = calloc_lines((size_t)t->nops * sizeof *t->ops);    /* an op a line */
    t->shapes = malloc(shape_bytes ? shape_bytes : 1);
    if (t->ops == NULL || t->shapes == NULL)
        return 0;
    t->hash = TEMPLATE_SEED;
    for (int i = 0; i < t->nops; i++) {
        const struct ag_wop *o = &w->ops[a + i];
        struct ag_top *top = &t->ops[i];
        uint32_t back = 0;
        if (tslot_of[o->slot] < 0) {
            tslot_of[o->slot] = t->nslots;
            t->slot_fixed[t->nslots] =
                (o->stream == AG_STREAM_LEGACY || o->stream == AG_STREAM_PER_THREAD) ? o->stream : 0;
            t->nslots++;
        }
        top->id = o->id;
        top->slot = (unsigned char)tslot_of[o->slot];
        top->link = AG_LINK_EXTERNAL;
        if (o->kind == AG_OP_EVENT_WAIT && o->link_back && o->link_back <= (uint32_t)i) {
            top->link = i - (int)o->link_back;
            back = o->link_back;
        }
        top->key = ag_hash_mix(ag_hash_mix(o->hash, top->slot), back);
        top->shape_off = shape_used;
        memcpy(t->shapes + shape_used, w->arena + o->shape_off, o->shape_len);
        shape_used += (o->shape_len + 7u) & ~7u;
        t->kernels += o->kind == AG_OP_KERNEL;
        t->hash = ag_hash_mix(t->hash, top->key);
    }
    t->start_key = t->ops[0].hash;
    t->ctx = w->ops[a].ctx;
    return 1;
}

/* Paced: the program spends more than chunk_slow_ns of its own time between its
 * calls (mean over the window's eager ops: at least PACING_GAPS of them, or half the
 * window's; while another template replays part of a window, its ops are not timed).
 * Such a program (Python, a dispatcher, host work) is slower than the GPU, and the
 * last chunk's GPU time comes on top of the window (the host waits for it at the
 * flush point), so its chunks are short towards the end.  While the launcher thread
 * launches them (replay_launcher.c), the chunks are all alike (growth 1,
 * build_tune.c): a chunk of n ops gives the GPU its work n program gaps late, and a
 * launch costs the program's thread only a hand-off.  They are cut from the first op,
 * as growing chunks are (the last one plan.first ops and the rest shorter than a
 * chunk): templates of two lengths, steps that part late, then have their cuts at the
 * same ops, where a replay can move from one to the other (match_replay.c's rematch).
 * Without the launcher, they are cut from the last op: the last is plan.first ops
 * long and each one before it plan.growth times the next: fewer, bigger chunks, as a
 * launch then costs the program's thread several driver calls with the caches cold. */
#define PACING_GAPS 16
static uint64_t program_mean_ns(const struct ag_window *w)
{
    return w->program_gaps ? w->program_ns / w->program_gaps : 0;
}

static void decide_pacing(struct ag_template *t, const struct ag_window *w)
{
    uint64_t mean = program_mean_ns(w);
    uint32_t half = (uint32_t)t->nops / 2, enough = half < PACING_GAPS ? half : PACING_GAPS;
    t->paced = ag_eng.p.chunk_slow_ns && w->program_gaps >= enough &&
               mean > (uint64_t)ag_eng.p.chunk_slow_ns;
    ag_eng.s.paced += t->paced;
}

/* The lengths of the chunks of `nops` ops under `plan`, in the order they grow, into
 * lens[0..cap): the first plan.first ops long, each next one plan.growth times
 * longer up to chunk_max; a rest shorter than plan.first joins the chunk before it.
 * Returns how many (cap or not). */
int ag_plan_lengths(int nops, struct ag_plan plan, int *lens, int cap)
{
    int n = 0, pos = 0, size = plan.first;
    while (pos < nops) {
        int left = nops - pos;
        int len = size < left ? size : left;
        long next = (long)size * plan.growth;
        if (left - len < plan.first)
            len = left;
        if (n < cap)
            lens[n] = len;
        pos += len;
        n++;
        size = next < ag_eng.p.chunk_max ? (int)next : ag_eng.p.chunk_max;
    }
    return n;
}

/* Cuts the template into chunks under t->plan: from its first op (growing, or alike:
 * the rest shorter than a chunk joining the last chunk), or, paced without the
 * launcher thread (ag_plan_from_end), from its last (its last chunk plan.first ops
 * long, the rest joining the first chunk); on several streams, only where a cut adds
 * no order (build_cuts.c); and, whatever the plan, right after each collective
 * (build_collective.c). */
static int plan_chunks(struct ag_template *t)
{
    int count = ag_plan_lengths(t->nops, t->plan, NULL, 0), *lens, pos = 0, ok;
    int from_end = ag_plan_from_end(t);
    unsigned char *ends;
    if (!ag_collective_ends(t, &ends))
        return 0;
    t->chunks = calloc((size_t)count, sizeof *t->chunks);
    lens = calloc((size_t)count, sizeof *lens);
    if (t->chunks == NULL || lens == NULL) {
        free(lens);
        free(ends);
        return 0;
    }
    ag_plan_lengths(t->nops, t->plan, lens, count);
    for (int n = 0; n < count; n++) {
        int k = from_end ? count - 1 - n : n;
        int end = from_end ? t->nops - pos : pos + lens[n];
        t->chunks[k].begin = end - lens[n];
        t->chunks[k].end = end;
        pos += lens[n];
    }
    free(lens);
    t->nchunks = count;
    ag_chunks_keep_order(t, ends);   /* cuts across streams only where no order is added */
    ok = ag_chunks_end_collectives(t, ends);
    free(ends);
    return ok;
}

/* AUTOGRAPH_LOG=debug: the pacing figure and the chunk lengths of a new template. */
static void log_chunks(const struct ag_template *t, const struct ag_window *w)
{
    char lens[96];
    size_t at = 0;
    int c = 0;
    if (!ag_log_enabled(AG_LOG_DEBUG))
        return;
    lens[0] = '\0';
    for (; c < t->nchunks && at + 16 < sizeof lens; c++)
        at += (size_t)snprintf(lens + at, sizeof lens - at, " %d",
                               t->chunks[c].end - t->chunks[c].begin);
    ag_log(AG_LOG_DEBUG, "graph %u: %d ops, the program's own time %.2f us per op (%u "
           "gaps), plan %d x%d: chunks %s:%s%s", t->id, t->nops, program_mean_ns(w) / 1e3,
           w->program_gaps, t->plan.first, t->plan.growth,
           !t->paced                ? "growing"
           : t->plan.growth == 1    ? "paced (alike, cut from the start)"
                                    : "paced (shrinking towards the end)",
           lens, c < t->nchunks ? " ..." : "");
}

/* The chunk-local link of event wait i (of template t), for chunk c: its record's
 * position in c; AG_LINK_IMPLIED when the record is in an earlier chunk on the same
 * slot (the wait changes nothing in stream order); else AG_LINK_EXTERNAL: a record in
 * an earlier chunk on another slot is made by that chunk's graph on the program's
 * event, and this chunk's graph waits for it there, as a wait on the program's event
 * made outside the window.  Chunks launched in order on their own streams order
 * nothing across streams: a wait taken as implied there lets the GPU run the ops
 * after it before the record (engine_prog eventmid in chunks of one or two ops gets
 * wrong bytes in some runs). */
static int chunk_link(const struct ag_template *t, const struct ag_chunk *c, int i)
{
    int record = t->ops[i].link;
    if (record == AG_LINK_EXTERNAL)
        return AG_LINK_EXTERNAL;
    if (record >= c->begin)
        return record - c->begin;
    return t->ops[record].slot == t->ops[i].slot ? AG_LINK_IMPLIED : AG_LINK_EXTERNAL;
}

/* Views of a chunk's ops for the backend: chunk-local slots and links. */
/* A chunk with work on the legacy stream and on a blocking stream is launched on the
 * legacy stream (its local slot 0): the launch then waits for all earlier work of
 * every blocking stream and all later such work waits for it, as the legacy ops it
 * holds would (inside the chunk the backend adds the edges: backend.h). */
static void legacy_launches(const struct ag_template *t, struct ag_chunk *c,
                            struct ag_op *views, int m)
{
    int legacy = -1, blocking = 0;
    unsigned asked = 0;
    unsigned char swap;
    for (int l = 0; l < c->nslots; l++) {
        uintptr_t fixed = t->slot_fixed[c->slots[l]];
        if (fixed == AG_STREAM_LEGACY)
            legacy = l;
    }
    for (int k = 0; legacy > 0 && k < m && !blocking; k++) {
        if (asked & (1u << views[k].slot))
            continue;                /* each slot's stream asked once */
        asked |= 1u << views[k].slot;
        blocking = views[k].slot != legacy && ag_stream_syncs_with_legacy(views[k].stream);
    }
    if (legacy <= 0 || !blocking)
        return;
    for (int k = 0; k < m; k++)
        views[k].slot = views[k].slot == legacy ? 0 :
                        views[k].slot == 0 ? (unsigned char)legacy : views[k].slot;
    swap = c->slots[0];
    c->slots[0] = c->slots[legacy];
    c->slots[legacy] = swap;
}

static struct ag_op *chunk_views(struct ag_template *t, struct ag_chunk *c,
                                 const struct ag_window *w, size_t a)
{
    int m = c->end - c->begin, local[AG_MAX_SLOTS];
    struct ag_op *views = calloc((size_t)m, sizeof *views);
    if (views == NULL)
        return NULL;
    for (int s = 0; s < AG_MAX_SLOTS; s++)
        local[s] = -1;
    for (int k = 0; k < m; k++) {
        int i = c->begin + k;
        const struct ag_top *top = &t->ops[i];
        ag_template_op_view(t, i, w->arena + w->ops[a + i].args_off, &views[k]);
        if (local[top->slot] < 0) {
            local[top->slot] = c->nslots;
            c->slots[c->nslots++] = top->slot;
        }
        views[k].slot = (unsigned char)local[top->slot];
        if (top->kind == AG_OP_EVENT_WAIT)
            views[k].link = chunk_link(t, c, i);
        views[k].args_len = top->args_len;
    }
    legacy_launches(t, c, views, m);
    return views;
}

static int build_chunk(struct ag_template *t, struct ag_chunk *c, const struct ag_window *w,
                       size_t a)
{
    int m = c->end - c->begin, rc;
    struct ag_op *views = chunk_views(t, c, w, a);
    double t0;

    c->nodes = calloc((size_t)m, sizeof *c->nodes);
    if (views == NULL || c->nodes == NULL) {
        free(views);
        return -1;
    }
    for (int k = 0; k < m; k++) {
        struct ag_top *top = &t->ops[c->begin + k];
        top->args_off = (uint32_t)c->args_len;
        c->args_len += top->args_len;
        c->kernels += top->kind == AG_OP_KERNEL;
    }
    c->base = malloc(c->args_len ? c->args_len : 1);
    c->variants = calloc((size_t)ag_eng.p.max_variants, sizeof *c->variants);
    if (c->base == NULL || c->variants == NULL) {
        free(views);
        return -1;
    }
    c->seen = calloc((size_t)m, sizeof *c->seen);
    if (c->seen == NULL) {
        free(views);
        return -1;
    }
    for (int k = 0; k < m; k++) {
        memcpy(c->base + t->ops[c->begin + k].args_off, views[k].args, views[k].args_len);
        c->seen[k][0] = ag_args_hash(views[k].args, views[k].args_len);
    }
    t0 = ag_now_us();
    rc = ag_eng.be->build(views, m, c->nslots, &c->graph, c->nodes);
    ag_eng.s.build_us += ag_now_us() - t0;
    free(views);
    if (rc != 0) {
        c->graph = NULL;
        return rc;
    }
    return 0;
}

/* Templates in every engine's table, for readers without its lock (a free that only
 * counts the graphs pointing into it). */
static unsigned long templates_held;

unsigned long ag_templates_held(void)
{
    return __atomic_load_n(&templates_held, __ATOMIC_RELAXED);
}

static void register_template(struct ag_template *t)
{
    struct ag_start *s;
    HASH_ADD(hh, ag_eng.by_hash, hash, sizeof t->hash, t);
    __atomic_add_fetch(&templates_held, 1, __ATOMIC_RELAXED);
    if (t->failed)
        return;
    HASH_FIND(hh, ag_eng.by_start, &t->start_key, sizeof t->start_key, s);
    if (s == NULL) {
        s = calloc(1, sizeof *s);
        if (s == NULL)
            return;
        s->key = t->start_key;
        HASH_ADD(hh, ag_eng.by_start, key, sizeof s->key, s);
    }
    ag_light_note_start(t->start_key);
    t->next_same_start = s->list;
    s->list = t;
}

/* Builds a template from window ops [a, b).  Returns it registered, or NULL (a
 * failed build is registered as a stub so that the same window is not retried). */
struct ag_template *ag_template_build(const struct ag_window *w, size_t a, size_t b,
                                      int attempts)
{
    struct ag_template *t = calloc_lines(sizeof *t);   /* its first line: a held op's */
    int rc = -1, copied;

    if (t == NULL)
        return NULL;
    t->id = __atomic_add_fetch(&ag_sh.next_template_id, 1, __ATOMIC_RELAXED);
    t->nops = (int)(b - a);
    copied = copy_ops(t, w, a);
    if (copied) {
        decide_pacing(t, w);
        ag_tune_choose(t);                           /* t->plan */
    }
    if (copied && plan_chunks(t)) {
        log_chunks(t, w);
        rc = 0;
        for (int c = 0; c < t->nchunks && rc == 0; c++) {
            rc = build_chunk(t, &t->chunks[c], w, a);
            if (rc == 0)
                ag_introspect_captured(t, c);        /* capture-end hooks, DOT dump */
            if (rc == 0 && !ag_eng.p.keep_graph)
                rc = ag_chunk_instantiate(t, c);     /* else at its first replay */
        }
    }
    if (rc != 0) {
        ag_eng.s.build_failures++;
        ag_explain(t->hash, AG_SKIP_BUILD_FAILED,
                   "window of %d ops: not graphed: the driver refused to build it (error %d); "
                   "it stays eager", t->nops, rc);
        uint64_t hash = t->hash;
        ag_template_free(t);
        t = calloc(1, sizeof *t);
        if (t == NULL)
            return NULL;
        t->hash = hash;
        t->failed = 1;
        t->build_attempts = attempts + 1;
        register_template(t);
        return NULL;
    }
    ag_eng.s.templates++;
    for (int c = 0; c + 1 < t->nchunks; c++) {
        int host = t->ops[t->chunks[c].end - 1].kind == AG_OP_HOST_FUNC;
        ag_eng.s.collective_cuts += t->chunks[c].collective && !host;
        ag_eng.s.host_func_cuts += t->chunks[c].collective && host;
    }
    t->used = ++ag_eng.clock;
    register_template(t);
    ag_cache_enforce(t);                             /* AUTOGRAPH_MAX_GRAPHS, _MB */
    return t;
}

void ag_template_free(struct ag_template *t)
{
    for (int c = 0; t->chunks && c < t->nchunks; c++) {
        struct ag_chunk *ch = &t->chunks[c];
        ag_chunk_drop_variants(ch);
        if (ch->graph)
            ag_eng.be->release_graph(ch->graph, ch->nodes, ch->end - ch->begin);
        free(ch->variants);
        free(ch->nodes);
        free(ch->seen);
        free(ch->base);
    }
    free(t->chunks);
    free(t->ops);
    free(t->shapes);
    free(t->tuning);
    free(t);
}

/* Templates that begin with the same op (a step with an extra op every few steps, say)
 * compete for the replay that op starts.  Each sync-delimited window whose shape is a
 * template credits it (ag_template_credit): its score gains AG_START_CREDIT, and the
 * scores of all templates of that start decay by 1/8, so a score counts the windows
 * of that shape lately.  A replay starts with the best score (the longest on a tie,
 * as before any credit); the one preferred so far keeps its place until another
 * leads it by more than AG_START_MARGIN, so that shapes taking turns do not make
 * every replay start with the wrong one. */
#define AG_START_CREDIT 256u
#define AG_START_MARGIN (2 * AG_START_CREDIT)

void ag_template_credit(struct ag_template *t)
{
    struct ag_start *s;
    HASH_FIND(hh, ag_eng.by_start, &t->start_key, sizeof t->start_key, s);
    for (struct ag_template *o = s ? s->list : NULL; o; o = o->next_same_start)
        o->start_score -= o->start_score >> 3;
    t->start_score += AG_START_CREDIT;
}

static int better_start(const struct ag_template *a, const struct ag_template *b)
{
    return a->start_score != b->start_score ? a->start_score > b->start_score
                                            : a->nops > b->nops;
}

/* The live template a replay starting with an op of this key begins with, or NULL. */
/* Of templates with the same first op, the one whose shape came after the window just
 * judged, those last times: a training step cut by synchronous copies into windows
 * that begin with the same kernel (a layer norm) starts each one's replay with its own
 * template, where credits alone would pick one of them for both.  NULL: no window
 * shape followed the last one AG_SUCCESSOR_SURE times in a row, or no template of
 * that shape starts with this op. */
/* The successor entry of window shape `before`: its own, else (want_slot) the one its
 * set gives up, the least recently noted; NULL when it has none and !want_slot.  Sets
 * of AG_SUCCESSOR_WAYS: a cycle of a few shapes keeps every shape's successor, where a
 * direct-mapped table lost one to a collision in a third of the runs. */
static struct ag_successor *successor_of(uint64_t before, int want_slot)
{
    struct ag_successor *set = &ag_eng.successors[before % (AG_SUCCESSORS / AG_SUCCESSOR_WAYS) *
                                                  AG_SUCCESSOR_WAYS];
    struct ag_successor *oldest = set;
    for (int k = 0; k < AG_SUCCESSOR_WAYS; k++) {
        if (set[k].before == before)
            return &set[k];
        if (set[k].noted < oldest->noted)
            oldest = &set[k];
    }
    return want_slot ? oldest : NULL;
}

static struct ag_template *after_last_window(const struct ag_start *s)
{
    const struct ag_successor *e = successor_of(ag_eng.last_hash, 0);
    if (ag_eng.last_hash == 0 || e == NULL || e->streak < AG_SUCCESSOR_SURE)
        return NULL;
    for (struct ag_template *t = s->list; t; t = t->next_same_start)
        if (!t->retired && !t->suspended && t->hash == e->next)
            return t;
    return NULL;
}

void ag_successor_note(uint64_t before, uint64_t next)
{
    struct ag_successor *e;
    if (before == 0)
        return;
    e = successor_of(before, 1);
    if (e->before == before && e->next == next) {
        e->streak += e->streak < AG_SUCCESSOR_SURE;
        e->noted = ag_eng.judged;
        return;
    }
    *e = (struct ag_successor){ .before = before, .next = next, .streak = 1,
                                .noted = ag_eng.judged };
}

struct ag_template *ag_template_find_start(uint64_t start_key)
{
    struct ag_start *s;
    struct ag_template *best = NULL, *pref;
    HASH_FIND(hh, ag_eng.by_start, &start_key, sizeof start_key, s);
    if (s == NULL)
        return NULL;
    if (s->list && s->list->next_same_start && (best = after_last_window(s)) != NULL)
        return best;
    for (struct ag_template *t = s->list; t; t = t->next_same_start)
        if (!t->retired && !t->suspended && (best == NULL || better_start(t, best)))
            best = t;
    pref = s->preferred;
    if (pref && pref != best && !pref->retired && !pref->suspended &&
        pref->start_score > 0 && best->start_score <= pref->start_score + AG_START_MARGIN)
        return pref;
    s->preferred = best;
    return best;
}

/* Whether template ops x (of a) and y (of b) are the same op: the same identity
 * (ag_same_identity: a kernel may be another function of the same form, which a
 * replay patches), on the same slot, of the same kind of stream, with the same event
 * link. */
static int same_op(const struct ag_template *a, const struct ag_top *x,
                   const struct ag_template *b, const struct ag_top *y)
{
    return x->slot == y->slot && x->link == y->link &&
           a->slot_fixed[x->slot] == b->slot_fixed[y->slot] &&
           ag_same_identity(&x->id, a->shapes + x->shape_off,
                            &y->id, b->shapes + y->shape_off);
}

/* Whether templates a and b have the same ops [0, n) (same_op). */
static int same_prefix(const struct ag_template *a, const struct ag_template *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!same_op(a, &a->ops[i], b, &b->ops[i]))
            return 0;
    return 1;
}

/* The chunk of cand that begins at `begin` and holds op pos, with the args of its ops
 * [begin, pos) where the pending args of t's chunk hold them (the same offsets); -1
 * when it has none.  Nothing of [begin, pos) has gone out under either template: the
 * replay can go on with cand's chunk as if it had matched cand from `begin` on. */
static int chunk_at(const struct ag_template *cand, const struct ag_template *t, int begin,
                    int pos)
{
    int k = 0;
    while (k < cand->nchunks && cand->chunks[k].begin < begin)
        k++;
    if (k == cand->nchunks || cand->chunks[k].begin != begin || cand->chunks[k].end <= pos)
        return -1;
    for (int i = begin; i < pos; i++)
        if (cand->ops[i].args_off != t->ops[i].args_off)
            return -1;
    return k;
}

/* For a replay of t that stopped at op pos of its chunk `chunk`: another live template
 * of the same start that has t's ops [0, pos) (same_prefix), a chunk that begins where
 * t's does and holds pos (chunk_at: its index into *alt_chunk), and whose op pos
 * `takes` accepts (called last: it maps the op's stream); NULL when none.  A program
 * whose steps begin alike and part later (a batch size that picks other kernels, or
 * adds one, after the first layers) then keeps its replay: the chunks launched before
 * the stop were the same ops for both templates.  Chunks cut from the first op on
 * (plan_chunks) begin at the same ops in templates of two lengths. */
struct ag_template *ag_template_same_prefix(const struct ag_template *t, int pos, int chunk,
                                            int (*takes)(struct ag_template *cand),
                                            int *alt_chunk)
{
    struct ag_start *s;
    int begin = t->chunks[chunk].begin;
    HASH_FIND(hh, ag_eng.by_start, &t->start_key, sizeof t->start_key, s);
    if (s == NULL)
        return NULL;
    for (struct ag_template *c = s->list; c; c = c->next_same_start) {
        int k;
        if (c == t || c->retired || c->failed || c->nchunks == 0 || c->nops <= pos)
            continue;
        if ((k = chunk_at(c, t, begin, pos)) >= 0 && same_prefix(t, c, pos) && takes(c)) {
            *alt_chunk = k;
            return c;
        }
    }
    return NULL;
}

/* Unlinks and frees a template (the replay must not be using it). */
void ag_template_retire(struct ag_template *t, const char *why)
{
    struct ag_start *s;
    ag_subperiod_forget(t);
    HASH_DEL(ag_eng.by_hash, t);
    __atomic_sub_fetch(&templates_held, 1, __ATOMIC_RELAXED);
    HASH_FIND(hh, ag_eng.by_start, &t->start_key, sizeof t->start_key, s);
    if (s) {
        struct ag_template **p = &s->list;
        if (s->preferred == t)
            s->preferred = NULL;
        while (*p && *p != t)
            p = &(*p)->next_same_start;
        if (*p)
            *p = t->next_same_start;
    }
    if (!t->failed) {
        ag_eng.s.retired++;
        ag_explain(t->hash, -1, "graph %u (%d ops) dropped: %s", t->id, t->nops, why);
    }
    ag_template_free(t);
}

/* ---- memory the program frees --------------------------------------------------- */

/* Whether an 8-byte-aligned word of args lies in [lo, hi). */
static int points_into(const unsigned char *args, size_t len, uintptr_t lo, uintptr_t hi)
{
    for (size_t off = 0; off + 8 <= len; off += 8) {
        uint64_t v;
        memcpy(&v, args + off, 8);
        if (v >= lo && v < hi)
            return 1;
    }
    return 0;
}

struct addr_range { uintptr_t lo, hi; };

static int template_points_into(const struct ag_template *t, const void *range)
{
    const struct addr_range *r = range;
    for (int c = 0; c < t->nchunks; c++) {
        const struct ag_chunk *ch = &t->chunks[c];
        if (ch->base && points_into(ch->base, ch->args_len, r->lo, r->hi))
            return 1;
        for (int v = 0; v < ch->nvariants; v++)
            if (points_into(ch->variants[v].args, ch->args_len, r->lo, r->hi))
                return 1;
    }
    return 0;
}

/* Drops every graph that holds a pointer into [lo, hi) in any of its nodes' args
 * (as built, and as patched in each variant).  Returns how many. */
int ag_templates_count_pointing_into(uintptr_t lo, uintptr_t hi)
{
    struct addr_range range = { lo, hi };
    struct ag_template *t, *tmp;
    int n = 0;
    HASH_ITER(hh, ag_eng.by_hash, t, tmp)
        n += !t->failed && template_points_into(t, &range);
    return n;
}
