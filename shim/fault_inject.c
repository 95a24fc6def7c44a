/* fault_inject.c -- AUTOGRAPH_INJECT_FAULTS: failing the shim's own driver calls.
 *
 * AUTOGRAPH_INJECT_FAULTS="cuGraphLaunch:3,cuGraphInstantiateWithFlags:1:2" makes the
 * shim's 3rd use of cuGraphLaunch fail with CUDA_ERROR_UNKNOWN (999) and its 1st use
 * of cuGraphInstantiateWithFlags fail with error 2, without calling the driver.  Uses
 * are counted per name from 1, only for names listed.  Each injected failure is
 * logged as one line (whatever AUTOGRAPH_LOG says), and the engine's explain log
 * says what it did about it.  A malformed value gives one line and is ignored as
 * a whole.  The shim's calls are made under the engine lock; counters are atomic
 * all the same.
 */
#include "fault_inject.h"

#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FAULTS 64
#define UNKNOWN_ERROR 999

struct fault { char name[96]; unsigned long at; int code; unsigned long *count; };

int ag_faults_armed;
static struct fault faults[MAX_FAULTS];
static unsigned long counts[MAX_FAULTS];   /* uses so far, one per distinct name */
static int nfaults;

static int parse_ulong(const char *s, size_t len, unsigned long *out)
{
    char buf[32], *end;
    if (len == 0 || len >= sizeof buf || s[0] < '0' || s[0] > '9')
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *out = strtoul(buf, &end, 10);
    return errno || *end ? -1 : 0;
}

/* One "name:at[:code]" item of length len; 0 or -1. */
static int parse_item(const char *item, size_t len, struct fault *f)
{
    const char *c1 = memchr(item, ':', len), *c2;
    unsigned long code = UNKNOWN_ERROR;
    size_t rest;
    if (c1 == NULL || c1 == item || (size_t)(c1 - item) >= sizeof f->name)
        return -1;
    memcpy(f->name, item, (size_t)(c1 - item));
    f->name[c1 - item] = '\0';
    rest = len - (size_t)(c1 + 1 - item);
    c2 = memchr(c1 + 1, ':', rest);
    if (c2 && (parse_ulong(c2 + 1, len - (size_t)(c2 + 1 - item), &code) || code == 0 ||
               code > 0x7fffffff))
        return -1;
    if (parse_ulong(c1 + 1, c2 ? (size_t)(c2 - c1 - 1) : rest, &f->at) || f->at == 0)
        return -1;
    f->code = (int)code;
    return 0;
}

/* Shares one counter among the items that name the same function. */
static void link_counters(void)
{
    for (int i = 0; i < nfaults; i++) {
        faults[i].count = &counts[i];
        for (int j = 0; j < i; j++)
            if (strcmp(faults[i].name, faults[j].name) == 0) {
                faults[i].count = faults[j].count;
                break;
            }
    }
}

void ag_faults_setup(const char *spec)
{
    const char *p = spec;
    if (spec == NULL || spec[0] == '\0')
        return;
    while (*p) {
        size_t len = strcspn(p, ",");
        int trailing_comma = p[len] == ',' && p[len + 1] == '\0';
        if (nfaults == MAX_FAULTS || trailing_comma || parse_item(p, len, &faults[nfaults]) != 0) {
            ag_log_topic("", "AUTOGRAPH_INJECT_FAULTS=\"%.200s\" is not valid (accepted: "
                         "comma-separated name:call[:error], call and error positive "
                         "integers, at most %d items); no faults injected", spec, MAX_FAULTS);
            nfaults = 0;
            return;
        }
        nfaults++;
        p += len + (p[len] == ',');
    }
    link_counters();
    __atomic_store_n(&ag_faults_armed, nfaults > 0, __ATOMIC_RELEASE);
}

int ag_fault_due(const char *name)
{
    unsigned long *count = NULL, use = 0;
    for (int i = 0; i < nfaults; i++) {
        if (strcmp(faults[i].name, name) != 0)
            continue;
        if (count == NULL) {
            count = faults[i].count;
            use = __atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
        }
        if (faults[i].at == use) {
            ag_log_topic("", "injected fault: the shim's use %lu of %s returns error %d",
                         use, name, faults[i].code);
            return faults[i].code;
        }
    }
    return 0;
}
