/* record_window.c -- record: the window trace.
 *
 * Every op the engine sees between two flush points is appended here with copies of
 * its shape and args, the slot of its stream (streams numbered by first use), and,
 * for an event wait, how far back its event was recorded in this window.  Those
 * three make an op's key; the keys, folded in order, make the window's hash, which is
 * its identity when windows are compared.  The period detector looks for the last
 * ops repeating back to back, so that programs that rarely synchronize still get
 * graphs.  Nothing here calls the backend.
 */
#include "engine_internal.h"

#include <stdlib.h>
#include <string.h>

#define WINDOW_SEED 0x6a09e667f3bcc909ull

static void mark(struct ag_window *w, enum ag_skip why)
{
    if (w->ineligible == AG_SKIP_NONE)
        w->ineligible = why;
}

void ag_window_reset(struct ag_window *w)
{
    w->n = 0;
    w->used = 0;
    w->nslots = 0;
    w->ineligible = AG_SKIP_NONE;
    w->ctx = 0;
    w->full_from = 0;
    w->hash = WINDOW_SEED;
    w->fingerprint = 0;
    w->fingerprint_valid = 1;
    w->kernels = 0;
    w->period_base = 0;
    w->period = 0;
    w->run = 0;
    w->cut_end = 0;
    w->events_from = 0;
    w->last_return_ns = 0;
    w->program_ns = 0;
    w->program_gaps = 0;
    if (++w->gen == 0) {            /* generations wrapped: clear for real */
        memset(w->evmap, 0, sizeof w->evmap);
        memset(w->last, 0, sizeof w->last);
        w->gen = 1;
    }
}

static int grow(struct ag_window *w, size_t bytes)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 1024;
        struct ag_wop *ops = realloc(w->ops, cap * sizeof *ops);
        if (ops == NULL)
            return 0;
        w->ops = ops;
        w->cap = cap;
    }
    if (w->used + bytes > w->arena_cap) {
        size_t cap = w->arena_cap ? 2 * w->arena_cap : 65536;
        unsigned char *arena;
        while (cap < w->used + bytes)
            cap *= 2;
        arena = realloc(w->arena, cap);
        if (arena == NULL)
            return 0;
        w->arena = arena;
        w->arena_cap = cap;
    }
    return 1;
}

/* Room for one more op and `bytes` of arena. */
static inline int reserve(struct ag_window *w, size_t bytes)
{
    return (w->n < w->cap && w->used + bytes <= w->arena_cap) || grow(w, bytes);
}

static uint32_t put(struct ag_window *w, const void *data, uint32_t len)
{
    uint32_t off = (uint32_t)w->used;
    if (len)
        memcpy(w->arena + off, data, len);
    w->used += (len + 7u) & ~7u;
    return off;
}

static int slot_of(struct ag_window *w, uintptr_t stream)
{
    for (int i = 0; i < w->nslots; i++)
        if (w->slot_key[i] == stream)
            return i;
    if (w->nslots == AG_MAX_SLOTS) {
        mark(w, AG_SKIP_STREAMS);
        return 0;
    }
    w->slot_key[w->nslots] = stream;
    return w->nslots++;
}

#define NO_RECORD UINT32_MAX        /* an evmap entry of a destroyed event */

static struct ag_evpos *event_slot(struct ag_window *w, uintptr_t event, int create);

/* The event map is full (a long run without a sync whose events keep changing, as
 * PyTorch's pools hand them out): the older half of its records go, and no slice
 * that would hold one of them is graphed (events_from), since a wait on it would now
 * look unlinked.  Returns 0 when nothing could go. */
static int prune_events(struct ag_window *w)
{
    struct ag_evpos keep[AG_EVMAP_SIZE];
    uint32_t lo = UINT32_MAX, hi = 0;
    int n = 0;
    for (size_t k = 0; k < AG_EVMAP_SIZE; k++) {
        const struct ag_evpos *e = &w->evmap[k];
        if (e->gen == w->gen && e->pos != NO_RECORD) {
            lo = e->pos < lo ? e->pos : lo;
            hi = e->pos > hi ? e->pos : hi;
        }
    }
    if (lo == UINT32_MAX)
        return 0;
    uint32_t cut = lo + (hi - lo) / 2 + 1;   /* at least the oldest goes */
    for (size_t k = 0; k < AG_EVMAP_SIZE; k++) {
        const struct ag_evpos *e = &w->evmap[k];
        if (e->gen != w->gen)
            continue;
        if (e->pos != NO_RECORD && e->pos >= cut)
            keep[n++] = *e;
        else if (e->pos != NO_RECORD && (size_t)e->pos + 1 > w->events_from)
            w->events_from = (size_t)e->pos + 1;
    }
    memset(w->evmap, 0, sizeof w->evmap);
    for (int k = 0; k < n; k++)
        *event_slot(w, keep[k].event, 1) = keep[k];
    return 1;
}

