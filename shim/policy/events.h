/* The shim's own events: a pool of free events per context (events are created and destroyed
 * outside every dlsync lock; the pool's lock is a leaf below the policy lock), records made with
 * the recording stream's context current, and the events fix records right after consumer
 * accesses (types.h, dls_pol_after), which the release fence waits on: exactly the consumer's
 * access, never what its stream enqueued later. */
#ifndef DLS_POL_EVENTS_H
#define DLS_POL_EVENTS_H

#include "types.h"

/* Returns event e of the context of stream w to the pool; any thread, policy lock held or not (no
 * driver call). */
void dls_pol_event_put(CUevent e, const dls_pol_stream *w);

/* No lock held: records a pooled event of w's context at the current end of w, with that context
 * current (an event records only on a stream of its own context). NULL when the event could not be
 * made or recorded (warned once). */
CUevent dls_pol_event_record_on(const dls_pol_stream *w) DLS_UNLOCKED;

/* 1 when thread tid can name stream s (another thread's per-thread stream it cannot). */
int dls_pol_nameable(const dls_pol_stream *s, uint64_t tid);

/* Warns once that the shim could not make the context of stream w current. */
void dls_pol_warn_ctx(const dls_pol_stream *w, CUresult r);

/* No lock held: the point of st right after the consumer access the calling thread (tid) just
 * enqueued there, returned with one reference (position unknown until dls_pol_after_placed). Its
 * event is due: recorded only when a wait needs it (dls_pol_after_event) or when an operation that
 * would change what st's end means is about to be enqueued there (dls_pol_after_take_due), so
 * that it marks exactly the access. Where that cannot be kept (a per-thread stream, whose owner
 * alone may name it, or a stream whose due slot is taken) it is recorded now. NULL when it cannot
 * be made (st is another thread's per-thread stream, some stream is capturing, memory is short,
 * or the record failed: warned once); the release fence then records at reuse time instead. */
dls_pol_after *dls_pol_after_make(dls_pol_stream *st, uint64_t tid) DLS_UNLOCKED;

/* How many due points there are (events.c): an operation's ENTER looks for its stream's only
 * while some are (dls_pol_after_any_due). */
extern atomic_uint dls_pol_after_ndue DLS_HIDDEN;

/* 1 while some point is due (any thread, no lock): one load on every operation's ENTER. */
static inline int dls_pol_after_any_due(void)
{
    return atomic_load_explicit(&dls_pol_after_ndue, memory_order_acquire) != 0;
}

/* No lock held: takes the due point of stream `stream` (an operation that is not an event record
 * or a host synchronize is about to be enqueued there), with the reference the due slot held, or
 * NULL when none is due. The caller records it (dls_pol_after_event) when a use or an ordering
 * still holds it, then drops the reference. */
dls_pol_after *dls_pol_after_take_due(uint64_t stream) DLS_UNLOCKED;

/* Tests only, no other thread in the policy and the lock not held: drops every due point, with the
 * reference its slot held (the streams they point to are about to be freed). */
void dls_pol_after_reset_for_tests(void) DLS_EXCLUDES(dls_pol_g.lock);

/* No lock held, a reference of a held: a's event, recorded now on a->st when it was due and `record`
 * is 1 (another thread recording it is waited for); NULL when it is not recorded (it could not be:
 * warned once; or it was due and `record` is 0). */
CUevent dls_pol_after_event(dls_pol_after *a, int record) DLS_UNLOCKED;

/* The access a follows was just applied at position pos of a->st (what a wait on a completes is
 * captured from it when the wait is planned: dls_pol_snap_at). */
void dls_pol_after_placed(dls_pol_after *a, uint64_t pos) DLS_REQUIRES(dls_pol_g.lock);

/* Takes a reference of a (NULL ignored) and returns a. */
dls_pol_after *dls_pol_after_get(dls_pol_after *a) DLS_REQUIRES(dls_pol_g.lock);

/* Drops a reference of a (NULL ignored); the last one returns its event to the pool (no
 * CUDA call). A due point left held by its stream's due slot alone is taken out of it and
 * freed: nothing will ask for its event, and the stream's next operations find no point due. */
void dls_pol_after_put(dls_pol_after *a) DLS_REQUIRES(dls_pol_g.lock);

#endif
