/* config.c -- parse the AUTOGRAPH_* environment switches.
 *
 * Each switch has a small table of accepted words.  Anything else, and any
 * AUTOGRAPH_* name we do not know, gives one line on stderr that names the
 * variable, the value and what is accepted; the safe default is then used.
 * These lines are printed whatever AUTOGRAPH_LOG says (it may itself be wrong).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

extern char **environ;

struct word { const char *word; int value; };

static const struct word mode_words[] = {
    { "on", AG_MODE_ON }, { "off", AG_MODE_OFF }, { NULL, 0 },
};
static const struct word bool_words[] = {
    { "0", 0 }, { "off", 0 }, { "no", 0 }, { "false", 0 },
    { "1", 1 }, { "on", 1 }, { "yes", 1 }, { "true", 1 }, { NULL, 0 },
};
static const struct word launch_thread_words[] = {
    { "0", AG_LAUNCH_THREAD_OFF }, { "off", AG_LAUNCH_THREAD_OFF }, { "no", AG_LAUNCH_THREAD_OFF },
    { "false", AG_LAUNCH_THREAD_OFF }, { "1", AG_LAUNCH_THREAD_ON }, { "on", AG_LAUNCH_THREAD_ON },
    { "yes", AG_LAUNCH_THREAD_ON }, { "true", AG_LAUNCH_THREAD_ON },
    { "auto", AG_LAUNCH_THREAD_AUTO }, { NULL, 0 },
};
static const struct word liveness_words[] = {
    { "off", AG_LIVENESS_OFF }, { "warn", AG_LIVENESS_WARN }, { "error", AG_LIVENESS_ERROR },
    { NULL, 0 },
};
static const struct word capture_words[] = {
    { "relaxed", AG_CAPTURE_RELAXED }, { "thread_local", AG_CAPTURE_THREAD_LOCAL },
    { "global", AG_CAPTURE_GLOBAL }, { NULL, 0 },
};
static const struct word log_words[] = {
    { "error", AG_LOG_ERROR }, { "warn", AG_LOG_WARN }, { "info", AG_LOG_INFO },
    { "debug", AG_LOG_DEBUG }, { NULL, 0 },
};

/* The engine's integer switches: name, default, accepted range. */
struct int_switch { const char *name; int fallback, min, max; size_t offset; };
static const struct int_switch int_switches[] = {
    { "AUTOGRAPH_WARMUP",     2,   1, 1000,    offsetof(struct ag_config, warmup) },
    { "AUTOGRAPH_MIN_OPS",    4,   1, 1 << 20, offsetof(struct ag_config, min_ops) },
    { "AUTOGRAPH_CHUNK",      8,   1, 1 << 16, offsetof(struct ag_config, chunk_first) },
    { "AUTOGRAPH_CHUNK_MAX",  256, 1, 1 << 16, offsetof(struct ag_config, chunk_max) },
    { "AUTOGRAPH_CHUNK_GROWTH", 3, 1, 64,      offsetof(struct ag_config, chunk_growth) },
    { "AUTOGRAPH_CHUNK_SLOW_US", 2, 0, 1000000, offsetof(struct ag_config, chunk_slow_us) },
    { "AUTOGRAPH_CHUNK_TUNE", AG_CHUNK_TUNE_AUTO, 0, 10000, offsetof(struct ag_config, chunk_tune) },
    { "AUTOGRAPH_VARIANTS",   4,   1, 64,      offsetof(struct ag_config, max_variants) },
    { "AUTOGRAPH_PERIOD_MIN", 32,  2, 1 << 16, offsetof(struct ag_config, period_min) },
    { "AUTOGRAPH_LIGHT_AFTER", 3,  0, 1 << 20, offsetof(struct ag_config, light_after) },
    { "AUTOGRAPH_SKIM_AFTER", 8,   0, 1 << 20, offsetof(struct ag_config, skim_after) },
    { "AUTOGRAPH_LAUNCH_SPIN_US", 1000, 0, 100000, offsetof(struct ag_config, launch_spin_us) },
    { "AUTOGRAPH_LAUNCH_POLL_US", 0, 0, 1000, offsetof(struct ag_config, launch_poll_us) },
    { "AUTOGRAPH_MAX_GRAPHS", 256, 0, 1 << 20, offsetof(struct ag_config, max_graphs) },
    { "AUTOGRAPH_MAX_GRAPH_MB", 1024, 0, 1 << 20, offsetof(struct ag_config, max_graph_mb) },
    { "AUTOGRAPH_STAGE_MB",   16,  0, 4096,    offsetof(struct ag_config, stage_mb) },
    { "AUTOGRAPH_GUARD_MS",   1000, 0, 3600000, offsetof(struct ag_config, guard_ms) },
    { NULL, 0, 0, 0, 0 },
};

