/* strtab.h -- interned strings: each distinct string stored once, named by a small id
 * (0 is the empty string). */
#ifndef AGA_STRTAB_H
#define AGA_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
    char *chars;            /* every string, NUL-terminated, one after the other */
    size_t len, cap;
    uint32_t *offs;         /* id -> offset in chars */
    uint32_t count, offs_cap;
    uint32_t *slots;        /* open addressing: id + 1, 0 = free */
    uint32_t nslots;
};

int strtab_init(struct strtab *t);
void strtab_free(struct strtab *t);
/* The id of s[0..n) (added if new); UINT32_MAX when out of memory. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t n);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
    return t->chars + t->offs[id];
}

#endif
