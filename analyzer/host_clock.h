/* host_clock.h -- the host's progress through its calls, from the calls that carry a
 * time (host_clock.c): when an eager record without an API record was submitted. */
#ifndef AGA_HOST_CLOCK_H
#define AGA_HOST_CLOCK_H

#include "trace.h"

#define HOST_NO_TIME INT64_MIN

struct host_mark {
    int64_t corr, ts;
};

/* A sequence of timed calls by correlation, and how far the clock has read it. */
struct host_seq {
    const struct host_mark *m;
    const struct api_call *api;     /* instead of m: API records, their start */
    size_t n, at;
};

struct host_clock {
    struct host_mark *marks;    /* the timed stream-order records, by correlation */
    struct host_seq seq[2];     /* the API records, those marks */
    int64_t before;             /* the latest time of the calls read (HOST_NO_TIME: none) */
    int64_t before_corr;        /* the last one's correlation */
};

/* From the API records (api, sorted by correlation, kept by the caller) and the
 * trace's timed stream-order records; 0, or -1 (out of memory). */
int host_clock_init(struct host_clock *h, const struct api_call *api, size_t n_api,
                    const struct trace *t);
void host_clock_free(struct host_clock *h);
/* The estimated time of the call of correlation corr (asked in increasing order): no
 * earlier than every timed call before it, interpolated between the timed calls around
 * it; HOST_NO_TIME when no timed call came before it. */
int64_t host_clock_at(struct host_clock *h, int64_t corr);

#endif
