/* sim_fault.c -- fault injection (SIM_FAIL) and call tracing (SIM_TRACE).
 *
 * SIM_FAIL="cuLaunchKernel:3,cuGraphInstantiateWithFlags:1:201" makes call #3 of
 * the export cuLaunchKernel return CUDA_ERROR_UNKNOWN and call #1 of
 * cuGraphInstantiateWithFlags return 201, without doing anything.  Calls are
 * counted per exported symbol name, from 1, only for names listed.  A malformed
 * value is reported with one line on stderr and ignored as a whole.
 * Called with the global lock held.
 */
#include "sim_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sim_fault {
    char name[128];
    unsigned long count;          /* calls seen so far */
    unsigned long *at;            /* failing call numbers */
    CUresult *code;
    size_t n;
    UT_hash_handle hh;
} sim_fault;

static sim_fault *faults;
static int parsed;

static int parse_number(const char *s, unsigned long *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    *out = strtoul(s, &end, 10);
    return errno || *end ? -1 : 0;
}

static void fault_add(const char *name, unsigned long at, CUresult code)
{
    sim_fault *f;
    HASH_FIND_STR(faults, name, f);
    if (!f) {
        f = sim_xcalloc(1, sizeof *f);
        snprintf(f->name, sizeof f->name, "%s", name);
        HASH_ADD_STR(faults, name, f);
    }
    f->at = sim_xrealloc(f->at, (f->n + 1) * sizeof *f->at);
    f->code = sim_xrealloc(f->code, (f->n + 1) * sizeof *f->code);
    f->at[f->n] = at;
    f->code[f->n++] = code;
}

/* One "name:k[:code]" entry; 0 when well formed. */
static int parse_entry(char *entry, char *name, unsigned long *at, unsigned long *code)
{
    char *k = strchr(entry, ':'), *c;
    if (!k || k == entry || (size_t)(k - entry) >= 128)
        return -1;
    *k++ = '\0';
    for (const char *p = entry; *p; p++)
        if (!(*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z')))
            return -1;
    strcpy(name, entry);
    *code = CUDA_ERROR_UNKNOWN;
    if ((c = strchr(k, ':')) != NULL) {
        *c++ = '\0';
        if (parse_number(c, code) || *code > 0x7fffffff)
            return -1;
    }
    return parse_number(k, at) || *at == 0 ? -1 : 0;
}

static void fault_parse(void)
{
    const char *env = getenv("SIM_FAIL");
    char *copy, *save = NULL, name[128];
    unsigned long at, code;
    sim_fault *f, *tmp;

    parsed = 1;
    if (!env || !*env)
        return;
    copy = sim_xstrdup(env);
    for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        if (parse_entry(e, name, &at, &code) == 0) {
            fault_add(name, at, (CUresult)code);
            continue;
        }
        fprintf(stderr, "sim: ignoring malformed SIM_FAIL='%s'\n", env);
        HASH_ITER(hh, faults, f, tmp) {
            HASH_DEL(faults, f);
            free(f->at);
            free(f->code);
            free(f);
        }
        break;
    }
    free(copy);
}

int sim_fault_check(const char *sym, CUresult *code)
{
    sim_fault *f;
    if (!parsed)
        fault_parse();
    if (!faults)
        return 0;
    HASH_FIND_STR(faults, sym, f);
    if (!f)
        return 0;
    f->count++;
    for (size_t i = 0; i < f->n; i++) {
        if (f->at[i] == f->count) {
            *code = f->code[i];
            return 1;
        }
    }
    return 0;
}

static int trace;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

static void trace_init(void)
{
    const char *env = getenv("SIM_TRACE");
    trace = env && *env && strcmp(env, "0") != 0;
}

int sim_trace_enabled(void)
{
    pthread_once(&trace_once, trace_init);
    return trace;
}
