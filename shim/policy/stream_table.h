/* The policy's table of streams (types.h, dls_pol_g.streams): each CUDA stream the policy has seen,
 * found by its driver id, added to the table and to the hb engine at first sight, until it is
 * forgotten: destroyed, with all its work seen complete by the host or superseded by later work
 * (superseded.h). A forgotten stream's positions need no ordering any more (complete.h,
 * dls_pol_ordered), so a program that creates a stream for each exchange keeps the table, hb's
 * clocks and every walk over the streams as small as the streams it has at once. The exception is
 * check, which asks as of a call's begin, maybe from before the host knew a stream's work complete:
 * under check, hb keeps the latest DLS_POL_RECENT forgotten streams, and
 * dls_pol_stream_find_forgotten finds them. Read and written with the policy lock held. */
#ifndef DLS_POL_STREAM_TABLE_H
#define DLS_POL_STREAM_TABLE_H

#include "types.h"

/* The stream of `s` (an operation's stream), added at first sight; NULL when it cannot
 * be modelled (unresolved) or memory is short. `tid` is the thread using it. */
dls_pol_stream *dls_pol_stream_get(const dls_cuda_stream *s, uint64_t tid) DLS_REQUIRES(dls_pol_g.lock);

/* The known stream with hb id `id`, or NULL. */
dls_pol_stream *dls_pol_stream_find(uint64_t id) DLS_REQUIRES(dls_pol_g.lock);

/* The stream with hb id `id` among the latest DLS_POL_RECENT forgotten ones, or NULL.
 * Its `done` values stay: check asks as of a begin that may precede them (complete.c). */
dls_pol_stream *dls_pol_stream_find_forgotten(uint64_t id) DLS_REQUIRES(dls_pol_g.lock);

/* Stream st is being destroyed (cuStreamDestroy began): it takes no more operations, and
 * it is forgotten now when the host knows its work complete, else once it does
 * (dls_pol_stream_forget_done). */
void dls_pol_stream_remove(dls_pol_stream *st) DLS_REQUIRES(dls_pol_g.lock);

/* Forgets destroyed stream st now: its work is complete, or no question will ask of it
 * (superseded.h). Out of the table and of hb, its history freed; the record itself is freed by a
 * later dls_pol_stream_reap once nothing holds it. */
void dls_pol_stream_forget(dls_pol_stream *st) DLS_REQUIRES(dls_pol_g.lock);

/* Keeps st's record valid past the lock until the matching dls_pol_stream_drop, forgotten or not
 * (NULL is ignored; returns st): for a pointer kept while the lock is released. Any thread, on a
 * record it found under the lock or already holds. */
static inline dls_pol_stream *dls_pol_stream_hold(dls_pol_stream *st)
{
    if (st)
        atomic_fetch_add_explicit(&st->holds, 1, memory_order_relaxed);
    return st;
}

/* Drops a hold taken with dls_pol_stream_hold (NULL is ignored). Any thread, lock held or not. */
static inline void dls_pol_stream_drop(dls_pol_stream *st)
{
    if (st)
        atomic_fetch_sub_explicit(&st->holds, 1, memory_order_release);
}

/* By a caller that keeps no stream pointer of its own: frees the forgotten records nothing holds
 * (a record forgotten is found no more, so no hold can come later). */
void dls_pol_stream_reap(void) DLS_REQUIRES(dls_pol_g.lock);

/* Forgets every destroyed stream whose work the host now knows complete (after a host
 * synchronize). */
void dls_pol_stream_forget_done(void) DLS_REQUIRES(dls_pol_g.lock);

/* Lock held: runs the statement that follows once for each stream of the table, in no set order,
 * with s (a dls_pol_stream pointer of the caller's) set to it; `continue` and `break` work as in a
 * loop. The statement must not add or forget streams (forgetting moves them: collect, then
 * forget). A walk of dls_pol_g.listed: as long as the streams known, not as the table's slots.
 *     dls_pol_stream *s;
 *     DLS_POL_EACH_STREAM(s) { ... } */
#define DLS_POL_EACH_STREAM(s) \
    for (uint32_t s##_at = 0; s##_at < dls_pol_g.nlisted && ((s) = dls_pol_g.listed[s##_at], 1); s##_at++)

#endif
