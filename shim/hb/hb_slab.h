/* The happens-before engine's one allocator of records: growing arrays (dls_hb_grow) and, over an
 * array of records numbered from 0 (threads, events, stream slots), a slab that reuses the
 * numbers of released records. A number is taken from the released ones first (newest first),
 * else past the last one taken; the free list has room for every record, so releasing never
 * fails. The records are the owner's array, grown here (new records zeroed); what a released
 * record holds is the owner's to clear. Not thread-safe; no global state. */
#ifndef DLS_HB_SLAB_H
#define DLS_HB_SLAB_H

#include <stddef.h>
#include <stdint.h>

/* Grows *p (elements of `size` bytes, capacity *cap) to hold at least need, doubling, the new
 * elements zeroed. 0 or ENOMEM (*p and *cap unchanged). */
int dls_hb_grow(void **p, uint32_t *cap, uint32_t need, size_t size);

typedef struct {
    uint32_t n;     /* numbers ever taken: every record taken is below n */
    uint32_t cap;   /* records allocated in the owner's array; room on the free list */
    uint32_t nfree; /* released numbers */
    uint32_t *free; /* the released numbers, newest last */
} dls_hb_slab;

/* Grows *items (records of `size` bytes) and the free list by one record at least. 0 or ENOMEM
 * (nothing changed). */
int dls_hb_slab_grow(dls_hb_slab *s, void **items, size_t size);

/* Makes sure the next dls_hb_slab_take has a record: when none was released and the array is
 * full, grows it (dls_hb_slab_grow). 0 or ENOMEM (nothing changed). Inline: hb asks it for every
 * new thread and event. */
static inline int dls_hb_slab_reserve(dls_hb_slab *s, void **items, size_t size)
{
    return s->nfree || s->n < s->cap ? 0 : dls_hb_slab_grow(s, items, size);
}

/* The number the next dls_hb_slab_take returns (after a successful reserve). */
static inline uint32_t dls_hb_slab_next(const dls_hb_slab *s)
{
    return s->nfree ? s->free[s->nfree - 1] : s->n;
}

/* Takes the number dls_hb_slab_next tells. */
static inline uint32_t dls_hb_slab_take(dls_hb_slab *s)
{
    return s->nfree ? s->free[--s->nfree] : s->n++;
}

/* Releases number i, taken: a later take may return it. */
static inline void dls_hb_slab_put(dls_hb_slab *s, uint32_t i)
{
    s->free[s->nfree++] = i;
}

/* Frees the free list (the records are the owner's to free); the slab is then empty. */
void dls_hb_slab_free(dls_hb_slab *s);

#endif
