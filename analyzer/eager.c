/* eager.c -- eager windows (analyzer/FORMAT.md, section 3) built in one pass over the
 * trace's GPU records and section 1d records, merged by correlation.  Per device, the
 * eager records (no graph id) between two host synchronizations form a window, cut
 * into sub-windows of at most EAGER_WINDOW_MAX records (or EAGER_EDGES_MAX edges).
 * Each record gets its edges from
 *   - stream order: the previous record on its stream;
 *   - events: a stream wait's matching event record (same sync id) captured the last
 *     record on the recorded stream; the wait's stream's next record follows it;
 *   - implicit order: a record on a stream without stream_info (possibly the legacy
 *     default stream) follows the last record of every stream not known to be
 *     non_blocking, and precedes their next ones;
 * and a ready floor: its submission, the end of its driver call (else the time the host
 * made its call, estimated from the timed calls around it: host_clock.c; else the
 * window's first start), the ends of predecessors outside its window, of graph
 * launches of its device submitted before it that had ended when it started (their
 * stream is unknown: eager_graphs.c), and for a wait whose event record is not in the
 * trace, of everything submitted before it.
 * The floor only raises ready times, so a record is never called falsely delayed
 * behind work it may have waited for.  Memory: the open window of each device and a
 * few words per stream and event record; closed windows go to eager_group.c. */
#include "eager.h"

#include "host_clock.h"
#include "vec.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define NO_TIME INT64_MIN

/* A record as a predecessor: which, in which window (serial), at which position, on
 * which stream (state index). */
struct rec_ref {
    uint32_t ev, window, pos, stream;
};
static const struct rec_ref no_ref = { NONE, 0, 0, NONE };

enum edge_kind { EDGE_STREAM, EDGE_EVENT, EDGE_IMPLICIT };

struct pred {
    struct rec_ref ref;
    uint8_t kind;
};

struct stream_state {
    struct rec_ref last;        /* its last record so far */
    struct pred *pending;       /* predecessors of its next record (waits, implicit) */
    size_t n_pending, cap_pending;
    int64_t pending_floor;      /* from waits whose event record is unknown */
    uint64_t legacy_seen;       /* the device's legacy_seq at its last record */
    uint64_t dirty_seen;        /* the legacy_seq at which it joined the dirty list */
    uint32_t window_seen;       /* the last window it had a record in */
    uint32_t device;            /* device state */
    uint8_t legacy, non_blocking, has_records;
};

/* The open window of a device: buffers reused from window to window. */
struct window_buf {
    uint32_t serial;            /* 0: none open */
    uint32_t *ev;
    int64_t *floor, *driver;
    size_t n, cap_ev, cap_floor, cap_driver;
    uint32_t *from, *to;
    size_t m, cap_from, cap_to;
    uint32_t streams;
    uint64_t event_edges, implicit_edges;
};

struct device_state {
    int32_t device;
    struct window_buf win;
    struct rec_ref legacy_last; /* the last record on a stream without stream_info */
    uint64_t legacy_seq;        /* records on such streams so far, plus 1 */
    uint32_t *dirty;            /* streams (not non_blocking) with records since then */
    size_t n_dirty, cap_dirty;
};

/* What an event record captured: a range of `captured`. */
struct capture {
    uint32_t first, n;
};

enum item_kind { ITEM_GPU, ITEM_ORDER };

/* One per GPU record and section 1d record, all sorted at once: kept small (a tie on
 * the correlation reads the rest from the trace). */
struct item {
    int64_t corr;
    uint32_t idx;               /* trace.ev or trace.ord */
    uint32_t kind;
};

struct eager_pass {
    struct analysis *a;
    const struct trace *t;
    struct keymap stream_ids, device_ids, sync_ids;
    struct stream_state *streams;
    size_t n_streams, cap_streams;
    struct device_state *devices;
    size_t n_devices, cap_devices;
    uint32_t *open;             /* devices with an open window */
    size_t n_open, cap_open;
    struct capture *captures;
    size_t n_captures, cap_captures;
    struct rec_ref *captured;
    size_t n_captured, cap_captured;
    struct pred *preds;         /* the predecessors of the record being placed */
    size_t n_preds, cap_preds;
    const struct api_call *api; /* the trace's driver calls, sorted by correlation */
    size_t n_api, api_at;
    struct host_clock clock;    /* submission times of records without a driver call */
    int64_t end_max;            /* the latest end among GPU records so far */
    struct graph_launches graphs;
    uint32_t next_serial;
    int failed;                 /* out of memory */
    struct eager_collect collect;
};

