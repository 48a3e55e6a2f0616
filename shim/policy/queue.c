/* The policy lock, the queue of deferred operations and their application (see pol.h).
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

#include <errno.h>
#include <sched.h>

#define QUEUE DLS_POL_QUEUE

dls_pol_slot dls_pol_queue[QUEUE];
_Atomic uint64_t dls_pol_queue_tail;
static uint64_t g_head; /* lock held */

/* How the records of one drain are applied (lock held). A run is a sequence of records of one
 * thread on one stream without after events: its first record is made with dls_hb_op, the others
 * learn nothing it did not (dls_hb_op_again), so they only take the next positions, and hb and
 * the stream's `last` are told of them at once when the run ends, before any other hb call (a
 * consumer access may drop an older after event's capture meanwhile: an event removal, which no
 * position concerns). No stream is removed and none begins or ends a capture while the queue is
 * applied (those are applied under the lock, never deferred), so what the run's first record
 * found holds for the others. Nor does the index change (its writers are exchange changes, never
 * an apply), so whether it watches anything and its version are read once. */
typedef struct {
    dls_pol_stream *st; /* the run's stream; NULL: no run */
    uint64_t sid, tid;  /* the run's stream id and thread */
    uint64_t pos;       /* the position of the run's latest record */
    uint64_t told;      /* the position hb has made on st (and st->last says) */
    int watching;       /* the index holds a range (else no record touches an exchange) */
    uint64_t cleared;   /* dls_pol_cleared of the index's version: a record cleared in it */
} applier;

static void applier_init(applier *a)
{
    a->st = NULL;
    a->watching = atomic_load_explicit(dls_pol_index_watching(), memory_order_relaxed);
    a->cleared = dls_pol_cleared(dls_pol_index_version());
}

/* Tells hb and the stream the run's positions they do not have yet, and ends the run. */
static void end_run(applier *a)
{
    if (a->st && a->pos > a->told) { /* cannot fail: no stream is removed while the queue is applied */
        (void)dls_hb_op_again(dls_pol_g.hb, a->sid, a->pos - a->told, NULL);
        a->st->last = a->pos;
    }
    a->st = NULL;
}

/* Its consumer accesses: r, applied at position pos of st, touches the live exchanges it
 * overlaps (unless its ENTER found it touching nothing in the index as it still is). */
static inline void note_accesses(const dls_pol_rec *r, dls_pol_stream *st, uint64_t pos, dls_pol_after *after,
                                 const applier *a)
{
    if (!a->watching || (r->cleared == a->cleared && !r->e.boxed) || !dls_pol_index_may_touch_entry(&r->e))
        return;
    for (dls_pol_x *x = dls_pol_g.live; x; x = x->next)
        if (dls_pol_entry_touches(&r->e, x->lo, x->lo, x->hi))
            dls_pol_x_note_access(x, st->id, pos, r->e.name[0] ? r->e.name : r->e.api, after);
}

/* Applies r when it does not continue a's run: ends the run, makes r's hb operation with the
 * look-ups, and starts a run with r unless it has an after event. */
static void apply_alone(const dls_pol_rec *r, applier *a)
{
    end_run(a);
    dls_pol_stream *st = r->st ? r->st : dls_pol_stream_get(&r->stream, r->tid); /* the work lane's knows it */
    uint64_t pos;
    int rc = !st || st->capturing ? -1 : dls_hb_op(dls_pol_g.hb, r->tid, st->id, &pos);
    if (rc == ENOMEM)
        dls_pol_degrade("policy-op-memory", "out of memory recording a CUDA operation");
    if (!rc) { /* else an unknown stream, or captured work: recorded into a graph, not run */
        st->last = pos;
        if (dls_pol_is_memory_op(r->kind)) {
            dls_pol_ring_append(st, &r->e, pos);
            dls_pol_after *after = r->after && r->after->st == st ? r->after : NULL;
            if (after)
                dls_pol_after_placed(after);
            note_accesses(r, st, pos, after, a);
        }
        if (!r->after) { /* an after event's capture is an hb call: no run across it */
            a->st = st;
            a->sid = st->id;
            a->tid = r->tid;
            a->pos = a->told = pos;
        }
    }
    dls_pol_after_put(r->after);
}

/* Applies r (see dls_pol_apply): a record of the run's thread on its stream, without an after
 * event, takes the run's next position (it is not capturing, as at the run's start). */
static inline __attribute__((always_inline)) void apply(const dls_pol_rec *r, applier *a)
{
    if (__builtin_expect(!a->st || a->sid != r->stream.id || a->tid != r->tid || !r->stream.resolved || r->after, 0)) {
        apply_alone(r, a);
        return;
    }
    uint64_t pos = ++a->pos;
    if (dls_pol_is_memory_op(r->kind)) {
        dls_pol_ring_append(a->st, &r->e, pos);
        note_accesses(r, a->st, pos, NULL, a);
    }
}

void dls_pol_apply(const dls_pol_rec *r)
{
    applier a;
    applier_init(&a);
    apply_alone(r, &a);
    end_run(&a);
}

/* Applies every record claimed before the call (lock held). */
static void drain(void)
{
    uint64_t end = atomic_load_explicit(&dls_pol_queue_tail, memory_order_acquire), head = g_head;
    if (head == end)
        return;
    applier a;
    applier_init(&a);
    dls_pol_slot *s = &dls_pol_queue[head % QUEUE];
    uint64_t lap = head - head % QUEUE;
    for (; head < end; head++) {
        while (atomic_load_explicit(&s->seq, memory_order_acquire) != lap + 1)
            sched_yield(); /* claimed, being filled */
        apply(&s->rec, &a);
        atomic_store_explicit(&s->seq, lap + QUEUE, memory_order_release);
        if (++s == dls_pol_queue + QUEUE) { /* the next lap */
            s = dls_pol_queue;
            lap += QUEUE;
        }
    }
    end_run(&a);
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
    dls_pol_apply(r);
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