static struct ag_evpos *event_slot(struct ag_window *w, uintptr_t event, int create)
{
    size_t h = (size_t)ag_hash_mix(0, event) & (AG_EVMAP_SIZE - 1);
    for (int tries = 0; tries < 2; tries++) {
        for (size_t probe = 0; probe < AG_EVMAP_SIZE; probe++) {
            struct ag_evpos *e = &w->evmap[(h + probe) & (AG_EVMAP_SIZE - 1)];
            if (e->gen == w->gen && e->event == event)
                return e;
            if (e->gen != w->gen) {
                if (!create)
                    return NULL;
                e->gen = w->gen;
                e->event = event;
                return e;
            }
        }
        if (!create || !prune_events(w))
            break;
    }
    if (create)
        mark(w, AG_SKIP_EVENTS);
    return NULL;
}

uint32_t ag_window_link_back(struct ag_window *w, uintptr_t event)
{
    struct ag_evpos *e = event_slot(w, event, 0);
    return e && e->pos != NO_RECORD ? (uint32_t)(w->n - e->pos) : 0;
}

static void link_events(struct ag_window *w, struct ag_wop *o)
{
    struct ag_evpos *e;
    if (o->kind == AG_OP_EVENT_WAIT) {
        o->link_back = ag_window_link_back(w, o->event);
    } else if (o->kind == AG_OP_EVENT_RECORD) {
        e = event_slot(w, o->event, 1);
        if (e)
            e->pos = (uint32_t)w->n;
    }
}

void ag_window_forget_event(struct ag_window *w, uintptr_t event)
{
    struct ag_evpos *e = event_slot(w, event, 0);
    for (size_t i = 0; i < w->n; i++) {
        struct ag_wop *o = &w->ops[i];
        if (!ag_is_event_op(o->kind) || o->event != event)
            continue;
        o->event = 0;               /* a graph built from the window names the */
        if (!o->light && o->args_len == sizeof(uint64_t))   /* placeholder there */
            memset(w->arena + o->args_off, 0, sizeof(uint64_t));
    }
    if (e)
        e->pos = NO_RECORD;         /* kept: unlinking would cut other entries' probes */
}

/* The op's shape and args go to the arena, unless it was recorded light. */
static void keep_bytes(struct ag_window *w, struct ag_wop *o, const struct ag_op *op)
{
    o->shape_off = put(w, op->shape, op->shape_len);
    o->args_off = put(w, op->args, op->args_len);
}

/* What every appended op ends with: its slot, its key and the window's hash. */
static struct ag_wop *append_end(struct ag_window *w, struct ag_wop *o)
{
    o->slot = (unsigned char)slot_of(w, o->stream);
    o->key = ag_hash_mix(ag_hash_mix(o->hash, o->slot), o->link_back);
    w->hash = ag_hash_mix(w->hash, o->key);
    w->kernels += o->kind == AG_OP_KERNEL;
    w->n++;
    if (w->n >= AG_WINDOW_MAX)
        mark(w, AG_SKIP_TOO_LONG);
    return o;
}

struct ag_wop *ag_window_append(struct ag_window *w, const struct ag_op *op)
{
    struct ag_wop *o;
    if (!reserve(w, op->light ? 0 : (size_t)op->shape_len + op->args_len + 16))
        return NULL;
    if (!op->light && w->ctx == 0)
        w->ctx = op->ctx;
    else if (!op->light && op->ctx != w->ctx)
        mark(w, AG_SKIP_CONTEXT);
    o = &w->ops[w->n];
    *o = (struct ag_wop){ .id = op->id, .ctx = op->ctx, .light = op->light };
    w->fingerprint = ag_futile_fold(w->fingerprint, op->skim);
    if (op->light) {
        o->layout = NULL;               /* no bytes kept: none to read back */
        o->shape_len = o->args_len = 0;
        w->full_from = w->n + 1;
    } else {
        keep_bytes(w, o, op);
    }
    link_events(w, o);
    return append_end(w, o);
}

/* A held op of kind `kind` (a constant in each caller below, so that a held kernel's
 * append has no event code). */
static AG_INLINE struct ag_wop *append_held(struct ag_window *w, const struct ag_held_op *h,
                                            unsigned char kind)
{
    struct ag_wop *o;
    if (!reserve(w, (size_t)h->shape_len + h->args_len + 16))
        return NULL;
    o = &w->ops[w->n];
    *o = (struct ag_wop){
        .hash = h->hash, .stream = h->stream, .ctx = w->ctx,
        .event = kind == AG_OP_KERNEL ? 0 : h->event, .layout = h->layout,
        .shape_len = h->shape_len, .shape_off = put(w, h->shape, h->shape_len),
        .args_len = h->args_len, .args_off = put(w, h->args, h->args_len),
        .entry = h->entry, .kind = kind, .held = 1,
    };
    w->fingerprint_valid = 0;           /* a held window is graphed, not futile */
    if (kind == AG_OP_EVENT_WAIT)
        o->link_back = h->link_back;    /* looked up by the caller: not probed again */
    else if (kind != AG_OP_KERNEL)
        link_events(w, o);
    return append_end(w, o);
}

