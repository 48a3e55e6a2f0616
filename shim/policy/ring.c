/* A stream's history of recent operations (see ring.h). */
#include "ring.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Adds [lo, hi), touched by the pending entry at pos (written when `writes`), to st's lost ranges,
 * which stay in address order and apart: the ranges it overlaps join it, ranges the host saw
 * complete go, and beyond DLS_POL_LOST ranges the two nearest each other merge (widening only what
 * the ranges cover, never moving one buffer's positions onto a distant one). */
static void add_lost(dls_pol_stream *st, uintptr_t lo, uintptr_t hi, uint64_t pos, int writes)
    DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_lost *lost = dls_pol_ring_lost_ranges(st);
    dls_pol_lost add = {pos, writes ? pos : 0, lo, hi};
    unsigned n = 0, at = UINT_MAX;
    for (unsigned i = 0; i < st->nlost; i++) {
        dls_pol_lost r = lost[i];
        if (r.pos <= st->done)
            continue;
        if (r.lo < add.hi && add.lo < r.hi) { /* the ranges it overlaps lie side by side */
            add.lo = r.lo < add.lo ? r.lo : add.lo;
            add.hi = r.hi > add.hi ? r.hi : add.hi;
            add.pos = r.pos > add.pos ? r.pos : add.pos;
            add.wpos = r.wpos > add.wpos ? r.wpos : add.wpos;
            continue;
        }
        if (at == UINT_MAX && r.lo >= add.hi)
            at = n;
        lost[n++] = r;
    }
    at = at == UINT_MAX ? n : at;
    memmove(&lost[at + 1], &lost[at], (n - at) * sizeof *lost); /* room for DLS_POL_LOST + 1 */
    lost[at] = add;
    if (++n > DLS_POL_LOST) {
        unsigned near = 0;
        for (unsigned i = 1; i + 1 < n; i++)
            if (lost[i + 1].lo - lost[i].hi < lost[near + 1].lo - lost[near].hi)
                near = i;
        dls_pol_lost *a = &lost[near], *b = &lost[near + 1];
        a->hi = b->hi;
        a->pos = b->pos > a->pos ? b->pos : a->pos;
        a->wpos = b->wpos > a->wpos ? b->wpos : a->wpos;
        memmove(b, b + 1, (n - near - 2) * sizeof *lost);
        n--;
    }
    st->nlost = n;
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
    int copy = e->a.kind == DLS_OP_MEMCPY || e->a.kind == DLS_OP_MEMSET; /* else it may write all it touches */
    for (unsigned i = 0; i < e->a.nranges; i++)
        add_lost(st, e->a.lo[i], e->a.hi[i], e->pos, !copy || (e->a.writes >> i & 1u));
}

uint64_t dls_pol_ring_lost(const dls_pol_stream *st, uintptr_t lo, uintptr_t hi, uint64_t *wpos)
{
    *wpos = 0;
    if (st->lost <= st->done)
        return 0;
    const dls_pol_lost *lost = dls_pol_ring_lost_ranges(st);
    uint64_t pos = st->lost_cons, w = st->lost_cons;
    for (unsigned i = 0; i < st->nlost && lost[i].lo < hi; i++)
        if (lo < lost[i].hi) {
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
