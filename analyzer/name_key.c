/* name_key.c -- kernel names made comparable between graph data and a trace.
 *
 * Graph data (get_graph_data, libautograph's AUTOGRAPH_GRAPH_DATA) holds the symbol
 * as the driver names it: mangled for C++ kernels, plain for extern "C" ones (cuBLAS).
 * Kineto prints names demangled; a CUPTI-based trace may keep them mangled.  Both
 * sides are keyed by the demangled form, cut to the length a trace reader keeps (a
 * long demangled name in a trace was cut there too), and hashed. */
#include "name_key.h"

#include "demangle.h"
#include "trace_event.h"

#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull
#define ASKED 1                 /* a key not yet computed (never a name's key) */

uint64_t name_key_plain(const char *s)
{
    uint64_t h = FNV_OFFSET;
    size_t n = strnlen(s, NAME_MAX_KEPT - 1);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h > NAME_KEY_SET ? h : h + NAME_KEY_SET + 1;
}

/* The distinct ids among ids[0..n), each marked ASKED in k->key. */
static uint32_t *distinct(struct name_keys *k, const uint32_t *ids, size_t n, size_t *nd)
{
    uint32_t *d = malloc((n + 1) * sizeof *d);
    *nd = 0;
    for (size_t i = 0; d != NULL && i < n; i++)
        if (ids[i] < k->n && k->key[ids[i]] == 0) {
            k->key[ids[i]] = ASKED;
            d[(*nd)++] = ids[i];
        }
    return d;
}

/* The keys of the distinct ids d[0..n): demangled names in one batch. */
static int key_all(struct name_keys *k, const uint32_t *d, size_t n)
{
    const char **names = calloc(n + 1, sizeof *names);
    char **dem = malloc((n + 1) * sizeof *dem);
    if (names == NULL || dem == NULL) {
        free(names);
        free(dem);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = strtab_get(k->strs, d[i]);
    if ((k->given_up = demangle_all(names, n, NAME_MAX_KEPT - 1, dem)) < 0) {
        free(names);
        free(dem);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        k->key[d[i]] = name_key_plain(dem[i] != NULL ? dem[i] : names[i]);
        free(dem[i]);
    }
    free(names);
    free(dem);
    return 0;
}

int name_keys_init(struct name_keys *k, const struct strtab *strs, const uint32_t *ids,
                   size_t n)
{
    size_t nd;
    uint32_t *d;
    int rc;
    k->strs = strs;
    k->n = strs->count;
    k->given_up = 0;
    if ((k->key = calloc((size_t)k->n + 1, sizeof *k->key)) == NULL)
        return -1;
    if ((d = distinct(k, ids, n, &nd)) == NULL)
        return -1;
    rc = key_all(k, d, nd);
    free(d);
    return rc;
}

void name_keys_free(struct name_keys *k)
{
    free(k->key);
    k->key = NULL;
}

uint64_t name_key(const struct name_keys *k, uint32_t id)
{
    if (id < k->n && k->key[id] > ASKED)
        return k->key[id];
    return name_key_plain(strtab_get(k->strs, id));
}

/* A plain identifier (no namespace, template arguments or parameters) that starts
 * with prefix. */
static int driver_name(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 && s[strcspn(s, ":<( ")] == '\0';
}

uint64_t name_key_driver_class(const char *s)
{
    if (driver_name(s, "memcpy"))
        return NAME_KEY_COPY;
    if (driver_name(s, "memset"))
        return NAME_KEY_SET;
    return 0;
}
