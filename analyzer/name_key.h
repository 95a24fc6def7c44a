/* name_key.h -- kernel names made comparable between graph data and a trace: a name
 * and its mangled form give one key (analyzer/FORMAT.md, "Replays without node ids"). */
#ifndef AGA_NAME_KEY_H
#define AGA_NAME_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

/* Keys of copies and memsets, whatever their names; no name's key is one of these. */
#define NAME_KEY_COPY 1u
#define NAME_KEY_SET 2u

/* The keys of some strings of one string table. */
struct name_keys {
    const struct strtab *strs;
    uint64_t *key;          /* per string id; 0: not asked for */
    uint32_t n;
    long given_up;          /* mangled names left as written (demangle_all) */
};

/* The keys of the strings ids[0..n) (repeats welcome), each distinct mangled one
 * demangled once, all in one batch; 0, or -1 out of memory. */
int name_keys_init(struct name_keys *k, const struct strtab *strs, const uint32_t *ids,
                   size_t n);
void name_keys_free(struct name_keys *k);
/* The key of string id: its demangled form's (as written when it is not mangled). */
uint64_t name_key(const struct name_keys *k, uint32_t id);
/* The key of a name as written (not demangled). */
uint64_t name_key_plain(const char *s);
/* NAME_KEY_COPY or NAME_KEY_SET for a name the CUDA driver gives the kernels it runs a
 * graph's copy or memset node with ("memcpy32_post"), else 0. */
uint64_t name_key_driver_class(const char *s);

#endif
