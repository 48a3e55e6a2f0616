/* Exchange states (types.h, dls_pol_x): created from a registry entry at the first export or
 * import, in the live list while the consumer holds the tensor, then in the released list while
 * its release is watched (check) or fenced (fix); their ranges are in the index (index.h). Lock
 * held. */
#ifndef DLS_POL_EXCH_H
#define DLS_POL_EXCH_H

#include "access.h"
#include "types.h"

/* The exchange states, the live ones first, then the released ones newest first:
 *     for (dls_pol_x *x = dls_pol_x_first(); x; x = dls_pol_x_next(x))
 * The walk must not link, release or drop a state. */
static inline dls_pol_x *dls_pol_x_first(void) DLS_REQUIRES(dls_pol_g.lock)
{
    return dls_pol_g.live ? dls_pol_g.live : dls_pol_g.released;
}

static inline dls_pol_x *dls_pol_x_next(const dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock)
{
    return x->next || x->released ? x->next : dls_pol_g.released;
}

/* A new state for x (NULL when memory is short), not yet linked. Reads the tensor's shape. */
dls_pol_x *dls_pol_x_new(const dls_exchange *x) DLS_REQUIRES(dls_pol_g.lock);

/* Links x into the live list and adds its range to the index. */
void dls_pol_x_link(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* Unlinks x from whichever list holds it and frees it. */
void dls_pol_x_drop(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* Moves live x to the released list, dropping the oldest beyond DLS_POL_RELEASED; every use's
 * `rel` becomes its latest position (later accesses came after the release) and
 * x->released_syncs the host synchronizes learned so far. */
void dls_pol_x_release(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when thread tid knows every use of x complete, as of stamp `begin` (dls_pol_ordered; the
 * begin of the call asking, DLS_HB_NOW: from now on). */
int dls_pol_x_uses_complete(const dls_pol_x *x, uint64_t tid, uint64_t begin) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when every producer access pending at x's export is ordered before thread tid's host, as of
 * `begin` (check keeps a released exchange while one is not: its memory's reuse must follow
 * them too). */
int dls_pol_x_front_complete(const dls_pol_x *x, uint64_t tid, uint64_t begin) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when released x need no longer be watched by thread tid's call that began at `begin`
 * (DLS_HB_NOW: its next one): tid knows its uses complete as of then and the host synchronized
 * since the release (an access the consumer makes after releasing the tensor comes before its
 * next synchronize, in the common case of a deleter called early). */
int dls_pol_x_released_done(const dls_pol_x *x, uint64_t tid, uint64_t begin) DLS_REQUIRES(dls_pol_g.lock);

/* The memory of x comes round again in a new export: drops the released states overlapping it,
 * under check all of them (their watch ends here: what touches the memory from now on is the new
 * exchange's, and what touched it since the release was checked at its ENTER), under fix those
 * whose uses thread tid knows complete (the rest keep fencing the memory's writers). */
void dls_pol_x_forget_released(const dls_pol_x *x, uint64_t tid) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when stream id is in x->ordered; dls_pol_x_mark_ordered adds it. */
int dls_pol_x_is_ordered(const dls_pol_x *x, uint64_t stream) DLS_REQUIRES(dls_pol_g.lock);
void dls_pol_x_mark_ordered(dls_pol_x *x, uint64_t stream) DLS_REQUIRES(dls_pol_g.lock);

/* Remembers that stream's operation `name` at pos touched x in direction dir (access.h,
 * dls_pol_direction): its latest access, latest access that may write, latest known write, with
 * the event recorded right after it (`after`, a reference is taken; NULL: none). */
void dls_pol_x_note_use(dls_pol_x *x, uint64_t stream, uint64_t pos, const char *name, dls_pol_dir dir,
                        dls_pol_after *after) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when stream is one of x's producer streams: in its frontier at the export, or with an operation
 * touching x in its history then (a producer that synchronized before exporting), up to
 * DLS_POL_FRONT of them. */
int dls_pol_x_produced_on(const dls_pol_x *x, uint64_t stream) DLS_REQUIRES(dls_pol_g.lock);

/* Notes that access a, enqueued on capturing stream st, is recorded into a graph: every live
 * exchange it touches that st is not ordered for is marked captured. */
void dls_pol_capture_use(const dls_pol_access *a, const dls_pol_stream *st) DLS_REQUIRES(dls_pol_g.lock);

/* What a, on stream `stream`, does to the bytes of exchange x it touches: a copy reads its source
 * and writes its destination, a set and a stream-ordered free write, a graph launch writes what
 * its captured graph is known to write (graphs.h; lock held); a launch, any other graph launch
 * and an operation of unknown layout (conservative) may write, except that the consumer of a
 * tensor exported read-only (any stream but its producer's) only reads it. The caller knows a
 * touches x. */
dls_pol_dir dls_pol_direction(const dls_pol_access *a, const dls_pol_x *x, uint64_t stream)
    DLS_REQUIRES(dls_pol_g.lock);

#endif