/* Room for one more element; sets failed (sticky) when there is none. */
static int room(struct eager_pass *p, void *array, size_t *cap, size_t n, size_t size)
{
    if (!p->failed && vec_reserve(array, cap, n + 1, size) != 0)
        p->failed = 1;
    return p->failed ? -1 : 0;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int ref_newer(struct rec_ref x, struct rec_ref y)
{
    return x.window != y.window ? x.window > y.window : x.pos > y.pos;
}

static uint32_t window_max = EAGER_WINDOW_MAX;

void eager_set_window_max(uint32_t max)
{
    window_max = max ? max : EAGER_WINDOW_MAX;
}

uint32_t eager_window_max(void)
{
    return window_max;
}

/* ---- devices and streams --------------------------------------------------------- */

static uint32_t device_of(struct eager_pass *p, int32_t device)
{
    uint32_t i = keymap_get(&p->device_ids, device, 0);
    if (i != NONE)
        return i;
    if (room(p, &p->devices, &p->cap_devices, p->n_devices, sizeof *p->devices) != 0
        || keymap_put(&p->device_ids, device, 0, (uint32_t)p->n_devices) != 0) {
        p->failed = 1;
        return NONE;
    }
    p->devices[p->n_devices] = (struct device_state){ .device = device, .legacy_last = no_ref,
                                                      .legacy_seq = 1 };
    return (uint32_t)p->n_devices++;
}

/* The stream PyTorch's profiler names the legacy default stream by; PyTorch creates
 * every other stream non-blocking, and Kineto writes no stream_info. */
#define KINETO_LEGACY_STREAM 7

/* The state of (device, stream), made on first use: without stream_info (legacy), but
 * in a Kineto trace any stream but KINETO_LEGACY_STREAM is non-blocking. */
static uint32_t stream_of(struct eager_pass *p, int32_t device, int64_t stream)
{
    uint32_t i = keymap_get(&p->stream_ids, device, stream), dev;
    if (i != NONE)
        return i;
    if ((dev = device_of(p, device)) == NONE
        || room(p, &p->streams, &p->cap_streams, p->n_streams, sizeof *p->streams) != 0
        || keymap_put(&p->stream_ids, device, stream, (uint32_t)p->n_streams) != 0) {
        p->failed = 1;
        return NONE;
    }
    int kineto = p->t->source == SRC_KINETO && stream != KINETO_LEGACY_STREAM;
    p->streams[p->n_streams] = (struct stream_state){ .last = no_ref, .device = dev,
                                                      .pending_floor = NO_TIME, .legacy = !kineto,
                                                      .non_blocking = (uint8_t)kineto };
    return (uint32_t)p->n_streams++;
}

static void apply_stream_info(struct eager_pass *p)
{
    for (size_t i = 0; i < p->t->n_sinfo && !p->failed; i++) {
        const struct stream_info *si = &p->t->sinfo[i];
        uint32_t s = stream_of(p, si->device, si->stream);
        if (s != NONE) {
            p->streams[s].legacy = 0;
            p->streams[s].non_blocking = si->non_blocking;
        }
    }
}

/* ---- windows --------------------------------------------------------------------- */

/* Floors made final: the driver call's end, else the window's first start. */
static int64_t finish_floors(struct window_buf *w, const struct trace *t)
{
    int64_t t0 = INT64_MAX;
    for (size_t i = 0; i < w->n; i++)
        t0 = t->ev[w->ev[i]].ts < t0 ? t->ev[w->ev[i]].ts : t0;
    for (size_t i = 0; i < w->n; i++)
        w->floor[i] = max64(w->floor[i], w->driver[i] != NO_TIME ? w->driver[i] : t0);
    return t0;
}

static void window_close(struct eager_pass *p, struct device_state *d)
{
    struct window_buf *w = &d->win;
    struct eager_window view = { d->device, (uint32_t)w->n, (uint32_t)w->m, w->streams,
                                 w->ev, w->floor, w->from, w->to, 0 };
    if (w->serial == 0)
        return;
    w->serial = 0;
    if (w->n == 0 || p->failed)
        return;
    view.t0 = finish_floors(w, p->t);
    if (eager_collect_add(&p->collect, p->a, &view) != 0)
        p->failed = 1;
    p->a->eager.windows++;
    p->a->eager.records += w->n;
    p->a->eager.event_edges += w->event_edges;
    p->a->eager.implicit_edges += w->implicit_edges;
}

static void window_open(struct eager_pass *p, uint32_t dev)
{
    struct device_state *d = &p->devices[dev];
    if (d->win.serial != 0) {
        window_close(p, d);
        p->a->eager.split++;
    } else if (room(p, &p->open, &p->cap_open, p->n_open, sizeof *p->open) == 0) {
        p->open[p->n_open++] = dev;
    }
    d->win.serial = ++p->next_serial;
    d->win.n = d->win.m = 0;
    d->win.streams = 0;
    d->win.event_edges = d->win.implicit_edges = 0;
}

/* A host synchronization: every open window ends. */
static void close_all(struct eager_pass *p)
{
    for (size_t i = 0; i < p->n_open; i++)
        window_close(p, &p->devices[p->open[i]]);
    p->n_open = 0;
}

/* ---- predecessors ---------------------------------------------------------------- */

static void add_pred(struct eager_pass *p, struct rec_ref ref, uint8_t kind)
{
    if (ref.ev == NONE || room(p, &p->preds, &p->cap_preds, p->n_preds, sizeof *p->preds))
        return;
    p->preds[p->n_preds++] = (struct pred){ ref, kind };
}

/* For the stream's next record; one per source stream (the latest: it follows the
 * others on that stream). */
static void add_pending(struct eager_pass *p, struct stream_state *s, struct rec_ref ref,
                        uint8_t kind)
{
    for (size_t i = 0; i < s->n_pending; i++)
        if (s->pending[i].ref.stream == ref.stream) {
            if (ref_newer(ref, s->pending[i].ref))
                s->pending[i] = (struct pred){ ref, kind };
            return;
        }
    if (room(p, &s->pending, &s->cap_pending, s->n_pending, sizeof *s->pending) == 0)
        s->pending[s->n_pending++] = (struct pred){ ref, kind };
}

/* The implicit order (a stream without stream_info): after the last record of every
 * stream not known to be non_blocking, through the device's dirty list (the streams
 * with records since its last such record, which itself follows all earlier ones). */
static void implicit_preds(struct eager_pass *p, uint32_t si)
{
    const struct stream_state *s = &p->streams[si];
    const struct device_state *d = &p->devices[s->device];
    if (s->legacy) {
        for (size_t i = 0; i < d->n_dirty; i++)
            if (d->dirty[i] != si)
                add_pred(p, p->streams[d->dirty[i]].last, EDGE_IMPLICIT);
        add_pred(p, d->legacy_last, EDGE_IMPLICIT);
    } else if (!s->non_blocking && s->legacy_seen < d->legacy_seq) {
        add_pred(p, d->legacy_last, EDGE_IMPLICIT);
    }
}

static void gather_preds(struct eager_pass *p, uint32_t si)
{
    const struct stream_state *s = &p->streams[si];
    p->n_preds = 0;
    add_pred(p, s->last, EDGE_STREAM);
    for (size_t i = 0; i < s->n_pending; i++)
        add_pred(p, s->pending[i].ref, s->pending[i].kind);
    implicit_preds(p, si);
}

static int by_ref(const void *x, const void *y)
{
    const struct pred *a = x, *b = y;
    if (a->ref.window != b->ref.window)
        return a->ref.window < b->ref.window ? -1 : 1;
    if (a->ref.pos != b->ref.pos)
        return a->ref.pos < b->ref.pos ? -1 : 1;
    return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static size_t in_window(const struct eager_pass *p, uint32_t serial)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_preds; i++)
        n += serial != 0 && p->preds[i].ref.window == serial;
    return n;
}

