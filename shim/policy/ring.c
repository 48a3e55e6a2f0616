/* A stream's history of recent operations (see ring.h). */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

/* The first of the n lost ranges `lost` (in address order, apart) that ends above lo. */
static unsigned first_above(const dls_pol_lost *lost, unsigned n, uintptr_t lo)
{
    unsigned a = 0, b = n;
    while (a < b) {
        unsigned m = a + (b - a) / 2;
        if (lost[m].hi <= lo)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* Widens lost range r by range add. */
static void join(dls_pol_lost *r, const dls_pol_lost *add)
{
    r->lo = add->lo < r->lo ? add->lo : r->lo;
    r->hi = add->hi > r->hi ? add->hi : r->hi;
    r->pos = add->pos > r->pos ? add->pos : r->pos;
    r->wpos = add->wpos > r->wpos ? add->wpos : r->wpos;
}

/* Brings st's n = DLS_POL_LOST + 1 lost ranges back to DLS_POL_LOST or fewer: drops those the
 * host saw complete, else merges every two neighbours as near each other as the nearest two (one
 * pass for a run of scattered bytes). Returns how many are left. */
static unsigned make_room(dls_pol_stream *st, dls_pol_lost *lost, unsigned n) DLS_REQUIRES(dls_pol_g.lock)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        if (lost[i].pos > st->done)
            lost[k++] = lost[i];
    if (k < n)
        return k;
    uintptr_t least = UINTPTR_MAX;
    for (unsigned i = 0; i + 1 < n; i++)
        least = lost[i + 1].lo - lost[i].hi < least ? lost[i + 1].lo - lost[i].hi : least;
    k = 1;
    for (unsigned i = 1; i < n; i++)
        if (lost[i].lo - lost[k - 1].hi <= least)
            join(&lost[k - 1], &lost[i]);
        else
            lost[k++] = lost[i];
    return k;
}

/* Adds [lo, hi), touched by the pending entry at pos (written when `writes`), to st's lost ranges,
 * which stay in address order and apart: the ranges it overlaps join it, and beyond DLS_POL_LOST
 * ranges those the host saw complete go, else the nearest neighbours merge (widening only what the
 * ranges cover, never moving one buffer's positions onto a distant one). */
static void add_lost(dls_pol_stream *st, uintptr_t lo, uintptr_t hi, uint64_t pos, int writes)
    DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_lost *lost = dls_pol_ring_lost_ranges(st);
    dls_pol_lost add = {pos, writes ? pos : 0, lo, hi};
    unsigned n = st->nlost, at = first_above(lost, n, lo), end = at;
    for (; end < n && lost[end].lo < hi; end++)
        join(&add, &lost[end]);
    memmove(&lost[at + 1], &lost[end], (n - end) * sizeof *lost); /* room for DLS_POL_LOST + 1 */
    lost[at] = add;
    n = n + 1 - (end - at);
    st->nlost = n > DLS_POL_LOST ? make_room(st, lost, n) : n;
}

void dls_pol_ring_forget(dls_pol_stream *st, const dls_pol_entry *e)
{
    if (st->lost <= st->done) { /* the previous ranges are complete: start afresh */
        st->nlost = 0;
        st->lost_cons = 0;
    }
    st->lost = e->pos;
    if (e->a.conservative)
        st->lost_cons = e->pos;
    for (unsigned i = 0; i < e->a.nwords; i++)
        if (e->words[i] >= 4096)
            add_lost(st, (uintptr_t)e->words[i], (uintptr_t)e->words[i] + 1, e->pos, 1);
    for (unsigned i = 0; i < e->a.nranges; i++)
        add_lost(st, e->a.lo[i], e->a.hi[i], e->pos, dls_pol_range_may_write(&e->a, i));
}

uint64_t dls_pol_ring_lost(const dls_pol_stream *st, uintptr_t lo, uintptr_t hi, uint64_t *wpos)
{
    *wpos = 0;
    if (st->lost <= st->done)
        return 0;
    const dls_pol_lost *lost = dls_pol_ring_lost_ranges(st);
    uint64_t pos = st->lost_cons, w = st->lost_cons;
    for (unsigned i = first_above(lost, st->nlost, lo); i < st->nlost && lost[i].lo < hi; i++) {
        pos = lost[i].pos > pos ? lost[i].pos : pos;
        w = lost[i].wpos > w ? lost[i].wpos : w;
    }
    *wpos = w > st->done ? w : 0;
    return pos > st->done ? pos : 0;
}

int dls_pol_ring_alloc(dls_pol_stream *st)
{
    st->ring = malloc(DLS_POL_RING * sizeof *st->ring + (DLS_POL_LOST + 1) * sizeof(dls_pol_lost));
    if (st->ring)
        return 0;
    dls_pol_degrade("policy-ring-memory", "out of memory recording a stream's recent operations");
    return -1;
}

void dls_pol_stream_done(dls_pol_stream *st, uint64_t pos, uint64_t end)
{
    if (pos <= st->done)
        return;
    if (end != st->seen[0].end) /* a new call: the oldest value kept goes */
        memmove(&st->seen[1], &st->seen[0], (DLS_POL_DONE_SEEN - 1) * sizeof st->seen[0]);
    st->seen[0] = (dls_pol_done_seen){pos, end};
    st->done = pos;
}
