/* counters.c -- call counters and the exit summary (the "report" end of passthrough).
 *
 * Wrappers bump a relaxed atomic counter per entry point; the doors count the
 * pointers they swapped for wrappers, and the misses.  At exit, when asked for with
 * AUTOGRAPH_SUMMARY or AUTOGRAPH_SUMMARY_FILE, the counts are written as
 * "key value" lines, a format both people and tests read.
 */
#include "counters.h"

#include "config.h"
#include "engine.h"
#include "log.h"
#include "record_stage.h"
#include "trace_cupti.h"

#include <autograph.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct ag_counter ag_counters[AG_EP_COUNT];
static unsigned long door_counts[AG_DOOR_COUNT];
static unsigned long unmapped_count;

void ag_count_door(enum ag_door door)
{
    __atomic_fetch_add(&door_counts[door], 1, __ATOMIC_RELAXED);
}

void ag_count_unmapped(void)
{
    __atomic_fetch_add(&unmapped_count, 1, __ATOMIC_RELAXED);
}

static unsigned long load(const unsigned long *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void write_class_totals(FILE *out, const char *prefix)
{
    unsigned long by_class[AG_CLASS_COUNT] = { 0 };
    for (int id = 0; id < AG_EP_COUNT; id++)
        by_class[ag_entry_class[id]] += load(&ag_counters[id].calls);
    for (int c = 0; c < AG_CLASS_COUNT; c++)
        if (by_class[c])
            fprintf(out, "%sclass %s %lu\n", prefix, ag_class_name[c], by_class[c]);
}

void ag_summary_write(FILE *out, const char *prefix)
{
    unsigned long launches = 0;
    for (int id = 0; id < AG_EP_COUNT; id++)
        if (ag_entry_class[id] == AG_CLASS_LAUNCH)
            launches += load(&ag_counters[id].calls) - load(&ag_counters[id].failed);

    fprintf(out, "%s# libautograph %s exit summary: pid %ld, mode %s\n", prefix,
            AUTOGRAPH_VERSION_STRING, (long)getpid(), ag_engine_running() ? "on" : "off");
    fprintf(out, "%skernel_launches %lu\n", prefix, launches);
    write_class_totals(out, prefix);
    for (int id = 0; id < AG_EP_COUNT; id++)
        if (load(&ag_counters[id].calls))
            fprintf(out, "%scall %s %lu\n", prefix, ag_entry_name[id],
                    load(&ag_counters[id].calls));
    fprintf(out, "%sdoor dlsym %lu\n", prefix, load(&door_counts[AG_DOOR_DLSYM]));
    fprintf(out, "%sdoor getprocaddress %lu\n", prefix,
            load(&door_counts[AG_DOOR_GETPROCADDRESS]));
    fprintf(out, "%sdoor unmapped %lu\n", prefix, load(&unmapped_count));
    if (ag_engine_running()) {
        ag_engine_summary(out, prefix);
        ag_stage_summary(out, prefix);
    }
}

static void write_summary_file(const char *pattern)
{
    char path[4096];
    FILE *out;
    ag_expand_pid(path, sizeof path, pattern);
    out = fopen(path, "w");
    if (out == NULL) {
        ag_log(AG_LOG_ERROR, "AUTOGRAPH_SUMMARY_FILE: cannot write %s (%s); "
               "summary follows on stderr", path, strerror(errno));
        ag_summary_write(stderr, "libautograph: ");
        return;
    }
    ag_summary_write(out, "");
    fclose(out);
}

__attribute__((destructor)) static void write_exit_summary(void)
{
    const struct ag_config *cfg;
    if (!ag_driver_used())
        return;
    ag_engine_flush(AG_FLUSH_EXIT);      /* work still held runs before exit */
    ag_trace_finish();                   /* done already by its atexit handler, normally */
    cfg = ag_config();
    if (cfg->summary_file)
        write_summary_file(cfg->summary_file);
    if (cfg->summary_stderr)
        ag_summary_write(stderr, "libautograph: ");
}

void ag_count_work(uint64_t *work, unsigned long *launches)
{
    *work = 0;
    *launches = 0;
    for (int id = 0; id < AG_EP_COUNT; id++) {
        unsigned cls = ag_entry_class[id];
        unsigned long n;
        if (cls != AG_CLASS_LAUNCH && cls != AG_CLASS_COPY && cls != AG_CLASS_SET)
            continue;
        n = __atomic_load_n(&ag_counters[id].calls, __ATOMIC_RELAXED);
        *work += n;
        if (cls == AG_CLASS_LAUNCH)
            *launches += n;
    }
}