static void add_edge(struct eager_pass *p, struct window_buf *w, const struct pred *pr)
{
    if (room(p, &w->from, &w->cap_from, w->m, sizeof *w->from) != 0
        || room(p, &w->to, &w->cap_to, w->m, sizeof *w->to) != 0)
        return;
    w->from[w->m] = pr->ref.pos;
    w->to[w->m++] = (uint32_t)w->n;
    w->event_edges += pr->kind == EDGE_EVENT;
    w->implicit_edges += pr->kind == EDGE_IMPLICIT;
}

/* Predecessors in the window become edges to the record about to be appended (each
 * once, as its strongest kind); the others raise its floor. */
static int64_t place_preds(struct eager_pass *p, struct window_buf *w, int64_t floor)
{
    sort_n(p->preds, p->n_preds, sizeof *p->preds, by_ref);
    for (size_t i = 0; i < p->n_preds; i++) {
        const struct pred *pr = &p->preds[i];
        if (i > 0 && pr->ref.window == pr[-1].ref.window && pr->ref.pos == pr[-1].ref.pos)
            continue;
        if (pr->ref.window == w->serial)
            add_edge(p, w, pr);
        else
            floor = max64(floor, kev_end(&p->t->ev[pr->ref.ev]));
    }
    return floor;
}

