/* The policy lock and the queue of deferred operations (see pol.h).
 *
 * The queue is a bounded multi-producer ring (Vyukov's): a producer claims a slot by advancing
 * `g_tail`, copies its record in, and publishes it through the slot's sequence number; the lock
 * holder consumes slots in claim order. A slot's sequence counts from 0 in steps that say
 * "free for the producer of lap k" (k * QUEUE) and "published by it" (k * QUEUE + 1), so the
 * zero-initialized array is ready without set-up. Draining waits for every slot claimed before
 * it began, so a thread that takes the lock finds its own earlier operations applied; a
 * producer holds a claimed slot only while it copies one record. */
#include "pol.h"

#include "../common/config.h"
#include "../report/summary.h"
#include "../report/warn.h"

#include <sched.h>

#define QUEUE 1024

static struct {
    _Atomic uint64_t seq;
    dls_pol_rec rec;
} g_queue[QUEUE];
static _Atomic uint64_t g_tail;
static uint64_t g_head; /* lock held */

/* Applies every record claimed before the call (lock held). */
static void drain(void)
{
    uint64_t end = atomic_load_explicit(&g_tail, memory_order_acquire);
    int made = 0; /* the previous record's hb operation was made, and nothing else touched hb */
    uint64_t sid = 0, tid = 0, applied = 0;
    for (; g_head < end; g_head++) {
        uint64_t lap = g_head - g_head % QUEUE;
        __typeof__(g_queue[0]) *s = &g_queue[g_head % QUEUE];
        while (atomic_load_explicit(&s->seq, memory_order_acquire) != lap + 1)
            sched_yield(); /* claimed, being filled */
        const dls_pol_rec *r = &s->rec;
        int again = made && r->stream.resolved && r->stream.id == sid && r->tid == tid;
        made = dls_pol_apply(r, again) && !r->after; /* an after event's capture is an hb call */
        sid = r->stream.id;
        tid = r->tid;
        atomic_store_explicit(&s->seq, lap + QUEUE, memory_order_release);
        applied++;
    }
    if (applied)
        dls_summary_add(DLS_COUNT_OPS, applied); /* once per drain: no shared counter per launch */
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

dls_pol_rec *dls_pol_defer_claim(uint64_t *ticket)
{
    uint64_t pos = atomic_load_explicit(&g_tail, memory_order_relaxed);
    for (;;) {
        uint64_t lap = pos - pos % QUEUE;
        __typeof__(g_queue[0]) *s = &g_queue[pos % QUEUE];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq == lap) {
            if (atomic_compare_exchange_weak_explicit(&g_tail, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *ticket = pos;
                return &s->rec;
            }
        } else if (seq < lap) {
            return NULL; /* the previous lap's record is not consumed yet */
        } else {
            pos = atomic_load_explicit(&g_tail, memory_order_relaxed);
        }
    }
}

void dls_pol_defer_publish(uint64_t ticket)
{
    atomic_store_explicit(&g_queue[ticket % QUEUE].seq, ticket - ticket % QUEUE + 1, memory_order_release);
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
