/* The access record (types.h, dls_pol_access): building it for an operation the observer hands
 * over, keeping it in a stream's history and reading it back, and the questions every decision
 * asks of it. Adding an operation kind, or a new way of being conservative, changes this file
 * and nothing that asks. No lock needed. */
#ifndef DLS_POL_ACCESS_H
#define DLS_POL_ACCESS_H

#include "types.h"

#include <string.h>

/* The builders' common part: a's kind, names, ranges (a writes bit for each written one; an
 * operation with more ranges than an access keeps is conservative) and words, pointing into what
 * the caller gave. Inline: every operation deferred is built. */
static inline void dls_pol_access_fill(dls_pol_access *a, dls_op_kind kind, unsigned flags, uint32_t corr,
                                       const char *api, const char *name, const dls_cuda_range *ranges,
                                       uint32_t nranges, const uint64_t *words, uint32_t nwords)
{
    int conservative = (flags & DLS_OPF_CONSERVATIVE) || kind == DLS_OP_GRAPH_LAUNCH || nranges > 2;
    a->kind = kind;
    a->conservative = (unsigned char)conservative;
    a->boxed = 0;
    a->writes = 0;
    a->op = corr;
    a->api = api;
    a->name = kind == DLS_OP_LAUNCH ? name : NULL;
    a->nranges = conservative ? 0 : (unsigned char)nranges;
    for (unsigned i = 0; i < a->nranges; i++) {
        a->lo[i] = ranges[i].addr;
        a->hi[i] = ranges[i].addr + ranges[i].len;
        if (ranges[i].access == DLS_ACCESS_WRITE)
            a->writes |= (unsigned char)(1u << i);
    }
    a->words = conservative ? NULL : words;
    a->nwords = conservative ? 0 : nwords;
    a->graph_exec = 0;
}

/* The access of op (any kind; what it touches, for the memory operations, frees and graph
 * launches), pointing into op. */
void dls_pol_access_of_op(dls_pol_access *a, const dls_cuda_op *op);

/* The access of work w (a launch, copy or set of the work lane), pointing into w. */
static inline void dls_pol_access_of_work(dls_pol_access *a, const dls_cuda_work *w)
{
    dls_pol_access_fill(a, w->kind, w->flags, w->correlation_id, w->api, w->name, w->ranges, w->nranges, w->words,
                        w->nwords);
}

/* Copies name into e->name, cut short when longer, and points e's access at it. */
static inline void dls_pol_entry_name(dls_pol_entry *e, const char *name)
{
    unsigned i = 0;
    for (; i < DLS_POL_NAME - 1 && name[i]; i++)
        e->name[i] = name[i];
    e->name[i] = '\0';
    e->a.name = e->name;
}

/* Keeps e's wide launch (more words than an entry holds, `words`) as the bounding box of its
 * pointer-like words, range 0 (words below 4096 are taken for sizes, not pointers). */
void dls_pol_entry_box(dls_pol_entry *e, const uint64_t *words);

/* Makes the access of e, built in place, own what it points to: copies its words (their bounding
 * box when there are more than an entry keeps) and its name into e. */
static inline void dls_pol_entry_own(dls_pol_entry *e)
{
    const uint64_t *words = e->a.words;
    if (e->a.nwords > DLS_POL_WORDS) {
        dls_pol_entry_box(e, words);
    } else {
        for (uint32_t i = 0; i < e->a.nwords; i++)
            e->words[i] = words[i];
        e->a.words = e->words;
    }
    if (e->a.name)
        dls_pol_entry_name(e, e->a.name);
    else
        e->name[0] = '\0';
}

/* Stores access a in history entry e (all but its position), which owns copies of what a points
 * to (dls_pol_entry_own). */
static inline void dls_pol_entry_store(dls_pol_entry *e, const dls_pol_access *a)
{
    e->a = *a;
    dls_pol_entry_own(e);
}

/* dls_pol_entry_store of the access of work w. */
static inline void dls_pol_entry_of_work(dls_pol_entry *e, const dls_cuda_work *w)
{
    dls_pol_access_of_work(&e->a, w);
    dls_pol_entry_own(e);
}

/* Copies entry src, position included, into dst (the only way to copy an entry: types.h). */
static inline void dls_pol_entry_copy(dls_pol_entry *dst, const dls_pol_entry *src)
{
    dst->pos = src->pos;
    dst->a = src->a;
    dst->a.words = dst->words;
    for (uint32_t i = 0; i < src->a.nwords; i++)
        dst->words[i] = src->words[i];
    if (src->a.name)
        dls_pol_entry_name(dst, src->name);
    else
        dst->name[0] = '\0';
}

/* 1 when entries a and b are the same operation but for their position and call: the same kind,
 * API and name, touching the same ranges, words and graph the same way. Inline: every entry put
 * asks it of the history's newest. */
static inline int dls_pol_entry_same(const dls_pol_entry *a, const dls_pol_entry *b)
{
    const dls_pol_access *x = &a->a, *y = &b->a;
    if (x->kind != y->kind || x->nranges != y->nranges || x->nwords != y->nwords || x->writes != y->writes ||
        x->conservative != y->conservative || x->boxed != y->boxed || x->api != y->api ||
        x->graph_exec != y->graph_exec || !x->name != !y->name)
        return 0;
    for (unsigned i = 0; i < x->nranges; i++)
        if (x->lo[i] != y->lo[i] || x->hi[i] != y->hi[i])
            return 0;
    for (uint32_t i = 0; i < x->nwords; i++)
        if (a->words[i] != b->words[i])
            return 0;
    return !x->name || !strcmp(a->name, b->name);
}

/* The name reports give the operation: a launch's kernel name, else the API. */
const char *dls_pol_access_name(const dls_pol_access *a);

/* 1 when a may touch [lo, hi): conservative, a launch word in [alo, hi) (alo <= lo: attribution
 * counts words pointing into the allocation below a view; a use passes alo = lo), an overlapping
 * range (a wide launch's bounding box from alo). Operations that touch no memory never do. */
int dls_pol_touches(const dls_pol_access *a, uintptr_t alo, uintptr_t lo, uintptr_t hi);

/* 1 when a writes into [lo, hi) as far as its kind says (a copy's destination, a set); the caller
 * knows it touches the range. */
int dls_pol_writes(const dls_pol_access *a, uintptr_t lo, uintptr_t hi);

/* 1 when range i of a may be written: a copy's or a set's when its written bit says so, any other
 * kind's (a launch's box, a free) always. */
static inline int dls_pol_range_may_write(const dls_pol_access *a, unsigned i)
{
    return (a->kind != DLS_OP_MEMCPY && a->kind != DLS_OP_MEMSET) || (a->writes >> i & 1u);
}

/* 1 when a uses or frees memory of exchange x (a stream-ordered free counts: the allocator may
 * hand the memory to work ordered after the free). */
int dls_pol_reuses(const dls_pol_access *a, const dls_pol_x *x);

/* 1 when a reuses all of x: conservative, a launch given the start of x or of its allocation, or
 * a copy, set or free range covering it (later users of the memory are then ordered after a by
 * the program itself). */
int dls_pol_reuses_all(const dls_pol_access *a, const dls_pol_x *x);

#endif