/* ---- one record ------------------------------------------------------------------ */

/* The end of the driver call of that correlation (calls are visited in order). */
static int64_t driver_end(struct eager_pass *p, int64_t corr)
{
    int64_t end = NO_TIME;
    while (p->api_at < p->n_api && p->api[p->api_at].corr < corr)
        p->api_at++;
    for (size_t i = p->api_at; i < p->n_api && p->api[i].corr == corr; i++)
        end = max64(end, p->api[i].end);
    return end;
}

/* When the record's work was submitted: its driver call's end, else the host's time
 * at its call (never after the record started), else NO_TIME; counted by source. */
static int64_t submitted(struct eager_pass *p, const struct kev *k)
{
    int64_t t = driver_end(p, k->corr);
    if (t != NO_TIME) {
        p->a->eager.submit_api++;
        return t;
    }
    t = host_clock_at(&p->clock, k->corr);
    if (t == HOST_NO_TIME) {
        p->a->eager.submit_unknown++;
        return NO_TIME;
    }
    p->a->eager.submit_host++;
    return t < k->ts ? t : k->ts;
}

static void window_append(struct eager_pass *p, struct window_buf *w, struct stream_state *s,
                          uint32_t ev, int64_t floor, int64_t driver)
{
    if (room(p, &w->ev, &w->cap_ev, w->n, sizeof *w->ev) != 0
        || room(p, &w->floor, &w->cap_floor, w->n, sizeof *w->floor) != 0
        || room(p, &w->driver, &w->cap_driver, w->n, sizeof *w->driver) != 0)
        return;
    w->ev[w->n] = ev;
    w->floor[w->n] = floor;
    w->driver[w->n] = driver;
    w->n++;
    if (s->window_seen != w->serial) {
        s->window_seen = w->serial;
        w->streams++;
    }
}

/* The record is the stream's last now; the implicit order moves on. */
static void record_placed(struct eager_pass *p, uint32_t si, struct rec_ref ref)
{
    struct stream_state *s = &p->streams[si];
    struct device_state *d = &p->devices[s->device];
    s->last = ref;
    s->has_records = 1;
    s->n_pending = 0;
    s->pending_floor = NO_TIME;
    if (s->legacy) {
        d->legacy_last = ref;
        d->n_dirty = 0;
        s->legacy_seen = ++d->legacy_seq;
    } else if (!s->non_blocking) {
        s->legacy_seen = d->legacy_seq;
        if (s->dirty_seen != d->legacy_seq
            && room(p, &d->dirty, &d->cap_dirty, d->n_dirty, sizeof *d->dirty) == 0) {
            d->dirty[d->n_dirty++] = si;
            s->dirty_seen = d->legacy_seq;
        }
    }
}

static void eager_record(struct eager_pass *p, uint32_t ev)
{
    const struct kev *k = &p->t->ev[ev];
    uint32_t si = stream_of(p, k->device, k->stream);
    struct stream_state *s;
    struct device_state *d;
    int64_t floor;
    if (si == NONE)
        return;
    s = &p->streams[si];
    d = &p->devices[s->device];
    gather_preds(p, si);
    if (d->win.serial == 0 || d->win.n >= window_max
        || d->win.m + in_window(p, d->win.serial) > EAGER_EDGES_MAX)
        window_open(p, s->device);
    floor = max64(s->pending_floor, graph_launches_floor(&p->graphs, k->device,
                                                         k->ts + p->a->eps));
    floor = place_preds(p, &d->win, floor);
    window_append(p, &d->win, s, ev, floor, submitted(p, k));
    record_placed(p, si, (struct rec_ref){ ev, d->win.serial, (uint32_t)d->win.n - 1, si });
}

