/* vec.h -- growing arrays: one helper for every append-only array of the analyzer. */
#ifndef AGA_VEC_H
#define AGA_VEC_H

#include <stdint.h>
#include <stdlib.h>

/* Make room for need elements of size bytes in *p (capacity *cap, doubled as needed);
 * 0, or -1 (out of memory or too large: *p is left as it was). */
static inline int vec_reserve(void *p, size_t *cap, size_t need, size_t size)
{
    void **ptr = p, *q;
    size_t n = *cap ? *cap : 64;
    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    if (n > SIZE_MAX / size || (q = realloc(*ptr, n * size)) == NULL)
        return -1;
    *ptr = q;
    *cap = n;
    return 0;
}

#endif
