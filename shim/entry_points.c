/* entry_points.c -- name and class tables of the wrapped entry points, and lookups.
 *
 * The arrays are generated from entry_points.def; lookups by name use a sorted
 * index built once (the dlsym and cuGetProcAddress doors ask by name).
 */
#include "entry_points.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *const ag_entry_name[AG_EP_COUNT] = {
#define AG_ENTRY(sym, cls) #sym,
#include "entry_points.def"
#undef AG_ENTRY
};

const unsigned char ag_entry_class[AG_EP_COUNT] = {
#define AG_ENTRY(sym, cls) AG_CLASS_##cls,
#include "entry_points.def"
#undef AG_ENTRY
};

const char *const ag_class_name[AG_CLASS_COUNT] = {
    "LAUNCH", "HOSTFN", "COPY", "SET", "EVENT", "STREAM", "CAPTURE", "CONTEXT",
    "ALLOC", "FREE", "MEMWORK", "GRAPH", "MODULE", "RESOLVE",
};

static int sorted_ids[AG_EP_COUNT];
static pthread_once_t sorted_once = PTHREAD_ONCE_INIT;

static int compare_ids_by_name(const void *a, const void *b)
{
    return strcmp(ag_entry_name[*(const int *)a], ag_entry_name[*(const int *)b]);
}

static void build_sorted_index(void)
{
    for (int i = 0; i < AG_EP_COUNT; i++)
        sorted_ids[i] = i;
    qsort(sorted_ids, AG_EP_COUNT, sizeof sorted_ids[0], compare_ids_by_name);
}

/* Index of the first sorted name >= key. */
static int lower_bound(const char *key)
{
    int lo = 0, hi = AG_EP_COUNT;
    pthread_once(&sorted_once, build_sorted_index);
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(ag_entry_name[sorted_ids[mid]], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ag_entry_lookup(const char *symbol)
{
    int at = lower_bound(symbol);
    if (at < AG_EP_COUNT && strcmp(ag_entry_name[sorted_ids[at]], symbol) == 0)
        return sorted_ids[at];
    return -1;
}

static int is_abi_suffix(const char *s)
{
    if (*s == '\0')
        return 1;
    if (strncmp(s, "_v", 2) == 0 && s[2] >= '0' && s[2] <= '9')
        return is_abi_suffix(s + 3);
    return strcmp(s, "_ptsz") == 0 || strcmp(s, "_ptds") == 0;
}

int ag_entry_family_known(const char *base)
{
    size_t len = strlen(base);
    for (int at = lower_bound(base); at < AG_EP_COUNT; at++) {
        const char *name = ag_entry_name[sorted_ids[at]];
        if (strncmp(name, base, len) != 0)
            break;
        if (is_abi_suffix(name + len))
            return 1;
    }
    return 0;
}
