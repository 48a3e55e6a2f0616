/* The policy lock, the queue of deferred operations and their application (see pol.h).
 *
 * The queue is a bounded multi-producer ring (Vyukov's): a producer claims a slot by advancing
 * `dls_pol_queue_tail`, fills its record in place and publishes it through the slot's sequence
 * number (pol.h: dls_pol_defer_claim / dls_pol_defer_publish, inline); the lock holder consumes
 * slots in claim order. A slot's sequence counts from 0 in steps that say
 * "free for the producer of lap k" (k * QUEUE) and "published by it" (k * QUEUE + 1), so the
 * zero-initialized array is ready without set-up. Draining waits for every slot claimed before
 * it began, so a thread that takes the lock finds its own earlier operations applied; a
 * producer holds a claimed slot only while it fills one record. A claimed slot's sequence is
 * k * QUEUE until its record is published, then odd: the drain waits for the odd one. */
#include "pol.h"

#include "../common/config.h"
#include "../report/summary.h"
#include "../report/warn.h"

#include <errno.h>
#include <sched.h>

#define QUEUE DLS_POL_QUEUE

dls_pol_slot dls_pol_queue[QUEUE];
_Atomic uint64_t dls_pol_queue_tail;
__thread dls_pol_horizon_state dls_pol_horizon __attribute__((tls_model("local-dynamic")));
static uint64_t g_head; /* lock held: the next ticket to apply */

uint64_t dls_pol_applied(void)
{
    return 2 * g_head;
}

/* How the records of one drain are applied (lock held). A run is a sequence of records of one
 * thread on one stream without after events: its first record is made with dls_hb_op, the others
 * learn nothing it did not (dls_hb_op_again), so they only take the next positions, and hb and
 * the stream's `last` are told of them at once when the run ends, before any other hb call (a
 * consumer access may drop an older after event's capture meanwhile: an event removal, which no
 * position concerns). No stream is removed and none begins or ends a capture while the queue is
 * applied (those are applied under the lock, never deferred), so what the run's first record
 * found holds for the others. Nor does the index change (its writers are exchange changes, never
 * an apply), so whether it watches anything and its version are read once. While a run lasts
 * only its records append to its stream (any other record ends it first), so the run holds the
 * ring slot its next entry goes to and sets the stream's ring head when it ends. */
typedef struct {
    dls_pol_stream *st;  /* the run's stream; NULL: no run */
    uint64_t sid, tid;   /* the run's stream id and thread */
    uint64_t pos;        /* the position of the run's latest record */
    uint64_t end;        /* the end stamp of the run's latest record */
    uint64_t told;       /* the position hb has made on st (and st->last says) */
    dls_pol_entry *slot; /* st's ring slot for the run's next entry (st's head is set at the end) */
    int watching;        /* the index holds a range (else no record touches an exchange) */
    uint64_t cleared;    /* dls_pol_cleared of the index's version: a record cleared in it */
} applier;

static void applier_init(applier *a)
{
    a->st = NULL;
    a->tid = a->pos = a->end = 0; /* read, not used, by apply_slots while there is no run */
    a->slot = NULL;
    a->watching = atomic_load_explicit(dls_pol_index_watching(), memory_order_relaxed);
    a->cleared = dls_pol_cleared(dls_pol_index_version());
}

/* Tells hb and the stream the run's positions and ring head they do not have yet, and ends the
 * run. */
