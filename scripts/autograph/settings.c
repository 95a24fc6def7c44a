/* settings.c -- the options that become AUTOGRAPH_* variables of the program run.
 *
 * The switch names come from the shim's own list (shim/switches.def), so `--set`
 * accepts exactly what the shim knows; their values are the shim's to check (it
 * prints one line for a malformed one).  The library goes first in LD_PRELOAD.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const known[] = {
#define AG_SWITCH(name) #name,
#include "switches.def"
#undef AG_SWITCH
};
#define KNOWN_COUNT (sizeof known / sizeof known[0])

/* run's flags without a value, and its options with one */
static const struct { const char *option, *name, *value; } flags[] = {
    { "--off", "AUTOGRAPH", "off" },
    { "--explain", "AUTOGRAPH_EXPLAIN", "1" },
    { "--summary", "AUTOGRAPH_SUMMARY", "1" },
};
static const struct { const char *option, *name; } valued[] = {
    { "--summary-file", "AUTOGRAPH_SUMMARY_FILE" },
    { "--trace", "AUTOGRAPH_TRACE" },
    { "--timing", "AUTOGRAPH_TIMING" },
    { "--liveness", "AUTOGRAPH_CHECK_LIVENESS" },
};

void settings_put(struct settings *s, const char *name, const char *value)
{
    int i = 0;
    while (i < s->n && strcmp(s->name[i], name) != 0)
        i++;
    if (i == SETTINGS_MAX)
        return;             /* more than there are switches: a repeat, already there */
    s->name[i] = name;
    s->value[i] = value;
    if (i == s->n)
        s->n++;
}

/* The list's own copy of `name` (the first `len` bytes), or NULL if unknown. */
static const char *known_name(const char *name, size_t len)
{
    for (size_t k = 0; k < KNOWN_COUNT; k++)
        if (strlen(known[k]) == len && strncmp(known[k], name, len) == 0)
            return known[k];
    return NULL;
}

int settings_known(const char *name)
{
    return known_name(name, strlen(name)) != NULL;
}

void settings_list(FILE *out, const char *indent, int per_line)
{
    for (size_t k = 0; k < KNOWN_COUNT; k++)
        fprintf(out, "%s%s%s", k % (size_t)per_line ? " " : indent, known[k],
                (k + 1) % (size_t)per_line && k + 1 < KNOWN_COUNT ? "" : "\n");
}

/* --set NAME=VALUE */
static int set_option(struct settings *s, const char *cmd, const char *arg)
{
    const char *eq = strchr(arg, '=');
    const char *name = eq ? known_name(arg, (size_t)(eq - arg)) : NULL;
    if (eq == NULL || eq == arg) {
        usage_error(cmd, "--set takes NAME=VALUE, not '%s'", arg);
        return -1;
    }
    if (name == NULL) {
        usage_error(cmd, "--set: '%.*s' is not a switch of libautograph", (int)(eq - arg),
                    arg);
        return -1;
    }
    settings_put(s, name, eq + 1);
    return 1;
}

static int liveness_ok(const char *v)
{
    return strcmp(v, "off") == 0 || strcmp(v, "warn") == 0 || strcmp(v, "error") == 0;
}

/* run's own switch options: 1, 0 (not one), -1 (reported) */
static int switch_option(struct settings *s, const char *cmd, int argc, char **argv, int *i)
{
    const char *v;
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
        if (strcmp(argv[*i], flags[k].option) == 0) {
            settings_put(s, flags[k].name, flags[k].value);
            return 1;
        }
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) {
        int r = option_value(cmd, valued[k].option, argc, argv, i, &v);
        if (r == 0)
            continue;
        if (r < 0)
            return -1;
        if (strcmp(valued[k].option, "--liveness") == 0 && !liveness_ok(v)) {
            usage_error(cmd, "--liveness takes off, warn or error, not '%s'", v);
            return -1;
        }
        settings_put(s, valued[k].name, v);
        return 1;
    }
    return 0;
}

int settings_option(struct settings *s, const char *cmd, int argc, char **argv, int *i,
                    int all)
{
    const char *v;
    int r = option_value(cmd, "--set", argc, argv, i, &v);
    if (r != 0)
        return r < 0 ? -1 : set_option(s, cmd, v);
    r = option_value(cmd, "--lib", argc, argv, i, &v);
    if (r != 0) {
        s->lib = v;
        return r;
    }
    return all ? switch_option(s, cmd, argc, argv, i) : 0;
}

int settings_apply(const struct settings *s, const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    char *preload;
    int bad = 0;
    for (int i = 0; i < s->n; i++)
        bad |= setenv(s->name[i], s->value[i], 1);
    preload = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
    if (preload == NULL)
        return fail(-1, "out of memory");
    strcpy(preload, lib);
    if (old && *old)
        strcat(strcat(preload, ":"), old);
    bad |= setenv("LD_PRELOAD", preload, 1);
    free(preload);
    return bad ? fail(-1, "cannot set the environment") : 0;
}