/* Integer switches that also take the word "auto", and the value it gives (the default
 * is then named "auto" too). */
static const struct word int_autos[] = {
    { "AUTOGRAPH_CHUNK_TUNE", AG_CHUNK_TUNE_AUTO }, { NULL, 0 },
};

static int auto_value(const char *name)
{
    for (const struct word *w = int_autos; w->word; w++)
        if (strcmp(w->word, name) == 0)
            return w->value;
    return 0;
}

static const char *const known_names[] = {
#define AG_SWITCH(name) #name,
#include "switches.def"
#undef AG_SWITCH
    NULL,
};

static void complain(const char *line)
{
    if (write(STDERR_FILENO, line, strlen(line)) < 0) {
        /* stderr closed: stay quiet */
    }
}

static void list_words(char *buf, size_t size, const struct word *words)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const struct word *w = words; w->word && used < size; w++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s",
                                 w == words ? "" : ", ", w->word);
}

/* Value of `name` looked up in `words`; `fallback` (named `fallback_word`) if
 * unset, empty or not accepted, with one line on stderr in the last case. */
static int parse_word(const char *(*get)(const char *), const char *name,
                      const struct word *words, int fallback, const char *fallback_word)
{
    const char *value = get(name);
    char accepted[256], line[640];

    if (value == NULL || value[0] == '\0')
        return fallback;
    for (const struct word *w = words; w->word; w++)
        if (strcasecmp(value, w->word) == 0)
            return w->value;
    list_words(accepted, sizeof accepted, words);
    snprintf(line, sizeof line,
             "libautograph: %s=\"%.200s\" is not valid (accepted: %s); using \"%s\"\n",
             name, value, accepted, fallback_word);
    complain(line);
    return fallback;
}

/* Decimal integer in [min, max] (or "auto" where the switch has it); otherwise one
 * line on stderr and the default. */
static int parse_int(const char *(*get)(const char *), const struct int_switch *sw)
{
    const char *value = get(sw->name);
    int autos = auto_value(sw->name);
    char *end, line[640], fallback[16];
    long v;

    if (value == NULL || value[0] == '\0')
        return sw->fallback;
    if (autos && strcasecmp(value, "auto") == 0)
        return autos;
    errno = 0;
    v = strtol(value, &end, 10);
    if (errno == 0 && end != value && *end == '\0' && v >= sw->min && v <= sw->max)
        return (int)v;
    if (autos && sw->fallback == autos)
        snprintf(fallback, sizeof fallback, "auto");
    else
        snprintf(fallback, sizeof fallback, "%d", sw->fallback);
    snprintf(line, sizeof line,
             "libautograph: %s=\"%.200s\" is not valid (accepted: %san integer from %d to "
             "%d); using \"%s\"\n", sw->name, value, autos ? "auto, or " : "", sw->min,
             sw->max, fallback);
    complain(line);
    return sw->fallback;
}

static int is_known_name(const char *name, size_t len)
{
    for (const char *const *k = known_names; *k; k++)
        if (strlen(*k) == len && strncmp(*k, name, len) == 0)
            return 1;
    return 0;
}

static void check_unknown_names(char **environment)
{
    char known[1024], line[1536];
    size_t used = 0;
    for (const char *const *k = known_names; *k && used < sizeof known; k++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                 k == known_names ? "" : ", ", *k);
    for (char **e = environment; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        if (strncmp(*e, "AUTOGRAPH_", 10) != 0 || is_known_name(*e, len))
            continue;
        snprintf(line, sizeof line, "libautograph: unknown variable %.*s (known: %s); ignored\n",
                 (int)(len > 200 ? 200 : len), *e, known);
        complain(line);
    }
}

