/* A stream's history of recent operations (see ring.h). */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

/* Widens st's box of what its lost entries touched to [lo, hi). */
static void widen(dls_pol_stream *st, uintptr_t lo, uintptr_t hi)
{
    if (lo < st->lost_lo)
        st->lost_lo = lo;
    if (hi > st->lost_hi)
        st->lost_hi = hi;
}

void dls_pol_ring_forget(dls_pol_stream *st, const dls_pol_entry *e)
{
    if (st->lost <= st->done) { /* the previous box is complete: start afresh */
        st->lost_lo = UINTPTR_MAX;
        st->lost_hi = 0;
        st->lost_cons = 0;
    }
    st->lost = e->pos;
    st->lost_cons |= e->a.conservative;
    for (unsigned i = 0; i < e->a.nwords; i++)
        if (e->words[i] >= 4096)
            widen(st, (uintptr_t)e->words[i], (uintptr_t)e->words[i] + 1);
    for (unsigned i = 0; i < e->a.nranges; i++)
        widen(st, e->a.lo[i], e->a.hi[i]);
}

int dls_pol_ring_alloc(dls_pol_stream *st)
{
    st->ring = malloc(DLS_POL_RING * sizeof *st->ring);
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