/* ---- section 1d records ---------------------------------------------------------- */

static void capture_ref(struct eager_pass *p, struct capture *c, struct rec_ref ref)
{
    if (ref.ev == NONE
        || room(p, &p->captured, &p->cap_captured, p->n_captured, sizeof *p->captured))
        return;
    p->captured[p->n_captured++] = ref;
    c->n++;
}

/* What the event captures: the stream's last record, and what its next record would
 * follow implicitly (a stream without stream_info, or the legacy stream's last work). */
static void event_record(struct eager_pass *p, const struct order_rec *o)
{
    uint32_t si = stream_of(p, o->device, o->stream);
    struct capture c = { (uint32_t)p->n_captured, 0 };
    if (si == NONE || !(o->flags & ORDER_HAS_SYNC_ID)
        || room(p, &p->captures, &p->cap_captures, p->n_captures, sizeof *p->captures) != 0)
        return;
    capture_ref(p, &c, p->streams[si].last);
    p->n_preds = 0;
    implicit_preds(p, si);
    for (size_t i = 0; i < p->n_preds; i++)
        capture_ref(p, &c, p->preds[i].ref);
    if (keymap_put(&p->sync_ids, (int64_t)o->sync_id, 0, (uint32_t)p->n_captures) != 0)
        p->failed = 1;
    p->captures[p->n_captures++] = c;
}

static void stream_wait(struct eager_pass *p, const struct order_rec *o)
{
    uint32_t si = stream_of(p, o->device, o->stream), ci = NONE;
    struct stream_state *s;
    if (si == NONE)
        return;
    s = &p->streams[si];
    if (o->flags & ORDER_HAS_SYNC_ID)
        ci = keymap_get(&p->sync_ids, (int64_t)o->sync_id, 0);
    if (ci == NONE) {
        s->pending_floor = max64(s->pending_floor, p->end_max);
        p->a->eager.unmatched_waits++;
        return;
    }
    for (uint32_t i = 0; i < p->captures[ci].n; i++)
        add_pending(p, s, p->captured[p->captures[ci].first + i], EDGE_EVENT);
}

static void order_record(struct eager_pass *p, const struct order_rec *o)
{
    if (o->kind == ORDER_HOST_SYNC) {
        close_all(p);
        p->a->eager.host_syncs++;
    } else if (o->flags & ORDER_HAS_STREAM) {
        if (o->kind == ORDER_EVENT_RECORD)
            event_record(p, o);
        else
            stream_wait(p, o);
    }
}

static void gpu_record(struct eager_pass *p, uint32_t ev)
{
    const struct kev *k = &p->t->ev[ev];
    if (k->flags & KEV_LAUNCHED)
        graph_launches_record(&p->graphs, k);
    else
        eager_record(p, ev);
    p->end_max = max64(p->end_max, kev_end(k));
}

/* ---- the pass -------------------------------------------------------------------- */

static const struct kev *sort_ev;

/* By correlation, section 1d records after GPU records, these by device and start
 * (read from the trace: only records sharing a correlation get that far). */
static int by_corr(const void *x, const void *y)
{
    const struct item *a = x, *b = y;
    if (a->corr != b->corr)
        return a->corr < b->corr ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->kind == ITEM_GPU) {
        const struct kev *p = &sort_ev[a->idx], *q = &sort_ev[b->idx];
        if (p->device != q->device)
            return p->device < q->device ? -1 : 1;
        if (p->ts != q->ts)
            return p->ts < q->ts ? -1 : 1;
    }
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int is_node(const struct kev *k)
{
    return !(k->flags & KEV_LAUNCHED) && (k->flags & KEV_CORR) && (k->flags & KEV_STREAM);
}

/* Every GPU record with a correlation (nodes, and graph records for the floors) and
 * every section 1d record, by correlation (GPU records first, by device, then start). */
