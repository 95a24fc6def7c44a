/* strtab.c -- interned strings (FNV-1a hash, open addressing, doubling). */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

int strtab_init(struct strtab *t)
{
    memset(t, 0, sizeof *t);
    t->nslots = 1024;
    t->slots = calloc(t->nslots, sizeof *t->slots);
    if (t->slots == NULL)
        return -1;
    return strtab_intern(t, "", 0) == 0 ? 0 : -1;
}

void strtab_free(struct strtab *t)
{
    free(t->chars);
    free(t->offs);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static int grow_slots(struct strtab *t)
{
    uint32_t n = t->nslots * 2, *slots = calloc(n, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (uint32_t id = 0; id < t->count; id++) {
        const char *s = strtab_get(t, id);
        uint32_t i = hash(s, strlen(s)) & (n - 1);
        while (slots[i] != 0)
            i = (i + 1) & (n - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

static uint32_t add(struct strtab *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 4096) + n + 1;
        char *p = cap > UINT32_MAX ? NULL : realloc(t->chars, cap);
        if (p == NULL)
            return UINT32_MAX;
        t->chars = p;
        t->cap = cap;
    }
    if (t->count == t->offs_cap) {
        uint32_t cap = t->offs_cap ? t->offs_cap * 2 : 256;
        uint32_t *p = realloc(t->offs, cap * sizeof *p);
        if (p == NULL)
            return UINT32_MAX;
        t->offs = p;
        t->offs_cap = cap;
    }
    memcpy(t->chars + t->len, s, n);
    t->chars[t->len + n] = '\0';
    t->offs[t->count] = (uint32_t)t->len;
    t->len += n + 1;
    return t->count++;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t n)
{
    uint32_t i, id;
    n = strnlen(s, n);      /* an embedded NUL (from \u0000) ends the string */
    if ((t->count + 1) * 2 > t->nslots && grow_slots(t) != 0)
        return UINT32_MAX;
    i = hash(s, n) & (t->nslots - 1);
    for (; t->slots[i] != 0; i = (i + 1) & (t->nslots - 1)) {
        const char *have = strtab_get(t, t->slots[i] - 1);
        if (strncmp(have, s, n) == 0 && have[n] == '\0')
            return t->slots[i] - 1;
    }
    id = add(t, s, n);
    if (id != UINT32_MAX)
        t->slots[i] = id + 1;
    return id;
}
