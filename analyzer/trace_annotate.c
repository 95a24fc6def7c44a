/* trace_annotate.c -- the input trace copied byte for byte, with flow events added
 * to its traceEvents (analyzer/FORMAT.md, "Annotated trace"): an arrow from A to B
 * ("ph":"s" on A, "ph":"f" with "bp":"e" on B, sharing id, cat and name) for every
 * graph dependency between two records of a replay, or edge of an eager window
 * (cat autograph.true_dependency)
 * and every false dependency (cat autograph.false_dependency). */
#include "report.h"

#include "input.h"

#include <stdlib.h>
#include <string.h>

#define CAT_TRUE "autograph.true_dependency"
#define CAT_FALSE "autograph.false_dependency"

struct flows {
    struct out *o;
    const struct analysis *a;
    uint64_t id;
    int comma;                  /* the array already has items: the first flow needs ',' */
};

/* A pid or tid as the record had it: a number, a string, or 0 when absent. */
static void raw(struct out *o, const struct analysis *a, uint32_t id)
{
    const char *s = strtab_get(&a->t->strs, id);
    if (s[0] == '#')
        out_printf(o, "%s", s + 1);
    else if (s[0] == '"')
        out_json_str(o, s + 1);
    else
        out_printf(o, "0");
}

static void flow_end(struct flows *f, const char *ph, const char *cat, uint32_t rec)
{
    const struct kev *k = &f->a->t->ev[rec];
    out_printf(f->o, "{\"ph\":\"%s\",%s\"id\":%llu,\"cat\":\"%s\",\"name\":\"%s\",\"pid\":", ph,
               ph[0] == 'f' ? "\"bp\":\"e\"," : "", (unsigned long long)f->id, cat,
               strcmp(cat, CAT_TRUE) == 0 ? "true dependency" : "false dependency");
    raw(f->o, f->a, k->pid);
    out_printf(f->o, ",\"tid\":");
    raw(f->o, f->a, k->tid);
    out_printf(f->o, ",\"ts\":");
    out_us(f->o, k->ts + k->dur / 2);      /* inside the slice: binds to it */
    out_printf(f->o, "}");
}

static void flow(struct flows *f, const char *cat, uint32_t from, uint32_t to)
{
    out_printf(f->o, f->id || f->comma ? ",\n" : "\n");
    f->id++;
    flow_end(f, "s", cat, from);
    out_printf(f->o, ",\n");
    flow_end(f, "f", cat, to);
}

/* Graph dependencies between records of one replay (through untimed nodes); an eager
 * window's edges. */
static void true_flows(struct flows *f, const struct replay *r, const struct graph *g,
                       int32_t *node_rec)
{
    const struct analysis *a = f->a;
    for (uint32_t i = 0; i < r->count; i++) {
        long v = replay_node(a, r, g, i);
        if (v >= 0 && g->nodes[v].timed && node_rec[v] < 0)
            node_rec[v] = (int32_t)a->order[r->first + i];
    }
    for (uint32_t v = 0; v < g->n; v++)
        for (uint32_t k = g->tp_off[v]; node_rec[v] >= 0 && k < g->tp_off[v + 1]; k++)
            if (node_rec[g->tp[k]] >= 0)
                flow(f, CAT_TRUE, (uint32_t)node_rec[g->tp[k]], (uint32_t)node_rec[v]);
    for (uint32_t i = 0; i < r->count; i++) {
        long v = replay_node(a, r, g, i);
        if (v >= 0)
            node_rec[v] = -1;
    }
}

static int all_flows(struct flows *f)
{
    const struct analysis *a = f->a;
    for (size_t gi = 0; gi < a->n_groups; gi++) {
        const struct group *grp = &a->groups[gi];
        int32_t *node_rec = grp->g ? malloc(((size_t)grp->g->n + 1) * sizeof *node_rec) : NULL;
        if (grp->g == NULL)
            continue;
        if (node_rec == NULL)
            return -1;
        memset(node_rec, 0xff, ((size_t)grp->g->n + 1) * sizeof *node_rec);
        for (uint32_t i = 0; i < grp->replays; i++)
            true_flows(f, &a->replays[grp->first_replay + i], grp->g, node_rec);
        free(node_rec);
    }
    for (size_t i = 0; i < a->n_sers; i++)
        if (a->sers[i].cls == SER_FALSE)
            flow(f, CAT_FALSE, a->sers[i].a, a->sers[i].b);
    return 0;
}

/* Copy up to limit bytes of the input (all of it: UINT64_MAX); the count, -1 on error. */
static int64_t copy(struct input *in, struct out *o, uint64_t limit, char *buf, size_t size)
{
    uint64_t done = 0;
    while (done < limit) {
        size_t want = limit - done < size ? (size_t)(limit - done) : size;
        long n = input_read(in, buf, want);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        out_write(o, buf, (size_t)n);
        done += (uint64_t)n;
    }
    return (int64_t)done;
}

static int annotate_copy(const struct analysis *a, struct input *in, struct out *o, char *buf,
                         size_t size, char *err, size_t errsize)
{
    const struct trace *t = a->t;
    struct flows f = { o, a, 0, t->insert_kind == INSERT_ITEMS && t->insert_comma };
    int64_t head = copy(in, o, t->insert_at, buf, size), tail = 0;
    if (head == (int64_t)t->insert_at) {
        if (t->insert_kind == INSERT_KEY)
            out_printf(o, "%s\"traceEvents\":[", t->insert_comma ? "," : "");
        if (all_flows(&f) != 0) {
            snprintf(err, errsize, "%s: out of memory while annotating", t->path);
            return -1;
        }
        out_printf(o, "%s\n", t->insert_kind == INSERT_KEY ? "]" : "");
        tail = copy(in, o, UINT64_MAX, buf, size);
    }
    if (head < 0 || tail < 0) {
        snprintf(err, errsize, "%s", input_error(in));
        return -1;
    }
    if ((uint64_t)(head + tail) != t->bytes) {
        snprintf(err, errsize, "%s: the file changed while it was being analyzed", t->path);
        return -1;
    }
    return 0;
}

int trace_annotate_input(const struct analysis *a, struct input *in, struct out *o,
                         char *err, size_t errsize)
{
    size_t size = 1 << 20;
    char *buf = malloc(size);
    int rc;
    if (buf == NULL) {
        snprintf(err, errsize, "%s: out of memory while annotating", a->t->path);
        return -1;
    }
    rc = annotate_copy(a, in, o, buf, size, err, errsize);
    free(buf);
    return rc;
}

struct annotate_ctx {
    const struct analysis *a;
    struct out *o;
};

static int annotate_cb(void *ctx, struct input *in, char *err, size_t errsize)
{
    struct annotate_ctx *c = ctx;
    return trace_annotate_input(c->a, in, c->o, err, errsize);
}

int trace_annotate(const struct analysis *a, const char *path, struct out *o, char *err,
                   size_t errsize)
{
    struct annotate_ctx c = { a, o };
    return input_with_file(path, annotate_cb, &c, err, errsize);
}
