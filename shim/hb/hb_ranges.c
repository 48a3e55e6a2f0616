/* Interval treap of tracked ranges with pooled nodes (see hb_ranges.h). */
#include "hb_ranges.h"

#include "hb_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 8
#define CHUNK (1u << CHUNK_BITS)
#define NIL DLS_HB_NONE

static dls_hb_rnode *node(const dls_hb_ranges *r, uint32_t i)
{
    return &r->chunks[i >> CHUNK_BITS][i & (CHUNK - 1)];
}

void dls_hb_ranges_init(dls_hb_ranges *r)
{
    memset(r, 0, sizeof *r);
    r->free_head = NIL;
    r->root = NIL;
    r->seed = 0x9e3779b9u;
}

void dls_hb_ranges_free(dls_hb_ranges *r)
{
    for (uint32_t i = 0; i < r->used; i++) {
        dls_hb_rnode *n = node(r, i);
        if ((n->gen & 1) && n->cap)
            free(n->a.heap);
    }
    for (uint32_t c = 0; c < r->nchunks; c++)
        free(r->chunks[c]);
    free(r->chunks);
    dls_hb_ranges_init(r);
}

static uint32_t next_prio(dls_hb_ranges *r)
{
    uint32_t x = r->seed; /* xorshift32 */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    r->seed = x;
    return x;
}

static int key_less(const dls_hb_ranges *r, uint32_t a, uint32_t b)
{
    uint64_t la = node(r, a)->lo, lb = node(r, b)->lo;
    return la < lb || (la == lb && a < b);
}

static void update(dls_hb_ranges *r, uint32_t t)
{
    dls_hb_rnode *n = node(r, t);
    uint64_t m = n->hi;
    if (n->left != NIL && node(r, n->left)->maxhi > m)
        m = node(r, n->left)->maxhi;
    if (n->right != NIL && node(r, n->right)->maxhi > m)
        m = node(r, n->right)->maxhi;
    n->maxhi = m;
}

/* Splits t into keys < k (*l) and keys > k (*g); k itself is not in t. */
static void split(dls_hb_ranges *r, uint32_t t, uint32_t k, uint32_t *l, uint32_t *g)
{
    if (t == NIL) {
        *l = *g = NIL;
        return;
    }
    dls_hb_rnode *n = node(r, t);
    if (key_less(r, t, k)) {
        split(r, n->right, k, &n->right, g);
        *l = t;
    } else {
        split(r, n->left, k, l, &n->left);
        *g = t;
    }
    update(r, t);
}

/* Joins a and b where every key of a is below every key of b. */
static uint32_t merge(dls_hb_ranges *r, uint32_t a, uint32_t b)
{
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    dls_hb_rnode *na = node(r, a), *nb = node(r, b);
    if (na->prio > nb->prio) {
        na->right = merge(r, na->right, b);
        update(r, a);
        return a;
    }
    nb->left = merge(r, a, nb->left);
    update(r, b);
    return b;
}

static uint32_t erase(dls_hb_ranges *r, uint32_t t, uint32_t k)
{
    dls_hb_rnode *n = node(r, t);
    if (t == k)
        return merge(r, n->left, n->right);
    if (key_less(r, k, t))
        n->left = erase(r, n->left, k);
    else
        n->right = erase(r, n->right, k);
    update(r, t);
    return t;
}

static int alloc_node(dls_hb_ranges *r, uint32_t *out)
{
    if (r->free_head != NIL) {
        *out = r->free_head;
        r->free_head = node(r, *out)->left;
        return 0;
    }
    if (r->used == NIL - 1)
        return ENOMEM;
    if ((r->used & (CHUNK - 1)) == 0) {
        uint32_t c = r->used >> CHUNK_BITS;
        if (c == r->nchunks) {
            uint32_t nc = r->nchunks ? r->nchunks * 2 : 4;
            dls_hb_rnode **t = realloc(r->chunks, (size_t)nc * sizeof *t);
            if (!t)
                return ENOMEM;
            memset(t + r->nchunks, 0, (size_t)(nc - r->nchunks) * sizeof *t);
            r->chunks = t;
            r->nchunks = nc;
        }
        if (!r->chunks[c]) {
            r->chunks[c] = calloc(CHUNK, sizeof(dls_hb_rnode));
            if (!r->chunks[c])
                return ENOMEM;
        }
    }
    *out = r->used++;
    return 0;
}