struct ag_wop *ag_window_append_held(struct ag_window *w, const struct ag_held_op *h)
{
    return append_held(w, h, AG_OP_KERNEL);
}

struct ag_wop *ag_window_append_held_event(struct ag_window *w, const struct ag_held_op *h)
{
    return append_held(w, h, h->kind);
}

void ag_window_view(const struct ag_window *w, size_t i, struct ag_op *out)
{
    const struct ag_wop *o = &w->ops[i];
    *out = (struct ag_op){ .id = o->id, .ctx = o->ctx, .shape = w->arena + o->shape_off,
                           .args = w->arena + o->args_off };
    out->link = AG_LINK_EXTERNAL;
}

/* ---- period detection --------------------------------------------------------- */

static struct ag_lastpos *last_slot(struct ag_window *w, uint64_t key)
{
    return &w->last[(key ^ (key >> 29)) & (AG_LAST_SIZE - 1)];
}

/* Length of the template cut for period p: a multiple of p of at least period_min. */
static size_t template_length(size_t p, int period_min)
{
    size_t m = ((size_t)period_min + p - 1) / p;
    return p * (m ? m : 1);
}

/* Counts back how many positions x <= i have key[x] == key[x - p], up to `need`. */
static size_t run_back(const struct ag_window *w, size_t i, size_t p, size_t need)
{
    size_t run = 0;
    while (run < need && i - run >= w->period_base + p &&
           w->ops[i - run].key == w->ops[i - run - p].key)
        run++;
    return run;
}

/* Of the period's ops [start, start + len), the first whose hash no other of them has
 * (else the first of the rarest).  A replay starts at any op with its first op's hash,
 * so a template that starts where the period has its only such op starts no replay
 * that stops at once, elsewhere in the period (a layer's kernel in a training step).
 * Falls back to `start` when it cannot count. */
static size_t rarest_start(const struct ag_window *w, size_t start, size_t len)
{
    size_t cap = 16, best = start;
    while (cap < 2 * len)
        cap *= 2;
    struct count { uint64_t hash; uint32_t n; } *c = calloc(cap, sizeof *c);
    uint32_t fewest = UINT32_MAX;
    if (c == NULL)
        return start;
    for (int pass = 0; pass < 2; pass++)
        for (size_t x = start; x < start + len; x++) {
            uint64_t h = w->ops[x].hash;
            size_t k = (size_t)(h ^ (h >> 31)) & (cap - 1);
            while (c[k].n && c[k].hash != h)
                k = (k + 1) & (cap - 1);
            if (pass == 0) {
                c[k].hash = h;
                c[k].n++;
            } else if (c[k].n < fewest) {
                fewest = c[k].n;
                best = x;
            }
        }
    free(c);
    return best;
}

/* Called after the eagerly issued op n-1 was appended.  Returns the length L of a
 * template to cut (and *start, its first window position) when the last
 * max(warmup, 2) * L ops are back-to-back copies of one L-op block, at the block's
 * phase that starts with its rarest op; else 0. */
int ag_window_period(struct ag_window *w, size_t *start)
{
    size_t i = w->n - 1, copies = (size_t)(ag_eng.p.warmup < 2 ? 2 : ag_eng.p.warmup);
    uint64_t key = w->ops[i].key;
    struct ag_lastpos *last = last_slot(w, key);
    size_t len, need;

    if (i < w->period_base)
        return 0;
    if (w->period && i >= w->period_base + w->period && w->ops[i - w->period].key == key) {
        w->run++;
    } else if (last->gen == w->gen && last->key == key && last->pos >= w->period_base &&
               i - last->pos <= AG_PERIOD_MAX) {
        w->period = i - last->pos;
        w->cut_end = 0;
        len = template_length(w->period, ag_eng.p.period_min);
        w->run = run_back(w, i, w->period, copies * len - w->period);
    } else {
        w->period = 0;
        w->run = 0;
    }
    last->key = key;
    last->pos = (uint32_t)i;
    last->gen = w->gen;
    if (!w->period)
        return 0;
    len = template_length(w->period, ag_eng.p.period_min);
    need = copies * len - w->period;   /* the last copies * len ops repeat with period p */
    if (w->run < need || i + 1 - w->period_base < copies * len || len > AG_WINDOW_MAX / 2) {
        w->cut_end = 0;
        return 0;
    }
    if (w->cut_end == 0 || w->cut_end < i + 1 || w->cut_end > i + 1 + len)
        w->cut_end = rarest_start(w, i + 1 - len, len) + len;
    if (w->cut_end > i + 1)
        return 0;                    /* the run goes on to the template's chosen end */
    w->cut_end = 0;
    *start = i + 1 - len;
    return (int)len;
}
