/* Tracked byte ranges of the happens-before engine: an interval treap (keyed by start address,
 * augmented with the subtree's highest end) whose nodes live in a chunked pool addressed by
 * 32-bit indices, so a range costs one fixed-size node and no allocation of its own. Each node
 * carries the range's access frontier (two entries inline, more on the heap).
 * Handles are (generation << 32 | index); a stale handle never matches a reused node.
 * Not thread-safe; no global state (the treap's priorities come from a per-structure seed). */
#ifndef DLS_HB_RANGES_H
#define DLS_HB_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* One recorded access: by the operation at position `pos` of stream slot `slot`. */
typedef struct {
    uint64_t op;
    uint64_t pos;
    uint32_t slot;
    uint32_t kind; /* dls_hb_access_kind */
} dls_hb_acc;

typedef struct {
    uint64_t lo, hi;  /* the range [lo, hi) */
    uint64_t maxhi;   /* highest hi in this subtree */
    uint32_t left, right; /* children (DLS_HB_NONE when absent); `left` links the free list */
    uint32_t prio;    /* treap heap priority */
    uint32_t gen;     /* odd while tracked, even while free */
    uint32_t nacc;    /* frontier entries */
    uint32_t cap;     /* 0: entries inline in a.inl; else capacity of a.heap */
    union {
        dls_hb_acc inl[2];
        dls_hb_acc *heap;
    } a;
} dls_hb_rnode;

typedef struct {
    dls_hb_rnode **chunks;
    uint32_t nchunks;
    uint32_t used;      /* nodes handed out from the chunks so far (high-water mark) */
    uint32_t free_head; /* first free node, DLS_HB_NONE when none */
    uint32_t root;
    uint32_t live;
    uint32_t seed;
    size_t heap_bytes;  /* bytes of frontier arrays on the heap */
} dls_hb_ranges;

/* Prepares an empty set. */
void dls_hb_ranges_init(dls_hb_ranges *r);

/* Frees everything; the set is empty (and usable) afterwards. */
void dls_hb_ranges_free(dls_hb_ranges *r);

/* Adds [lo, hi) (lo < hi, else EINVAL) and stores its handle. 0 or ENOMEM. */
int dls_hb_ranges_add(dls_hb_ranges *r, uint64_t lo, uint64_t hi, uint64_t *handle);

/* Removes a live range. 0 or ENOENT. */
int dls_hb_ranges_remove(dls_hb_ranges *r, uint64_t handle);

/* The live node of handle, or NULL. */
dls_hb_rnode *dls_hb_ranges_get(const dls_hb_ranges *r, uint64_t handle);

/* The frontier entries of a node (nacc of them). */
static inline dls_hb_acc *dls_hb_rnode_acc(dls_hb_rnode *n)
{
    return n->cap ? n->a.heap : n->a.inl;
}

/* Makes room for `need` frontier entries in n. 0 or ENOMEM (n unchanged). */
int dls_hb_rnode_reserve(dls_hb_ranges *r, dls_hb_rnode *n, uint32_t need);

/* Calls fn(ctx, handle, node) for each live range overlapping [lo, hi) (none when lo >= hi),
 * in address order, until fn returns non-zero (which is then returned); 0 when all were
 * visited. */
typedef int (*dls_hb_range_fn)(void *ctx, uint64_t handle, dls_hb_rnode *n);
int dls_hb_ranges_overlap(const dls_hb_ranges *r, uint64_t lo, uint64_t hi, dls_hb_range_fn fn,
                          void *ctx);

/* Bytes used: node chunks, the chunk table, and heap frontier arrays. */
size_t dls_hb_ranges_bytes(const dls_hb_ranges *r);

#endif
