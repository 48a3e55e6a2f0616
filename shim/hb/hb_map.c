/* Id-to-index hash map of the happens-before engine (see hb_map.h). */
#include "hb_map.h"

#include <errno.h>
#include <stdlib.h>

static uint32_t hash(uint64_t k, uint32_t mask)
{
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    k ^= k >> 31;
    return (uint32_t)k & mask;
}

uint32_t dls_hb_map_get(const dls_hb_map *m, uint64_t key)
{
    if (m->cap == 0)
        return DLS_HB_NONE;
    uint32_t mask = m->cap - 1;
    for (uint32_t i = hash(key, mask);; i = (i + 1) & mask) {
        if (m->t[i].val == DLS_HB_NONE)
            return DLS_HB_NONE;
        if (m->t[i].key == key)
            return m->t[i].val;
    }
}

static void insert_fresh(dls_hb_map_ent *t, uint32_t mask, uint64_t key, uint32_t val)
{
    uint32_t i = hash(key, mask);
    while (t[i].val != DLS_HB_NONE)
        i = (i + 1) & mask;
    t[i].key = key;
    t[i].val = val;
}

static int grow(dls_hb_map *m)
{
    uint32_t ncap = m->cap ? m->cap * 2 : 16;
    if (ncap == 0)
        return ENOMEM;
    dls_hb_map_ent *t = malloc((size_t)ncap * sizeof *t);
    if (!t)
        return ENOMEM;
    for (uint32_t i = 0; i < ncap; i++)
        t[i].val = DLS_HB_NONE;
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->t[i].val != DLS_HB_NONE)
            insert_fresh(t, ncap - 1, m->t[i].key, m->t[i].val);
    free(m->t);
    m->t = t;
    m->cap = ncap;
    return 0;
}

int dls_hb_map_put(dls_hb_map *m, uint64_t key, uint32_t val)
{
    if (m->cap) {
        uint32_t mask = m->cap - 1;
        for (uint32_t i = hash(key, mask); m->t[i].val != DLS_HB_NONE; i = (i + 1) & mask)
            if (m->t[i].key == key) {
                m->t[i].val = val;
                return 0;
            }
    }
    if ((uint64_t)(m->n + 1) * 2 > m->cap && grow(m) != 0)
        return ENOMEM;
    insert_fresh(m->t, m->cap - 1, key, val);
    m->n++;
    return 0;
}

void dls_hb_map_del(dls_hb_map *m, uint64_t key)
{
    if (m->cap == 0)
        return;
    uint32_t mask = m->cap - 1;
    uint32_t i = hash(key, mask);
    while (m->t[i].val != DLS_HB_NONE && m->t[i].key != key)
        i = (i + 1) & mask;
    if (m->t[i].val == DLS_HB_NONE)
        return;
    /* Backward-shift: move later members of the probe run into the hole when their home slot
     * does not lie cyclically in (hole, j]. */
    for (uint32_t j = (i + 1) & mask; m->t[j].val != DLS_HB_NONE; j = (j + 1) & mask) {
        uint32_t home = hash(m->t[j].key, mask);
        int in_between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_between) {
            m->t[i] = m->t[j];
            i = j;
        }
    }
    m->t[i].val = DLS_HB_NONE;
    m->n--;
}

void dls_hb_map_free(dls_hb_map *m)
{
    free(m->t);
    m->t = NULL;
    m->cap = 0;
    m->n = 0;
}