int dls_hb_ranges_add(dls_hb_ranges *r, uint64_t lo, uint64_t hi, uint64_t *handle)
{
    if (lo >= hi)
        return EINVAL;
    uint32_t i;
    if (alloc_node(r, &i) != 0)
        return ENOMEM;
    dls_hb_rnode *n = node(r, i);
    uint32_t gen = n->gen + 1;
    memset(n, 0, sizeof *n);
    n->gen = gen;
    n->lo = lo;
    n->hi = hi;
    n->maxhi = hi;
    n->left = n->right = NIL;
    n->prio = next_prio(r);
    uint32_t a, b;
    split(r, r->root, i, &a, &b);
    r->root = merge(r, merge(r, a, i), b);
    r->live++;
    *handle = (uint64_t)gen << 32 | i;
    return 0;
}

dls_hb_rnode *dls_hb_ranges_get(const dls_hb_ranges *r, uint64_t handle)
{
    uint32_t i = (uint32_t)handle, gen = (uint32_t)(handle >> 32);
    if (i >= r->used || !(gen & 1))
        return NULL;
    dls_hb_rnode *n = node(r, i);
    return n->gen == gen ? n : NULL;
}

int dls_hb_ranges_remove(dls_hb_ranges *r, uint64_t handle)
{
    dls_hb_rnode *n = dls_hb_ranges_get(r, handle);
    if (!n)
        return ENOENT;
    uint32_t i = (uint32_t)handle;
    r->root = erase(r, r->root, i);
    if (n->cap) {
        free(n->a.heap);
        r->heap_bytes -= (size_t)n->cap * sizeof(dls_hb_acc);
    }
    n->cap = 0;
    n->nacc = 0;
    n->gen++;
    n->left = r->free_head;
    r->free_head = i;
    r->live--;
    return 0;
}

int dls_hb_rnode_reserve(dls_hb_ranges *r, dls_hb_rnode *n, uint32_t need)
{
    uint32_t have = n->cap ? n->cap : 2;
    if (need <= have)
        return 0;
    uint32_t cap = have * 2 > need ? have * 2 : need;
    dls_hb_acc *h = malloc((size_t)cap * sizeof *h);
    if (!h)
        return ENOMEM;
    memcpy(h, dls_hb_rnode_acc(n), (size_t)n->nacc * sizeof *h);
    if (n->cap) {
        free(n->a.heap);
        r->heap_bytes -= (size_t)n->cap * sizeof *h;
    }
    n->a.heap = h;
    n->cap = cap;
    r->heap_bytes += (size_t)cap * sizeof *h;
    return 0;
}

static int visit(const dls_hb_ranges *r, uint32_t t, uint64_t lo, uint64_t hi, dls_hb_range_fn fn,
                 void *ctx)
{
    while (t != NIL) {
        dls_hb_rnode *n = node(r, t);
        if (n->maxhi <= lo)
            return 0;
        int rc = visit(r, n->left, lo, hi, fn, ctx);
        if (rc)
            return rc;
        if (n->lo >= hi)
            return 0;
        if (n->hi > lo && (rc = fn(ctx, (uint64_t)n->gen << 32 | t, n)) != 0)
            return rc;
        t = n->right;
    }
    return 0;
}

int dls_hb_ranges_overlap(const dls_hb_ranges *r, uint64_t lo, uint64_t hi, dls_hb_range_fn fn,
                          void *ctx)
{
    return lo < hi ? visit(r, r->root, lo, hi, fn, ctx) : 0;
}

size_t dls_hb_ranges_bytes(const dls_hb_ranges *r)
{
    size_t chunks = 0;
    for (uint32_t c = 0; c < r->nchunks; c++)
        if (r->chunks[c])
            chunks++;
    return chunks * CHUNK * sizeof(dls_hb_rnode) + r->nchunks * sizeof *r->chunks + r->heap_bytes;
}
