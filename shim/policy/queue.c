/* The policy lock and the queue of deferred operations (see pol.h).
 *
 * The queue is a bounded multi-producer ring (Vyukov's): a producer claims a slot by advancing
 * `dls_pol_queue_tail`, fills its record in place and publishes it through the slot's sequence
 * number (pol.h: dls_pol_defer_claim / dls_pol_defer_publish, inline); the lock holder consumes
 * slots in claim order. A slot's sequence counts from 0 in steps that say
 * "free for the producer of lap k" (k * QUEUE) and "published by it" (k * QUEUE + 1), so the
 * zero-initialized array is ready without set-up. Draining waits for every slot claimed before
 * it began, so a thread that takes the lock finds its own earlier operations applied; a
 * producer holds a claimed slot only while it fills one record. */
#include "pol.h"

#include "../common/config.h"
#include "../report/summary.h"
#include "../report/warn.h"

#include <sched.h>

#define QUEUE DLS_POL_QUEUE

dls_pol_slot dls_pol_queue[QUEUE];
_Atomic uint64_t dls_pol_queue_tail;
static uint64_t g_head; /* lock held */

/* Applies every record claimed before the call (lock held). */
static void drain(void)
{
    uint64_t end = atomic_load_explicit(&dls_pol_queue_tail, memory_order_acquire), head = g_head;
    int made = 0; /* the previous record's hb operation was made, and nothing else touched hb */
    uint64_t sid = 0, tid = 0;
    for (; head < end; head++) {
        uint64_t lap = head - head % QUEUE;
        dls_pol_slot *s = &dls_pol_queue[head % QUEUE];
        while (atomic_load_explicit(&s->seq, memory_order_acquire) != lap + 1)
            sched_yield(); /* claimed, being filled */
        const dls_pol_rec *r = &s->rec;
        int again = made && r->stream.id == sid && r->tid == tid; /* made: sid is a resolved id */
        made = dls_pol_apply(r, again) && !r->after;              /* an after event's capture is an hb call */
        sid = r->stream.id;
        tid = r->tid;
        atomic_store_explicit(&s->seq, lap + QUEUE, memory_order_release);
    }
    if (head > g_head)
        dls_summary_add(DLS_COUNT_OPS, head - g_head); /* once per drain: no shared counter per launch */
    g_head = head;
}

void dls_pol_lock(void)
{
    pthread_mutex_lock(&dls_pol_g.lock);
    drain();
}

void dls_pol_drain_at_exit(void)
{
    if (pthread_mutex_trylock(&dls_pol_g.lock) != 0)
        return; /* a holder drains itself; exit never waits for it */
    drain();
    dls_pol_unlock();
}

void dls_pol_unlock(void)
{
    pthread_mutex_unlock(&dls_pol_g.lock);
    dls_pol_check_flush();
}

void dls_pol_apply_now(const dls_pol_rec *r)
{
    dls_pol_lock();
    dls_pol_apply(r, 0);
    dls_pol_unlock();
    dls_summary_add(DLS_COUNT_OPS, 1);
}

void dls_pol_degrade(const char *key, const char *reason)
{
    atomic_store_explicit(&dls_pol_g.degraded, 1, memory_order_relaxed);
    dls_warn_once(key, "%s; %s", reason,
                  dls_pol_g.mode == DLS_MODE_FIX
                      ? "exchanges are ordered by synchronizing the producer's context at export from now on"
                      : "exchanges are not fully checked from now on (races may go unreported)");
}
