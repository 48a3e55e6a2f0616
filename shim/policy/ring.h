/* A stream's history (types.h, dls_pol_stream: ring, head, count, lost*): its last DLS_POL_RING
 * operations that touch memory, each with its position (an operation repeated back to back once,
 * at its latest), and, for the pending ones the history had to overwrite, up to DLS_POL_LOST byte
 * ranges, in address order and apart, each at the position of the newest of them that touched it
 * and of the newest that may have written it (beyond DLS_POL_LOST, the nearest neighbours merge),
 * and the position of the newest that may touch anything. An entry lost to the history can only
 * widen a frontier, never drop a writer; the buffers a stream touched stay apart up to
 * DLS_POL_LOST of them, and what it only read never counts as its write. Entries at or below the
 * stream's `done` position are complete to the host and count for nothing. Lock held. */
#ifndef DLS_POL_RING_H
#define DLS_POL_RING_H

#include "access.h"
#include "types.h"

/* Folds pending entry e, about to be overwritten, into st's lost ranges (words below 4096 are
 * taken for sizes, not pointers). */
void dls_pol_ring_forget(dls_pol_stream *st, const dls_pol_entry *e) DLS_REQUIRES(dls_pol_g.lock);

/* st's lost ranges (nlost of them, room for one more), kept after its history's entries. */
static inline dls_pol_lost *dls_pol_ring_lost_ranges(const dls_pol_stream *st) DLS_REQUIRES(dls_pol_g.lock)
{
    return (dls_pol_lost *)(st->ring + DLS_POL_RING);
}

/* The position of the newest pending entry st's history overwrote that may touch [lo, hi), or 0;
 * *wpos that of the newest that may write it, or 0. */
uint64_t dls_pol_ring_lost(const dls_pol_stream *st, uintptr_t lo, uintptr_t hi, uint64_t *wpos)
    DLS_REQUIRES(dls_pol_g.lock);

/* Allocates st's history at its first memory operation. Returns 0, or -1 when memory is short
 * (the model is then degraded: an operation missing from a history could be a tensor's writer). */
int dls_pol_ring_alloc(dls_pol_stream *st) DLS_REQUIRES(dls_pol_g.lock);

/* Appends src at position pos to st's history (overwriting the oldest entry, folded into the
 * lost ranges when it is pending). The entry overwritten is pending when the lost ranges are open
 * (lost > done: the history overwrites in position order, so it is newer than every lost entry)
 * or when its own position says so; slots beyond `count` were never written (the history is not
 * cleared when allocated). The same operation as the newest entry (a stream writing one buffer
 * over and over) moves that entry to pos instead: for every question the history answers, a
 * stream's later position covers its earlier ones. Inline: every operation applied is put. */
static inline void dls_pol_ring_put(dls_pol_stream *st, const dls_pol_entry *src, uint64_t pos)
    DLS_REQUIRES(dls_pol_g.lock)
{
    if (!st->ring && dls_pol_ring_alloc(st))
        return;
    dls_pol_entry *newest = &st->ring[(st->head + DLS_POL_RING - 1) % DLS_POL_RING];
    if (st->count && dls_pol_entry_same(newest, src)) {
        newest->pos = pos;
        return;
    }
    dls_pol_entry *e = &st->ring[st->head];
    if (st->count < DLS_POL_RING)
        st->count++;
    else if (st->lost > st->done || e->pos > st->done)
        dls_pol_ring_forget(st, e);
    dls_pol_entry_copy(e, src);
    e->pos = pos;
    st->head = (st->head + 1) % DLS_POL_RING;
}

/* The host observed completion of st up to position pos, in a call that ended at stamp `end`. */
void dls_pol_stream_done(dls_pol_stream *st, uint64_t pos, uint64_t end) DLS_REQUIRES(dls_pol_g.lock);

#endif
