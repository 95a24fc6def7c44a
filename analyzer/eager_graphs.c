/* eager_graphs.c -- graph launches as possible predecessors of eager records.  A
 * graph's records name internal streams, not the stream it was launched on, so any
 * launch submitted before an eager record (same device) may be one of its
 * predecessors -- but only one that had ended (all its records) by the time the
 * record started (within epsilon).  The latest such end raises the record's ready
 * time.  Launches (records of one (device, correlation)) are indexed by end time per
 * device: a prefix-maximum (Fenwick) tree over their sorted ends, filled in
 * correlation order as the eager pass meets them. */
#include "eager.h"

#include <stdlib.h>
#include <string.h>

struct launch {
    int32_t device;
    int64_t corr, end;
};

static int by_device_corr(const void *x, const void *y)
{
    const struct launch *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int by_device_end(const void *x, const void *y)
{
    const struct launch *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->end < b->end ? -1 : a->end > b->end;
}

/* Every graph launch (its records' latest end), sorted by (device, end). */
static struct launch *collect_launches(const struct trace *t, size_t *n_out)
{
    struct launch *l = malloc((t->n + 1) * sizeof *l);
    size_t n = 0, out = 0;
    if (l == NULL)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        if ((t->ev[i].flags & KEV_CORR) && (t->ev[i].flags & KEV_LAUNCHED))
            l[n++] = (struct launch){ t->ev[i].device, t->ev[i].corr, kev_end(&t->ev[i]) };
    sort_n(l, n, sizeof *l, by_device_corr);
    for (size_t i = 0; i < n; i++) {
        if (out > 0 && l[out - 1].device == l[i].device && l[out - 1].corr == l[i].corr) {
            l[out - 1].end = l[i].end > l[out - 1].end ? l[i].end : l[out - 1].end;
            continue;
        }
        l[out++] = l[i];
    }
    sort_n(l, out, sizeof *l, by_device_end);
    *n_out = out;
    return l;
}

int graph_launches_init(struct graph_launches *gl, const struct trace *t)
{
    size_t n = 0;
    struct launch *l = collect_launches(t, &n);
    memset(gl, 0, sizeof *gl);
    gl->ends = malloc((n + 1) * sizeof *gl->ends);
    gl->tree = malloc((n + 1) * sizeof *gl->tree);
    gl->slices = malloc((n + 1) * sizeof *gl->slices);
    if (l == NULL || gl->ends == NULL || gl->tree == NULL || gl->slices == NULL) {
        free(l);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || l[i].device != l[i - 1].device) {
            gl->slices[gl->n_slices] = (struct launch_slice){ i, 0 };
            if (keymap_put(&gl->devices, l[i].device, 0, (uint32_t)gl->n_slices++) != 0) {
                free(l);
                return -1;
            }
        }
        gl->slices[gl->n_slices - 1].n++;
        gl->ends[i] = l[i].end;
        gl->tree[i] = INT64_MIN;
    }
    free(l);
    return 0;
}

/* The number of ends <= t in a slice. */
static size_t count_upto(const int64_t *ends, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ends[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The pending launch goes into its device's tree, at the rank of its end (which is
 * among the device's ends: the pass meets a launch's records one after the other). */
static void flush(struct graph_launches *gl)
{
    uint32_t si;
    size_t k;
    if (!gl->pending)
        return;
    gl->pending = 0;
    si = keymap_get(&gl->devices, gl->device, 0);
    if (si == UINT32_MAX)
        return;
    const struct launch_slice *s = &gl->slices[si];
    int64_t *tree = gl->tree + s->first;
    for (k = count_upto(gl->ends + s->first, s->n, gl->end); k > 0 && k <= s->n; k += k & -k)
        tree[k - 1] = gl->end > tree[k - 1] ? gl->end : tree[k - 1];
}

void graph_launches_record(struct graph_launches *gl, const struct kev *k)
{
    if (gl->pending && (gl->device != k->device || gl->corr != k->corr))
        flush(gl);
    if (!gl->pending) {
        gl->pending = 1;
        gl->device = k->device;
        gl->corr = k->corr;
        gl->end = kev_end(k);
    } else if (kev_end(k) > gl->end) {
        gl->end = kev_end(k);
    }
}

int64_t graph_launches_floor(struct graph_launches *gl, int32_t device, int64_t start)
{
    uint32_t si;
    int64_t best = INT64_MIN;
    flush(gl);
    si = keymap_get(&gl->devices, device, 0);
    if (si == UINT32_MAX)
        return best;
    const struct launch_slice *s = &gl->slices[si];
    for (size_t k = count_upto(gl->ends + s->first, s->n, start); k > 0; k -= k & -k)
        best = gl->tree[s->first + k - 1] > best ? gl->tree[s->first + k - 1] : best;
    return best;
}

void graph_launches_free(struct graph_launches *gl)
{
    free(gl->ends);
    free(gl->tree);
    free(gl->slices);
    keymap_free(&gl->devices);
    memset(gl, 0, sizeof *gl);
}
