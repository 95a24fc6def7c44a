/* trace_json.h -- AUTOGRAPH_TRACE's output: CUPTI activity records written as a Chrome
 * trace (analyzer/FORMAT.md, sections 1c and 1d), streamed to the file as buffers
 * complete (trace_json.c).  trace_cupti.c collects the records and calls these.
 */
#ifndef AG_TRACE_JSON_H
#define AG_TRACE_JSON_H

#if defined(__has_include)
#if __has_include(<cupti.h>)
#define AG_HAVE_CUPTI 1
#endif
#endif

#ifdef AG_HAVE_CUPTI
#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

struct ag_trace_setup {
    const char *path;           /* the file (pid already expanded) */
    uint64_t origin_ns;         /* CUPTI timestamp written as ts 0 */
    uint32_t cupti_version;     /* cuptiGetVersion, 0 if unknown */
    int flows;                  /* API records are collected: write ac2g flows */
    /* name of an API record's call (runtime: a runtime API record, else a driver one) */
    const char *(*api_name)(int runtime, uint32_t cbid);
};

/* Totals written at the end (the "autographTrace" member) and logged.  records: events
 * written, stream_order (section 1d) among them; untimed: GPU and API records without
 * timestamps; skipped: stream-order records with nothing to write (the NULL stream, a
 * synchronization of unknown type); device_unknown: stream-order events whose context's
 * device no record named (written as device 0). */
struct ag_trace_totals {
    unsigned long long records, stream_order, untimed, skipped, device_unknown, dropped,
        starved;
    unsigned buffers, buffer_bytes, completed;
};

/* Creates the file and writes the head: 0, or an errno value. */
int ag_trace_json_open(const struct ag_trace_setup *setup);

/* Writes every record of a completed buffer (next: cuptiActivityGetNextRecord);
 * nothing once closed.  Thread-safe. */
void ag_trace_json_buffer(uint8_t *buffer, size_t valid,
                          CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **));

/* Writes the tail with the totals (the counts of written and left-out records are
 * filled in here) and
 * closes the file: 0, or an errno value (a write that failed at any point). */
int ag_trace_json_close(struct ag_trace_totals *totals);

#endif
#endif
