/* config.c -- parse the AUTOGRAPH_* environment switches.
 *
 * Each switch has a small table of accepted words.  Anything else, and any
 * AUTOGRAPH_* name we do not know, gives one line on stderr that names the
 * variable, the value and what is accepted; the safe default is then used.
 * These lines are printed whatever AUTOGRAPH_LOG says (it may itself be wrong).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

extern char **environ;

struct word { const char *word; int value; };

static const struct word mode_words[] = { { "off", AG_MODE_OFF }, { NULL, 0 } };
static const struct word bool_words[] = {
    { "0", 0 }, { "off", 0 }, { "no", 0 }, { "false", 0 },
    { "1", 1 }, { "on", 1 }, { "yes", 1 }, { "true", 1 }, { NULL, 0 },
};
static const struct word log_words[] = {
    { "error", AG_LOG_ERROR }, { "warn", AG_LOG_WARN }, { "info", AG_LOG_INFO },
    { "debug", AG_LOG_DEBUG }, { NULL, 0 },
};

static const char *const known_names[] = {
    "AUTOGRAPH", "AUTOGRAPH_SUMMARY", "AUTOGRAPH_SUMMARY_FILE", "AUTOGRAPH_LOG", NULL,
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

static int is_known_name(const char *name, size_t len)
{
    for (const char *const *k = known_names; *k; k++)
        if (strlen(*k) == len && strncmp(*k, name, len) == 0)
            return 1;
    return 0;
}

static void check_unknown_names(char **environment)
{
    char known[256], line[512];
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

void ag_config_parse(struct ag_config *out, const char *(*get)(const char *),
                     char **environment)
{
    const char *file = get("AUTOGRAPH_SUMMARY_FILE");

    out->mode = (enum ag_mode)parse_word(get, "AUTOGRAPH", mode_words, AG_MODE_OFF, "off");
    out->summary_stderr = parse_word(get, "AUTOGRAPH_SUMMARY", bool_words, 0, "0");
    out->summary_file = (file && file[0]) ? file : NULL;
    out->log_level = (enum ag_log_level)parse_word(get, "AUTOGRAPH_LOG", log_words,
                                                   AG_LOG_WARN, "warn");
    check_unknown_names(environment);
}

static struct ag_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static const char *getenv_const(const char *name)
{
    return getenv(name);
}

static void parse_environment(void)
{
    ag_config_parse(&config, getenv_const, environ);
}

const struct ag_config *ag_config(void)
{
    pthread_once(&config_once, parse_environment);
    return &config;
}
