/* resolver_sweep.c -- ask the driver's resolver for every wrapped family.
 *
 * For each base name in shim/entry_points.def (suffixes _vN/_ptsz/_ptds removed),
 * every cudaVersion in a list and both stream flavours, call cuGetProcAddress_v2
 * (obtained through dlopen + dlsym, as cudart does) and also the 4-argument
 * cuGetProcAddress that the resolver returns for itself at cudaVersion 11030.
 * Prints how many lookups succeeded and how many distinct pointers came back.
 * Under the shim, its exit summary must report "door unmapped 0": every pointer
 * the driver chose, whatever version and flavour, was swapped for the wrapper of
 * that exact symbol.  Runs against the real driver and the CPU simulator alike.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*resolver_v2)(const char *, void **, int, unsigned long long, int *);
typedef int (*resolver_v1)(const char *, void **, int, unsigned long long);

static const char *const table_names[] = {
#define AG_ENTRY(sym, cls) #sym,
#include "../../shim/entry_points.def"
#undef AG_ENTRY
};
#define NAME_COUNT (sizeof table_names / sizeof table_names[0])

static const int versions[] = { 2000, 3000, 3020, 4000, 7000, 9020, 10000, 10010,
                                11030, 12000, 12030, 12050, 12080, 13000 };
enum { FLAG_LEGACY = 1, FLAG_PTDS = 2 };

/* Copies `name` without its ABI suffixes into `base`. */
static void base_name(const char *name, char *base, size_t size)
{
    size_t len;
    snprintf(base, size, "%s", name);
    for (;;) {
        char *us = strrchr(base, '_');
        if (!us)
            return;
        if (strcmp(us, "_ptsz") && strcmp(us, "_ptds") &&
            !(us[1] == 'v' && us[2] >= '0' && us[2] <= '9'))
            return;
        len = (size_t)(us - base);
        base[len] = '\0';
    }
}

static int seen(void **ptrs, int n, void *p)
{
    for (int i = 0; i < n; i++)
        if (ptrs[i] == p)
            return 1;
    return 0;
}

int main(void)
{
    static void *distinct[NAME_COUNT * 40];
    int ndistinct = 0, found = 0, asked = 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    resolver_v2 get;
    resolver_v1 get_v1 = NULL;
    int (*init)(unsigned);

    if (!lib) {
        printf("no driver: %s\n", dlerror());
        return 2;
    }
    init = (int (*)(unsigned))dlsym(lib, "cuInit");
    get = (resolver_v2)dlsym(lib, "cuGetProcAddress_v2");
    if (!init || !get || init(0) != 0) {
        printf("driver unusable\n");
        return 2;
    }
    if (get("cuGetProcAddress", (void **)&get_v1, 11030, 0, NULL) != 0 || !get_v1) {
        printf("resolver did not return itself\n");
        return 1;
    }
    for (size_t i = 0; i < NAME_COUNT; i++) {
        char base[128];
        base_name(table_names[i], base, sizeof base);
        if (i > 0) {          /* families are adjacent in the table: skip repeats */
            char prev[128];
            base_name(table_names[i - 1], prev, sizeof prev);
            if (strcmp(prev, base) == 0)
                continue;
        }
        for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++)
            for (int flags = FLAG_LEGACY; flags <= FLAG_PTDS; flags++) {
                void *p = NULL;
                int status = 0;
                int rc = (v % 2) ? get_v1(base, &p, versions[v], (unsigned long long)flags)
                                 : get(base, &p, versions[v], (unsigned long long)flags,
                                       &status);
                asked++;
                if (rc == 0 && p) {
                    found++;
                    if (!seen(distinct, ndistinct, p))
                        distinct[ndistinct++] = p;
                }
            }
    }
    printf("resolver sweep: %d lookups, %d found, %d distinct pointers\n", asked, found,
           ndistinct);
    return found > 0 ? 0 : 1;
}
