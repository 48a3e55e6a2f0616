/* The ENTER of an operation that may touch watched memory, one the index could not clear
 * (index.h): check judges it against the exchanges' producers and uses, fix plans and makes the
 * orderings it misses; what an access on the legacy stream does, check judges at its EXIT. */
#ifndef DLS_POL_WATCHED_H
#define DLS_POL_WATCHED_H

#include "thread.h"
#include "types.h"

/* ENTER of access a (a call of thread tid, whose block is pt, on stream s; `nested`: ops.h) that
 * may touch a watched range: checked, or ordered in rounds of plans carried out without the lock.
 * Takes the lock. */
void dls_pol_watched_enter(dls_pol_thread *pt, const dls_pol_access *a, const dls_cuda_stream *s, uint64_t tid,
                           int nested) DLS_EXCLUDES(dls_pol_g.lock);

/* ENTER of synchronous free op that may hand back watched memory: checked for pending uses on
 * other contexts, or (fix) the host waits for the consumer's pending uses of it first, in rounds
 * of plans carried out without the lock. Takes the lock. */
void dls_pol_watched_free(dls_pol_thread *pt, const dls_cuda_op *op) DLS_EXCLUDES(dls_pol_g.lock);

/* check, at the EXIT of a call of thread tid that returns `result`: the verdict on its
 * legacy-stream access a, which its ENTER left for now (pt->legacy_corr). The legacy rule joins a
 * blocking stream as of the call's begin only if the stream's destruction did not begin before
 * the call ended: CUDA does not say that the legacy stream waits for a destroyed stream's work,
 * and a destruction that another thread begins while the call is under way is seen only now.
 * Takes the lock. */
void dls_pol_legacy_verdict(dls_pol_thread *pt, const dls_pol_access *a, uint64_t tid, int result)
    DLS_EXCLUDES(dls_pol_g.lock);

/* ENTER of an operation about to be enqueued on stream s that changes what the end of s means
 * (not an event record or a host synchronize): the after point due there (events.h) is recorded
 * now, while it still marks exactly its access, when a use or an ordering still holds it; else it
 * is dropped. Takes the lock only when a point is due on s. */
void dls_pol_after_due_enter(const dls_cuda_stream *s) DLS_EXCLUDES(dls_pol_g.lock);

#endif
