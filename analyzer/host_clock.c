/* host_clock.c -- when the host submitted an eager record that has no API record of
 * its own (analyzer/FORMAT.md section 3, submission time).  Correlations number the
 * host's calls in the order they were made, across threads; some calls carry a host
 * time: API records (their start) and the stream-order records with a "ts" (stream
 * waits, host synchronizations).  A call made between two such calls was made no
 * earlier than the latest time of the calls before it and, the host taking about as
 * long per call between two timed ones, at the time interpolated by correlation
 * between those two.  Calls are asked for in increasing correlation, so one pass over
 * the two sequences of timed calls, each sorted by correlation, serves them all; the
 * API records are the trace's, sorted by the caller, not copied. */
#include "host_clock.h"

#include <stdlib.h>

static int by_corr(const void *x, const void *y)
{
    const struct host_mark *a = x, *b = y;
    if (a->corr != b->corr)
        return a->corr < b->corr ? -1 : 1;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

int host_clock_init(struct host_clock *h, const struct api_call *api, size_t n_api,
                    const struct trace *t)
{
    size_t n = 0;
    *h = (struct host_clock){ .before = HOST_NO_TIME, .before_corr = INT64_MIN };
    h->marks = malloc((t->n_ord + 1) * sizeof *h->marks);
    if (h->marks == NULL)
        return -1;
    for (size_t i = 0; i < t->n_ord; i++)
        if (t->ord[i].flags & ORDER_HAS_TS)
            h->marks[n++] = (struct host_mark){ t->ord[i].corr, t->ord[i].ts };
    if (n > 1)
        qsort(h->marks, n, sizeof *h->marks, by_corr);
    h->seq[0] = (struct host_seq){ .api = api, .n = n_api };
    h->seq[1] = (struct host_seq){ .m = h->marks, .n = n };
    return 0;
}

void host_clock_free(struct host_clock *h)
{
    free(h->marks);
    h->marks = NULL;
}

static struct host_mark seq_get(const struct host_seq *s, size_t i)
{
    if (s->api != NULL)
        return (struct host_mark){ s->api[i].corr, s->api[i].start };
    return s->m[i];
}

/* The timed calls before corr are read: their latest time and last correlation. */
static void advance(struct host_clock *h, int64_t corr)
{
    for (int k = 0; k < 2; k++) {
        struct host_seq *s = &h->seq[k];
        for (; s->at < s->n && seq_get(s, s->at).corr < corr; s->at++) {
            struct host_mark m = seq_get(s, s->at);
            if (h->before == HOST_NO_TIME || m.ts > h->before)
                h->before = m.ts;
            if (m.corr > h->before_corr)
                h->before_corr = m.corr;
        }
    }
}

/* The first timed call after corr, in either sequence (found: 1). */
static int next_after(const struct host_clock *h, int64_t corr, struct host_mark *out)
{
    int found = 0;
    for (int k = 0; k < 2; k++) {
        const struct host_seq *s = &h->seq[k];
        size_t i = s->at;
        while (i < s->n && seq_get(s, i).corr <= corr)
            i++;
        if (i < s->n && (!found || seq_get(s, i).corr < out->corr))
            *out = seq_get(s, i), found = 1;
    }
    return found;
}

int64_t host_clock_at(struct host_clock *h, int64_t corr)
{
    struct host_mark next = { 0, 0 };
    double share, span;
    advance(h, corr);
    if (h->before == HOST_NO_TIME)
        return HOST_NO_TIME;
    if (!next_after(h, corr, &next) || next.ts <= h->before)
        return h->before;       /* none after it, or none later (another thread's) */
    share = (double)(corr - h->before_corr) / (double)(next.corr - h->before_corr);
    span = (double)(next.ts - h->before);
    return h->before + (int64_t)(share * span);
}
