/* sim_log.c -- the execution log (SIM_LOG) and its exit checksums.
 *
 * One line per executed operation, deterministic across runs: device pointers
 * are written as a<allocation ordinal>+<offset>, streams by their creation
 * label, host pointers (registered host memory too) as "host".  SIM_LOG_GRAPH=plain (default) logs ops run
 * by a graph exactly like eager ones; =marked prefixes them with "g:".
 * SIM_LOG_SKIP=class,... leaves out lines whose first word is a listed class.
 * SIM_LOG_STREAMS=show (default) names streams by label (s<N>, legacy, ptds);
 * =hide writes every " stream=<label>" as " stream=s?", so that runs whose ops
 * reach the same stream work through different streams (e.g. a graph captured
 * on a helper stream) compare equal.
 * At exit, one "checksum" line (FNV-1a) per live simulator-owned allocation.
 * With several devices (SIM_DEVICES > 1), every line of an op ends with
 * " dev=<ordinal>" (the device it runs on), checksum lines with the device of
 * their allocation, and device pointers and events name their device:
 * a<ordinal>@d<device>+<offset>, e<ordinal>@d<device>.  With one device the
 * lines are exactly as they always were.
 * Called with the global lock held.
 */
#include "sim_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utstring.h>

static FILE *log_file;
static int log_state;             /* 0 unread, 1 on, -1 off */
static int log_marked;
static int log_hide_streams;
static char *log_skip;
static int log_dev = -1;          /* sim_log_set_dev */

static void log_open(void)
{
    const char *path = getenv("SIM_LOG"), *mode = getenv("SIM_LOG_GRAPH");
    const char *skip = getenv("SIM_LOG_SKIP"), *streams = getenv("SIM_LOG_STREAMS");

    log_state = -1;
    if (mode && *mode && strcmp(mode, "plain") && strcmp(mode, "marked"))
        fprintf(stderr, "sim: ignoring SIM_LOG_GRAPH='%s' (plain|marked)\n", mode);
    log_marked = mode && strcmp(mode, "marked") == 0;
    if (streams && *streams && strcmp(streams, "show") && strcmp(streams, "hide"))
        fprintf(stderr, "sim: ignoring SIM_LOG_STREAMS='%s' (show|hide)\n", streams);
    log_hide_streams = streams && strcmp(streams, "hide") == 0;
    if (skip && *skip) {
        log_skip = sim_xcalloc(strlen(skip) + 3, 1);
        sprintf(log_skip, ",%s,", skip);
    }
    if (!path || !*path)
        return;
    log_file = fopen(path, "a");
    if (!log_file) {
        fprintf(stderr, "sim: cannot open SIM_LOG='%s'\n", path);
        return;
    }
    log_state = 1;
}

static int sim_log_enabled(void)
{
    if (!log_state)
        log_open();
    return log_state > 0;
}

int sim_log_marked(void)
{
    return sim_log_enabled() && log_marked;
}

/* A line's class is the leading letters of its first word (memset32: memset,
 * event_record: event). */
static int log_skipped(const char *line)
{
    char word[32];
    size_t n = 0;
    while ((line[n] >= 'a' && line[n] <= 'z') || (line[n] >= 'A' && line[n] <= 'Z'))
        n++;
    if (!log_skip || n + 3 > sizeof word)
        return 0;
    snprintf(word, sizeof word, ",%.*s,", (int)n, line);
    return strstr(log_skip, word) != NULL;
}

/* SIM_LOG_STREAMS=hide: line with every " stream=<label>" as " stream=s?"
 * (malloc'd; line is freed). */
static char *log_hide_labels(char *line)
{
    static const char key[] = " stream=";
    size_t k = sizeof key - 1;
    char *out = sim_xcalloc(2 * strlen(line) + 3, 1), *w = out;
    for (const char *p = line; *p;) {
        if (strncmp(p, key, k) == 0) {
            memcpy(w, key, k);
            memcpy(w + k, "s?", 2);
            w += k + 2;
            p += k;
            while (*p && *p != ' ')
                p++;
            continue;
        }
        *w++ = *p++;
    }
    free(line);
    return out;
}