static const char *nonempty(const char *value)
{
    return value && value[0] ? value : NULL;
}

void ag_config_parse(struct ag_config *out, const char *(*get)(const char *),
                     char **environment)
{
    const char *file = get("AUTOGRAPH_SUMMARY_FILE");

    /* Unset: on.  Malformed: off (passthrough is the safe reading of a typo). */
    out->mode = get("AUTOGRAPH") && get("AUTOGRAPH")[0]
                    ? (enum ag_mode)parse_word(get, "AUTOGRAPH", mode_words, AG_MODE_OFF, "off")
                    : AG_MODE_ON;
    out->explain = parse_word(get, "AUTOGRAPH_EXPLAIN", bool_words, 0, "0");
    for (const struct int_switch *sw = int_switches; sw->name; sw++)
        *(int *)((char *)out + sw->offset) = parse_int(get, sw);
    out->summary_stderr = parse_word(get, "AUTOGRAPH_SUMMARY", bool_words, 0, "0");
    out->summary_file = (file && file[0]) ? file : NULL;
    out->log_level = (enum ag_log_level)parse_word(get, "AUTOGRAPH_LOG", log_words,
                                                   AG_LOG_WARN, "warn");
    out->liveness = (enum ag_liveness)parse_word(get, "AUTOGRAPH_CHECK_LIVENESS",
                                                 liveness_words, AG_LIVENESS_OFF, "off");
    out->capture_mode = (enum ag_capture_mode)parse_word(get, "AUTOGRAPH_CAPTURE_MODE",
                                                         capture_words, AG_CAPTURE_RELAXED,
                                                         "relaxed");
    out->inject_faults = get("AUTOGRAPH_INJECT_FAULTS");   /* checked by fault_inject.c */
    out->keep_graph = parse_word(get, "AUTOGRAPH_KEEP_GRAPH", bool_words, 0, "0");
    out->cut_anywhere = parse_word(get, "AUTOGRAPH_CUT_ANYWHERE", bool_words, 0, "0");
    /* read by record_collective.c */
    out->collective_prefixes = nonempty(get("AUTOGRAPH_COLLECTIVE_PREFIXES"));
    out->hold_runtime = parse_word(get, "AUTOGRAPH_HOLD_RUNTIME", bool_words, 1, "1");
    out->smem_flush = parse_word(get, "AUTOGRAPH_SMEM_FLUSH", bool_words, 0, "0");
    out->host_funcs = parse_word(get, "AUTOGRAPH_HOST_FUNCS", bool_words, 0, "0");
    out->destroy_flush = parse_word(get, "AUTOGRAPH_DESTROY_FLUSH", bool_words, 0, "0");
    out->launch_thread = parse_word(get, "AUTOGRAPH_LAUNCH_THREAD", launch_thread_words,
                                    AG_LAUNCH_THREAD_AUTO, "auto");
    out->debug_dump = nonempty(get("AUTOGRAPH_DEBUG_DUMP"));   /* checked by report_dump.c */
    out->plugin = nonempty(get("AUTOGRAPH_PLUGIN"));           /* loaded by plugin.c */
    out->trace = nonempty(get("AUTOGRAPH_TRACE"));             /* opened by trace_cupti.c */
    out->graph_data = nonempty(get("AUTOGRAPH_GRAPH_DATA"));   /* written by graph_data.c */
    out->timing = nonempty(get("AUTOGRAPH_TIMING"));           /* opened by timing.c */
    out->guard_job = nonempty(get("AUTOGRAPH_GUARD_JOB"));     /* match_speed_job.c */
    check_unknown_names(environment);
}

void ag_expand_pid(char *dst, size_t size, const char *pattern)
{
    size_t n = 0;
    for (const char *p = pattern; *p && n + 1 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            n += (size_t)snprintf(dst + n, size - n, "%ld", (long)getpid());
            p++;
        } else {
            dst[n++] = *p;
        }
    }
    dst[n < size ? n : size - 1] = '\0';
}

static struct ag_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

const char *ag_config_getenv(const char *name)
{
    return getenv(name);
}

static void parse_environment(void)
{
    ag_config_parse(&config, ag_config_getenv, environ);
}

const struct ag_config *ag_config(void)
{
    pthread_once(&config_once, parse_environment);
    return &config;
}