static void end_run(applier *a)
{
    if (!a->st)
        return;
    if (a->pos > a->told) { /* cannot fail: no stream is removed while the queue is applied */
        (void)dls_hb_op_again(dls_pol_g.hb, a->sid, a->pos - a->told, a->end, NULL);
        a->st->last = a->pos;
    }
    dls_pol_ring_set_head(a->st, a->slot);
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

/* Applies r, whose call ended at stamp `end`, when it does not continue a's run: ends the run,
 * makes r's hb operation with the look-ups, and starts a run with r unless it has an after
 * event. */
static void apply_alone(const dls_pol_rec *r, uint64_t end, applier *a)
{
    end_run(a);
    dls_pol_stream *st = r->st ? r->st : dls_pol_stream_get(&r->stream, r->tid); /* the work lane's knows it */
    uint64_t pos;
    int rc = !st || st->capturing
                 ? -1
                 : dls_hb_op(dls_pol_g.hb, r->tid, st->id, (dls_hb_when){.begin = r->begin, .end = end}, &pos);
    if (rc == ENOMEM)
        dls_pol_degrade("policy-op-memory", "out of memory recording a CUDA operation");
    if (!rc) { /* else an unknown stream, or captured work: recorded into a graph, not run */
        st->last = pos;
        dls_pol_entry *slot = dls_pol_ring_slot(st);
        if (dls_pol_is_memory_op(r->kind)) {
            dls_pol_ring_set_head(st, slot = dls_pol_ring_put(st, slot, &r->e, pos));
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
            a->end = end;
            a->slot = slot;
        }
    }
    dls_pol_after_put(r->after);
}

/* Applies r, which continues a's run (its record of the run's thread on its stream, without an
 * after event): r takes the run's next position, pos (it is not capturing, as at the run's start),
 * and its entry goes to the run's ring slot, *slot. */
static inline __attribute__((always_inline)) void apply_next(const dls_pol_rec *r, dls_pol_stream *st, uint64_t pos,
                                                             dls_pol_entry **slot, const applier *a, int watching)
{
    if (__builtin_expect(dls_pol_is_memory_op(r->kind), 1)) {
        *slot = dls_pol_ring_put(st, *slot, &r->e, pos);
        if (watching)
            note_accesses(r, st, pos, NULL, a);
    }
}

/* Applies r, ending at stamp `end` (see dls_pol_apply), when the drain's quick test found it not
 * continuing a's run: it may still continue it (a record that names its stream only by id). */
__attribute__((noinline)) static void apply(const dls_pol_rec *r, uint64_t end, applier *a)
{
    if (!a->st || a->sid != r->stream.id || a->tid != r->tid || !r->stream.resolved || r->after) {
        apply_alone(r, end, a);
    } else {
        apply_next(r, a->st, ++a->pos, &a->slot, a, a->watching);
        a->end = end;
    }
}

void dls_pol_apply(const dls_pol_rec *r)
{
    applier a;
    applier_init(&a);
    apply_alone(r, dls_pol_applied(), &a);
    end_run(&a);
}

/* A record's st that no run's stream is: the quick test's key while there is no run. */
#define NO_RUN ((dls_pol_stream *)UINTPTR_MAX)

/* Applies the records of slots [s, stop) of lap `lap`, waiting for each to be published, and
 * frees the slots. A record of the work lane (st set) that continues the run is told by its
 * stream, thread and after event alone, with the run's stream, thread and position held here;
 * `watching` is a->watching, a constant where this is inlined. */
static inline __attribute__((always_inline)) void apply_slots(dls_pol_slot *s, const dls_pol_slot *stop, uint64_t lap,
                                                              applier *a, int watching)
{
    dls_pol_stream *key = a->st ? a->st : NO_RUN;
    uint64_t tid = a->tid, pos = a->pos, ticket = lap + (uint64_t)(s - dls_pol_queue);
    dls_pol_entry *slot = a->slot;
    for (; s != stop; s++, ticket++) {
        while (!(atomic_load_explicit(&s->seq, memory_order_acquire) & 1))
            sched_yield(); /* claimed, being filled */
        const dls_pol_rec *r = &s->rec;
        if (__builtin_expect(r->st == key && r->tid == tid && !r->after, 1)) {
            apply_next(r, key, ++pos, &slot, a, watching);
        } else {
            a->pos = pos;
            a->end = dls_pol_ticket_end(ticket - 1);
            a->slot = slot;
            apply(r, dls_pol_ticket_end(ticket), a);
            key = a->st ? a->st : NO_RUN;
            tid = a->tid;
            pos = a->pos;
            slot = a->slot;
        }
        atomic_store_explicit(&s->seq, lap + QUEUE, memory_order_release);
    }
    a->pos = pos;
    a->end = dls_pol_ticket_end(ticket - 1);
    a->slot = slot;
}

/* Applies every record claimed before the call (lock held), a lap's slots at a time. The counter
 * is read with a read-modify-write, so that the claims after it continue its release: an
 * operation applied after the drain ends at what it read (dls_pol_applied). */
static void drain(void)
{
    uint64_t end = atomic_fetch_add_explicit(&dls_pol_queue_tail, 0, memory_order_acq_rel), head = g_head;
    if (head == end)
        return;
    applier a;
    applier_init(&a);
    while (head != end) {
        uint64_t lap = head - head % QUEUE, n = QUEUE - head % QUEUE;
        if (n > end - head)
            n = end - head;
        dls_pol_slot *s = &dls_pol_queue[head % QUEUE];
        if (a.watching)
            apply_slots(s, s + n, lap, &a, 1);
        else
            apply_slots(s, s + n, lap, &a, 0);
        head += n;
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

uint64_t dls_pol_apply_now(const dls_pol_rec *r)
{
    dls_pol_lock();
    uint64_t end = dls_pol_applied();
    dls_pol_apply(r);
    dls_pol_unlock();
    dls_summary_add(DLS_COUNT_OPS, 1);
    return end;
}

void dls_pol_degrade(const char *key, const char *reason)
{
    atomic_store_explicit(&dls_pol_g.degraded, 1, memory_order_relaxed);
    dls_warn_once(key, "%s; %s", reason,
                  dls_pol_g.mode == DLS_MODE_FIX
                      ? "exchanges are ordered by synchronizing the producer's context at export from now on"
                      : "exchanges are not fully checked from now on (races may go unreported)");
}