void sim_log_line(int in_graph, const char *fmt, ...)
{
    char *line;
    va_list ap;
    int n;

    if (!sim_log_enabled())
        return;
    va_start(ap, fmt);
    n = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (log_hide_streams)
        line = log_hide_labels(line);
    if (!log_skipped(line)) {
        fprintf(log_file, "%s%s", in_graph && log_marked ? "g:" : "", line);
        if (log_dev >= 0 && sim_device_count() > 1)
            fprintf(log_file, " dev=%d", log_dev);
        fputc('\n', log_file);
        fflush(log_file);
    }
    free(line);
}

int sim_log_set_dev(int dev)
{
    int old = log_dev;
    log_dev = dev;
    return old;
}

const char *sim_log_dev_suffix(char *buf, size_t n, int dev)
{
    if (sim_device_count() > 1 && dev >= 0)
        snprintf(buf, n, "@d%d", dev);
    else if (n)
        buf[0] = '\0';
    return buf;
}

void sim_log_ptr(char *buf, size_t n, uintptr_t p)
{
    const sim_alloc *a = p ? sim_mem_find(p) : NULL;
    char at[16];
    if (!p)
        snprintf(buf, n, "0");
    else if (!a || a->kind == SIM_MEM_REGISTERED)
        snprintf(buf, n, "host");
    else if (a->ordinal)
        snprintf(buf, n, "a%lu%s+%zu", a->ordinal,
                 sim_log_dev_suffix(at, sizeof at, sim_mem_dev(p)), (size_t)(p - a->base));
    else
        snprintf(buf, n, "a?%s+%zu", sim_log_dev_suffix(at, sizeof at, sim_mem_dev(p)),
                 (size_t)(p - a->base));
}

/* One parameter: 8-byte words that point into an allocation are rewritten. */
static void log_param(UT_string *s, const unsigned char *v, size_t size)
{
    char ptr[64];
    for (size_t w = 0; w < size; w += 8) {
        size_t len = size - w < 8 ? size - w : 8;
        uint64_t word = 0;
        if (w)
            utstring_printf(s, ":");
        if (len == 8 && size % 8 == 0) {
            memcpy(&word, v + w, 8);
            if (word && sim_mem_find((uintptr_t)word)) {
                sim_log_ptr(ptr, sizeof ptr, (uintptr_t)word);
                utstring_printf(s, "%s", ptr);
                continue;
            }
        }
        for (size_t b = 0; b < len; b++)
            utstring_printf(s, "%02x", v[w + b]);
    }
}

char *sim_log_args(const sim_kernel *k, const unsigned char *args)
{
    UT_string *s;
    char *out;
    utstring_new(s);
    for (int i = 0; i < k->nparams; i++) {
        if (i)
            utstring_printf(s, ",");
        log_param(s, args + k->offsets[i], k->sizes[i]);
    }
    out = sim_xstrdup(utstring_body(s));
    utstring_free(s);
    return out;
}

static const char *kind_name(int kind)
{
    static const char *names[] = { "device", "managed", "host", "registered",
                                   "vmm", "async" };
    return names[kind];
}

static void log_checksum(const sim_alloc *a, void *user)
{
    const unsigned char *p = (const unsigned char *)a->base;
    uint64_t h = 0xcbf29ce484222325ULL;
    (void)user;
    if (a->kind == SIM_MEM_REGISTERED)
        return;                   /* the program's memory, maybe freed by now */
    for (size_t i = 0; i < a->size; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    sim_log_set_dev(sim_ctx_dev(a->ctx));
    sim_log_line(0, "checksum a%lu %s bytes=%zu fnv1a=%016llx", a->ordinal,
                 kind_name(a->kind), a->size, (unsigned long long)h);
    sim_log_set_dev(-1);
}

static void log_checksums(void)
{
    if (sim_log_enabled())
        sim_mem_foreach_live(log_checksum, NULL);
}

__attribute__((destructor)) static void log_at_exit(void)
{
    sim_with_lock(log_checksums);
    if (log_file)
        fclose(log_file);
    log_file = NULL;
    log_state = -1;
}
