/* keymap.h -- a hash map from a pair of 64-bit keys to a 32-bit value (open
 * addressing, doubled when half full): streams by (device, stream), devices, sync ids,
 * shapes.  Memory grows with the entries, 24 bytes each at most twice over. */
#ifndef AGA_KEYMAP_H
#define AGA_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct keymap {
    struct keymap_slot { int64_t k1, k2; uint32_t value_plus_1; } *slots;
    size_t n, cap;
};

/* The value stored under (k1, k2), or UINT32_MAX when none. */
uint32_t keymap_get(const struct keymap *m, int64_t k1, int64_t k2);
/* Store value (< UINT32_MAX) under (k1, k2), replacing any; 0, or -1 out of memory. */
int keymap_put(struct keymap *m, int64_t k1, int64_t k2, uint32_t value);
void keymap_free(struct keymap *m);

#endif
