/* host_clock.c -- when the host submitted an eager record that has no API record of
 * its own (analyzer/FORMAT.md section 3, submission time).  Correlations number the
 * host's calls in the order they were made, across threads; some calls carry a host
 * time: API records (their start) and the stream-order records with a "ts" (stream
 * waits, host synchronizations).  A call made between two such calls was made no
 * earlier than the latest time of the calls before it and, the host taking about as
 * long per call between two timed ones, at the time interpolated by correlation
 * between those two.  Calls are asked for in increasing correlation, so one pass over
 * the timed calls, sorted by correlation, serves them all. */
#include "host_clock.h"

#include <stdlib.h>

static int by_corr(const void *x, const void *y)
{
    const struct host_mark *a = x, *b = y;
    if (a->corr != b->corr)
        return a->corr < b->corr ? -1 : 1;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

int host_clock_init(struct host_clock *h, const struct trace *t)
{
    size_t n = 0;
    *h = (struct host_clock){ .before = HOST_NO_TIME };
    h->marks = malloc((t->n_api + t->n_ord + 1) * sizeof *h->marks);
    if (h->marks == NULL)
        return -1;
    for (size_t i = 0; i < t->n_api; i++)
        h->marks[n++] = (struct host_mark){ t->api[i].corr, t->api[i].start };
    for (size_t i = 0; i < t->n_ord; i++)
        if (t->ord[i].flags & ORDER_HAS_TS)
            h->marks[n++] = (struct host_mark){ t->ord[i].corr, t->ord[i].ts };
    h->n = n;
    if (n > 1)
        qsort(h->marks, n, sizeof *h->marks, by_corr);
    return 0;
}

void host_clock_free(struct host_clock *h)
{
    free(h->marks);
    h->marks = NULL;
}

/* The timed calls before corr are taken in: their latest time and last correlation. */
static void advance(struct host_clock *h, int64_t corr)
{
    for (; h->at < h->n && h->marks[h->at].corr < corr; h->at++) {
        if (h->before == HOST_NO_TIME || h->marks[h->at].ts > h->before)
            h->before = h->marks[h->at].ts;
        h->before_corr = h->marks[h->at].corr;
    }
}

int64_t host_clock_at(struct host_clock *h, int64_t corr)
{
    size_t next;
    double share, span;
    advance(h, corr);
    if (h->before == HOST_NO_TIME)
        return HOST_NO_TIME;
    for (next = h->at; next < h->n && h->marks[next].corr <= corr; next++)
        ;
    if (next == h->n || h->marks[next].ts <= h->before)
        return h->before;       /* none after it, or none later (another thread's) */
    share = (double)(corr - h->before_corr) / (double)(h->marks[next].corr - h->before_corr);
    span = (double)(h->marks[next].ts - h->before);
    return h->before + (int64_t)(share * span);
}
