/* One open-addressing hash map for the shim's tables, and the command's counters (tools/tally.c).
 *
 * A table of `cap` slots (a power of two) of `size` bytes each. A slot's first member is its key,
 * a non-zero word; 0 marks an empty slot. A key is either a word compared as it is (DLS_MAP_WORDS:
 * a pointer's identity) or a `const char *` compared by its text (DLS_MAP_STRINGS: the string must
 * live as long as its slot). Linear probing from the key's home slot; removal moves the later
 * entries of the probe chain back (backward shift, no tombstones), so every probe ends at the
 * first empty slot.
 *
 * The owner provides the storage (a static array, or a zeroed block it allocated) and keeps the
 * table at most half full: dls_map_full says when one more key would break that, and the owner
 * then grows the table (dls_map_rehash into storage it allocated, outside its lock where it has
 * one), makes room, or does without. Entries move when keys are added, removed or rehashed: a
 * slot's address or index is valid only until the next change.
 *
 * Not thread-safe: the owner serializes changes (its lock, or a table filled once before it is
 * published); only dls_map_count may be read without that. Header-only C (libc and compiler.h),
 * no global state.
 *
 * The tables that stay custom say why where they are defined: cuda/kparams.c and
 * hooks/capsule_rows.c (read without a lock), cuda/identity.c's per-thread stream cache (a cache
 * may drop entries), hb/hb_map.h (hb includes nothing outside hb/). */
#ifndef DLS_MAP_H
#define DLS_MAP_H

#include "compiler.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum {
    DLS_MAP_WORDS,   /* keys are words, equal when identical */
    DLS_MAP_STRINGS, /* keys are `const char *`, equal when their text is */
} dls_map_kind;

typedef struct {
    void *slots;       /* cap slots of `size` bytes; NULL when cap is 0 */
    size_t cap;        /* 0 or a power of two */
    size_t size;       /* bytes per slot, the key word first */
    dls_map_kind kind; /* how keys hash and compare */
    atomic_size_t n;   /* keys held: written by the owner, readable without its lock */
} dls_map;

/* A map of `type` slots without storage yet (cap 0: full until the owner rehashes it). */
#define DLS_MAP_INIT(kind, type)         \
    {                                    \
        NULL, 0, sizeof(type), (kind), 0 \
    }

/* A map over the static array `array` (whose length is a power of two), for its whole life. */
#define DLS_MAP_OVER(kind, array)                                            \
    {                                                                        \
        (array), sizeof(array) / sizeof *(array), sizeof *(array), (kind), 0 \
    }

/* The number of keys held. A relaxed load: may be read without the owner's lock. */
static inline size_t dls_map_count(const dls_map *m)
{
    return atomic_load_explicit(&m->n, memory_order_relaxed);
}

/* The address of slot i (i < cap). */
static inline void *dls_map_at(const dls_map *m, size_t i)
{
    return (char *)m->slots + i * m->size;
}

/* The key of slot i (i < cap): 0 when it is empty. */
static inline uintptr_t dls_map_key_at(const dls_map *m, size_t i)
{
    uintptr_t k;
    memcpy(&k, dls_map_at(m, i), sizeof k);
    return k;
}

/* The slot where a probe for key starts (cap > 0): FNV-1a of a string's bytes, the high half of
 * a word's Fibonacci product. */
