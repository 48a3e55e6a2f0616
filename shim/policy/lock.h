/* The policy lock (dls_pol_g.lock) and its critical section: taking it applies the deferred
 * queue (queue.h), releasing it writes the race reports the checks queued meanwhile (check.h).
 * Defined in lock.c, above both. */
#ifndef DLS_POL_LOCK_H
#define DLS_POL_LOCK_H

#include "queue.h"
#include "types.h"

/* Takes dls_pol_g.lock and applies every deferred operation queued before. Inline: every exchange
 * takes it several times, and the call of its own cost make bench's fix-stream-exchange figure
 * 11 instructions (over its budget then). */
static inline void dls_pol_lock(void) DLS_ACQUIRE(dls_pol_g.lock, dls_any_lock)
{
    dls_mutex_lock(&dls_pol_g.lock);
    dls_pol_drain();
}

/* Releases the lock, then writes the race reports queued while it was held. */
void dls_pol_unlock(void) DLS_RELEASE(dls_pol_g.lock, dls_any_lock);

/* At exit: applies the queue unless another thread holds the lock (then it is not waited for). */
void dls_pol_drain_at_exit(void) DLS_EXCLUDES(dls_pol_g.lock);

/* Takes the lock (applying the queue), applies r, releases the lock. Returns the end stamp r
 * was applied with (dls_pol_end_now). */
uint64_t dls_pol_apply_now(const dls_pol_rec *r) DLS_EXCLUDES(dls_pol_g.lock);

#endif
