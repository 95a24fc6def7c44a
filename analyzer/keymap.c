/* keymap.c -- the pair-keyed hash map (see keymap.h). */
#include "keymap.h"

#include <stdlib.h>

static size_t slot_of(const struct keymap *m, int64_t k1, int64_t k2)
{
    uint64_t h = (uint64_t)k1 * 0x9e3779b97f4a7c15ull ^ (uint64_t)k2 * 0xc2b2ae3d27d4eb4full;
    size_t i = (size_t)(h ^ (h >> 31)) & (m->cap - 1);
    while (m->slots[i].value_plus_1 != 0 && (m->slots[i].k1 != k1 || m->slots[i].k2 != k2))
        i = (i + 1) & (m->cap - 1);
    return i;
}

uint32_t keymap_get(const struct keymap *m, int64_t k1, int64_t k2)
{
    if (m->cap == 0)
        return UINT32_MAX;
    return m->slots[slot_of(m, k1, k2)].value_plus_1 - 1;
}

static int grow(struct keymap *m)
{
    struct keymap bigger = { .cap = m->cap ? m->cap * 2 : 64 };
    if (bigger.cap > SIZE_MAX / sizeof *bigger.slots
        || (bigger.slots = calloc(bigger.cap, sizeof *bigger.slots)) == NULL)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].value_plus_1 != 0)
            bigger.slots[slot_of(&bigger, m->slots[i].k1, m->slots[i].k2)] = m->slots[i];
    bigger.n = m->n;
    free(m->slots);
    *m = bigger;
    return 0;
}

int keymap_put(struct keymap *m, int64_t k1, int64_t k2, uint32_t value)
{
    size_t i;
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    i = slot_of(m, k1, k2);
    m->n += m->slots[i].value_plus_1 == 0;
    m->slots[i] = (struct keymap_slot){ k1, k2, value + 1 };
    return 0;
}

void keymap_free(struct keymap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->n = m->cap = 0;
}
