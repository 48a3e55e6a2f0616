/* The policy lock (see lock.h): the critical section around the model. Above the queue (taking
 * the lock applies it) and the checks (releasing it writes their reports); below everything
 * that orders or dispatches. */
#include "lock.h"

#include "../report/summary.h"
#include "check.h"
#include "queue.h"

void dls_pol_drain_at_exit(void)
{
    if (!dls_mutex_trylock(&dls_pol_g.lock))
        return; /* a holder drains itself; exit never waits for it */
    dls_pol_drain();
    if (atomic_load_explicit(&dls_pol_g.nhost, memory_order_relaxed))
        dls_pol_check_host(); /* host accesses caught and not reported yet */
    dls_pol_unlock();
}

void dls_pol_unlock(void)
{
    dls_mutex_unlock(&dls_pol_g.lock);
    dls_pol_check_flush();
}

uint64_t dls_pol_apply_now(const dls_pol_rec *r)
{
    dls_pol_lock();
    uint64_t end = dls_pol_end_now();
    dls_pol_apply(r, end);
    dls_pol_unlock();
    dls_summary_add(DLS_COUNT_OPS, 1);
    return end;
}