static inline size_t dls_map_home(const dls_map *m, uintptr_t key)
{
    uint64_t h;
    if (m->kind == DLS_MAP_STRINGS) {
        h = 1469598103934665603ull;
        for (const unsigned char *s = (const unsigned char *)key; *s; s++)
            h = (h ^ *s) * 1099511628211ull;
    } else {
        h = ((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 32;
    }
    return (size_t)h & (m->cap - 1);
}

/* 1 when the non-zero keys a and b are the same key. Strings are compared here, not by strcmp:
 * a probe that calls nothing keeps its state in scratch registers. */
static inline int dls_map_same(const dls_map *m, uintptr_t a, uintptr_t b)
{
    if (a == b)
        return 1;
    if (m->kind != DLS_MAP_STRINGS)
        return 0;
    const char *s = (const char *)a, *t = (const char *)b;
    while (*s && *s == *t)
        s++, t++;
    return *s == *t;
}

/* The index of the slot holding key, or of the empty slot ending its probe chain (where it would
 * go). Requires cap > 0 (a table at most half full always has an empty slot). */
static inline size_t dls_map_index(const dls_map *m, uintptr_t key)
{
    size_t i = dls_map_home(m, key);
    for (uintptr_t k; (k = dls_map_key_at(m, i)) != 0 && !dls_map_same(m, k, key);)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* The slot holding key, or NULL. */
static inline void *dls_map_get(const dls_map *m, uintptr_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = dls_map_index(m, key);
    return dls_map_key_at(m, i) ? dls_map_at(m, i) : NULL;
}

/* 1 when one more key would make the table more than half full (always with cap 0). */
static inline int dls_map_full(const dls_map *m)
{
    return (dls_map_count(m) + 1) * 2 > m->cap;
}

/* Claims the empty slot i, as dls_map_index found it for key, and returns it: key is written into
 * its first member, the rest of the slot is left for the caller to write whole. The table must
 * not be full. */
static inline void *dls_map_claim(dls_map *m, size_t i, uintptr_t key)
{
    void *slot = dls_map_at(m, i);
    memcpy(slot, &key, sizeof key);
    atomic_store_explicit(&m->n, dls_map_count(m) + 1, memory_order_relaxed);
    return slot;
}

/* The slot of key: the one holding it, else an empty one claimed for it (see dls_map_claim);
 * NULL when key is new and the table is full. */
static inline void *dls_map_put(dls_map *m, uintptr_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = dls_map_index(m, key);
    if (dls_map_key_at(m, i))
        return dls_map_at(m, i);
    return dls_map_full(m) ? NULL : dls_map_claim(m, i, key);
}

/* A word of a slot, which may be read and written whatever the slot's type. */
typedef uintptr_t DLS_MAY_ALIAS dls_map_word;

/* Copies slot `from` over slot `to` a word at a time (a slot, its key word first, is a whole number
 * of words), calling nothing. */
static inline void dls_map_move(const dls_map *m, size_t to, size_t from)
{
    dls_map_word *d = dls_map_at(m, to);
    const dls_map_word *s = dls_map_at(m, from);
    for (size_t k = 0; k < m->size / sizeof *d; k++)
        d[k] = s[k];
}

/* Empties slot i, which holds a key: each later entry of the probe chain whose home does not lie
 * cyclically in (i, j] moves back into the hole, which moves on to where it was, so no chain is
 * cut; the slot left empty at the end has its key cleared (its other bytes stay). */
static inline void dls_map_remove_at(dls_map *m, size_t i)
{
    size_t mask = m->cap - 1;
    for (size_t j = (i + 1) & mask; dls_map_key_at(m, j); j = (j + 1) & mask) {
        size_t home = dls_map_home(m, dls_map_key_at(m, j));
        if (((j - home) & mask) >= ((j - i) & mask)) {
            dls_map_move(m, i, j);
            i = j;
        }
    }
    memset(dls_map_at(m, i), 0, sizeof(uintptr_t));
    atomic_store_explicit(&m->n, dls_map_count(m) - 1, memory_order_relaxed);
}

/* Moves every entry into `slots` (cap slots, a power of two, zeroed, more than twice the count)
 * and returns the storage the map had (NULL when it had none), for the owner to free when it
 * allocated it. */
static inline void *dls_map_rehash(dls_map *m, void *slots, size_t cap)
{
    void *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = slots;
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        const char *from = (const char *)old + i * m->size;
        uintptr_t k;
        memcpy(&k, from, sizeof k);
        if (k)
            memcpy(dls_map_at(m, dls_map_index(m, k)), from, m->size);
    }
    return old;
}

/* Empties every slot; the storage stays. */
static inline void dls_map_clear(dls_map *m)
{
    if (m->cap)
        memset(m->slots, 0, m->cap * m->size);
    atomic_store_explicit(&m->n, 0, memory_order_relaxed);
}

/* Empties the map and leaves it without storage (cap 0); returns the storage it had (NULL when
 * none), for the owner to free. */
static inline void *dls_map_take(dls_map *m)
{
    void *old = m->slots;
    m->slots = NULL;
    m->cap = 0;
    atomic_store_explicit(&m->n, 0, memory_order_relaxed);
    return old;
}

#endif
