/* A stream's history of recent operations (see ring.h). */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

/* The bytes between [lo, hi) and lost range r (0 when they overlap or touch). */
static uintptr_t gap(const dls_pol_lost *r, uintptr_t lo, uintptr_t hi)
{
    return hi < r->lo ? r->lo - hi : lo > r->hi ? lo - r->hi : 0;
}

/* Widens lost range r to [lo, hi) at position pos. */
static void widen(dls_pol_lost *r, uintptr_t lo, uintptr_t hi, uint64_t pos)
{
    r->lo = lo < r->lo ? lo : r->lo;
    r->hi = hi > r->hi ? hi : r->hi;
    r->pos = pos > r->pos ? pos : r->pos;
}

/* Adds [lo, hi), touched by the pending entry at pos, to st's lost ranges: into the range it
 * overlaps or touches, else a range of its own (one the host saw complete is free again), else
 * (all taken) the nearest range, which only widens what the ranges cover. */
static void add_lost(dls_pol_stream *st, uintptr_t lo, uintptr_t hi, uint64_t pos) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_lost *lost = dls_pol_ring_lost_ranges(st);
    unsigned near = 0, free = st->nlost;
    for (unsigned i = 0; i < st->nlost; i++) {
        if (lost[i].pos <= st->done) {
            free = i;
            continue;
        }
        if (!gap(&lost[i], lo, hi)) {
            widen(&lost[i], lo, hi, pos);
            return;
        }
        if (gap(&lost[i], lo, hi) < gap(&lost[near], lo, hi) || lost[near].pos <= st->done)
            near = i;
    }
    if (free < st->nlost || st->nlost < DLS_POL_LOST)
        lost[free < st->nlost ? free : st->nlost++] = (dls_pol_lost){pos, lo, hi};
    else
        widen(&lost[near], lo, hi, pos);
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
            add_lost(st, (uintptr_t)e->words[i], (uintptr_t)e->words[i] + 1, e->pos);
    for (unsigned i = 0; i < e->a.nranges; i++)
        add_lost(st, e->a.lo[i], e->a.hi[i], e->pos);
}

uint64_t dls_pol_ring_lost(const dls_pol_stream *st, uintptr_t lo, uintptr_t hi)
{
    if (st->lost <= st->done)
        return 0;
    const dls_pol_lost *lost = dls_pol_ring_lost_ranges(st);
    uint64_t pos = st->lost_cons;
    for (unsigned i = 0; i < st->nlost; i++)
        if (lost[i].lo < hi && lo < lost[i].hi && lost[i].pos > pos)
            pos = lost[i].pos;
    return pos > st->done ? pos : 0;
}

int dls_pol_ring_alloc(dls_pol_stream *st)
{
    st->ring = malloc(DLS_POL_RING * sizeof *st->ring + DLS_POL_LOST * sizeof(dls_pol_lost));
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