static struct item *merged_items(const struct trace *t, size_t *n_out)
{
    struct item *it = malloc((t->n + t->n_ord + 1) * sizeof *it);
    size_t n = 0;
    if (it == NULL)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        if ((t->ev[i].flags & KEV_CORR) && ((t->ev[i].flags & KEV_LAUNCHED) || is_node(&t->ev[i])))
            it[n++] = (struct item){ t->ev[i].corr, (uint32_t)i, ITEM_GPU };
    for (size_t i = 0; i < t->n_ord; i++)
        it[n++] = (struct item){ t->ord[i].corr, (uint32_t)i, ITEM_ORDER };
    sort_ev = t->ev;
    sort_n(it, n, sizeof *it, by_corr);
    *n_out = n;
    return it;
}

static int by_api_corr(const void *x, const void *y)
{
    const struct api_call *a = x, *b = y;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static void run_pass(struct eager_pass *p, const struct item *it, size_t n)
{
    apply_stream_info(p);
    for (size_t i = 0; i < n && !p->failed; i++) {
        if (it[i].kind == ITEM_GPU)
            gpu_record(p, it[i].idx);
        else
            order_record(p, &p->t->ord[it[i].idx]);
    }
    close_all(p);
    for (size_t i = 0; i < p->n_streams; i++)
        p->a->eager.legacy_streams += p->streams[i].has_records && p->streams[i].legacy;
}

static void pass_free(struct eager_pass *p)
{
    for (size_t i = 0; i < p->n_streams; i++)
        free(p->streams[i].pending);
    for (size_t i = 0; i < p->n_devices; i++) {
        struct window_buf *w = &p->devices[i].win;
        free(w->ev);
        free(w->floor);
        free(w->driver);
        free(w->from);
        free(w->to);
        free(p->devices[i].dirty);
    }
    free(p->streams);
    free(p->devices);
    free(p->open);
    free(p->captures);
    free(p->captured);
    free(p->preds);
    host_clock_free(&p->clock);
    graph_launches_free(&p->graphs);
    keymap_free(&p->stream_ids);
    keymap_free(&p->device_ids);
    keymap_free(&p->sync_ids);
    eager_collect_free(&p->collect);
}

/* Eager records counted (those that can be placed, those that cannot) and whether
 * they share one (device, stream). */
static size_t count_eager(struct analysis *a)
{
    const struct trace *t = a->t;
    const struct kev *first = NULL;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct kev *k = &t->ev[i];
        if (k->flags & KEV_LAUNCHED)
            continue;
        if (!is_node(k)) {
            a->eager.left_out++;
            continue;
        }
        n++;
        if (first == NULL)
            first = k;
        else if (k->device != first->device || k->stream != first->stream)
            a->eager.multi_stream = 1;
    }
    return n;
}

/* Room in the analysis for every eager record (order and floors). */
static int reserve_order(struct analysis *a, size_t n)
{
    uint32_t *order = realloc(a->order, (a->n_order + n + 1) * sizeof *order);
    if (order == NULL)
        return -1;
    a->order = order;
    a->eager_first = a->n_order;
    a->eager_floor = malloc((n + 1) * sizeof *a->eager_floor);
    return a->eager_floor == NULL ? -1 : 0;
}

int eager_build(struct analysis *a)
{
    const struct trace *t = a->t;
    struct eager_pass p = { .a = a, .t = t, .end_max = NO_TIME };
    struct item *items;
    size_t n_items = 0, n = count_eager(a);
    a->eager.present = t->with_order > 0;
    if (!a->eager.present || n == 0)
        return 0;
    if (reserve_order(a, n) != 0)
        return -1;
    items = merged_items(t, &n_items);
    if (items == NULL || graph_launches_init(&p.graphs, t) != 0) {
        free(items);
        pass_free(&p);
        return -1;
    }
    /* sorted in place, not copied: nothing else reads the API records */
    sort_n(t->api, t->n_api, sizeof *t->api, by_api_corr);
    p.api = t->api;
    p.n_api = t->n_api;
    if (host_clock_init(&p.clock, p.api, p.n_api, t) != 0) {
        free(items);
        pass_free(&p);
        return -1;
    }
    run_pass(&p, items, n_items);
    free(items);
    if (!p.failed && eager_collect_finish(&p.collect, a) != 0)
        p.failed = 1;
    pass_free(&p);
    return p.failed ? -1 : 0;
}
