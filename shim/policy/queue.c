/* The queue of deferred operations, their application, and the host clock's horizons (see
 * queue.h); the lock that drains it is lock.c.
 *
 * The queue is a bounded multi-producer ring (Vyukov's): a producer claims a slot by advancing
 * dls_pol_queue_tail, fills its record in place and publishes it through the slot's sequence
 * number; the lock holder consumes slots in claim order. A slot's sequence counts from 0 in steps
 * that say "free for the producer of lap k" (k * QUEUE) and "published by it" (k * QUEUE + 1), so
 * the zero-initialized array is ready without set-up. Draining waits for every slot claimed
 * before it began, so a thread that takes the lock finds its own earlier operations applied. */
#include "queue.h"

#include "../common/config.h"
#include "../report/summary.h"
#include "../report/warn.h"
#include "access.h"
#include "events.h"
#include "exch.h"
#include "graphs.h"
#include "index.h"
#include "kinds.h"
#include "ring.h"
#include "stream_table.h"
#include "thread.h"

#include <errno.h>
#include <sched.h>

#define QUEUE DLS_POL_QUEUE

dls_pol_slot dls_pol_queue[QUEUE];
_Atomic uint64_t dls_pol_queue_tail;
static uint64_t g_head; /* lock held: the next ticket to apply */

uint64_t dls_pol_applied(void)
{
    return 2 * g_head;
}

dls_hb_when dls_pol_when_now(void)
{
    return (dls_hb_when){.begin = dls_pol_thread_self()->horizon.h, .end = dls_pol_end_now()};
}

/* How the records of one drain are applied (lock held). A run is a sequence of records of one
 * thread on one stream without after events: its first record is made with dls_hb_op, the others
 * learn nothing it did not (dls_hb_op_again), so they only take the next positions, and hb and
 * the stream's `last` are told of them at once when the run ends, before any other hb call. No
 * stream is removed and none begins or ends a capture while the queue is applied (those are
 * applied under the lock, never deferred), so what the run's first record found holds for the
 * others; nor does the index change (its writers are exchange changes, never an apply). */
typedef struct {
    dls_pol_stream *st; /* the run's stream; NULL: no run */
    uint64_t tid;       /* the run's thread */
    uint64_t pos;       /* the position of the run's latest record */
    uint64_t end;       /* the end stamp of the run's latest record */
    uint64_t begin;     /* the begin stamp of the run's first record */
    uint64_t told;      /* the position hb has made on st (and st->last says) */
    int watching;       /* the index holds a range (else no record touches an exchange) */
    uint64_t cleared;   /* dls_pol_cleared of the index's version: a record cleared in it */
} applier;

static void applier_init(applier *a)
{
    *a = (applier){.watching = atomic_load_explicit(dls_pol_index_watching(), memory_order_relaxed),
                   .cleared = dls_pol_cleared(dls_pol_index_version())};
}

/* Tells hb and the stream the run's positions they do not have yet, and ends the run. */
static void end_run(applier *a)
{
    if (a->st && a->pos > a->told) { /* cannot fail: no stream is removed while the queue is applied */
        (void)dls_hb_op_again(dls_pol_g.hb, a->st->id, a->pos - a->told, a->end, NULL);
        a->st->last = a->pos;
    }
    a->st = NULL;
}

/* Its uses: r, applied at position pos of st while memory is watched, touches the live and
 * released exchanges it overlaps (unless its ENTER found it touching nothing in the index as it
 * still is). */
static void note_accesses(const dls_pol_rec *r, dls_pol_stream *st, uint64_t pos, dls_pol_after *after,
                          const applier *a) DLS_REQUIRES(dls_pol_g.lock)
{
    if (r->cleared == a->cleared)
        return;
    const dls_pol_access *acc = &r->e.a;
    uint64_t cleared;
    if (dls_pol_index_clears(acc, &cleared))
        return;
    for (dls_pol_x *x = dls_pol_x_first(); x; x = dls_pol_x_next(x))
        if (dls_pol_touches(acc, x->lo, x->lo, x->hi))
            dls_pol_x_note_use(x, st->id, pos, dls_pol_access_name(acc), dls_pol_direction(acc, x, st->id), after);
}

/* What applying memory operation r at position pos of st adds beside its hb operation: its
 * history entry and its consumer accesses (after: its after event, placed on st; NULL: none). */
static inline void apply_memory(const dls_pol_rec *r, dls_pol_stream *st, uint64_t pos, dls_pol_after *after,
                                const applier *a) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_ring_put(st, &r->e, pos);
    if (a->watching) /* else no record touches an exchange */
        note_accesses(r, st, pos, after, a);
}

/* 1 when r continues a's run: the run's thread on the run's stream, without an after event; under
 * check, on a stream the legacy rules join, with the begin of the run's first record (a later
 * begin may join more of the other streams, and check counts what a record's own call saw; fix
 * may miss that ordering, which only costs it a wait). */
static inline int continues_run(const applier *a, const dls_pol_rec *r)
{
    return a->st && !r->after && r->tid == a->tid && r->stream.resolved && r->stream.id == a->st->id &&
           (dls_pol_g.mode != DLS_MODE_CHECK || r->begin == a->begin || a->st->kind == DLS_STREAM_NON_BLOCKING);
}

/* Applies r, whose call ended at stamp `end`, as the next record of a's run (it has no after
 * event). */
static inline void apply_in_run(const dls_pol_rec *r, uint64_t end, applier *a) DLS_REQUIRES(dls_pol_g.lock)
{
    a->end = end;
    a->pos++;
    if (dls_pol_is_memory_op(r->e.a.kind))
        apply_memory(r, a->st, a->pos, NULL, a);
}

/* Applies r, whose call ended at stamp `end`, when it does not continue a's run: ends the run,
 * makes r's hb operation, and starts a run with r unless it has an after event (an after event's
 * capture is an hb call: no run across it). Then r's reference of its after event is dropped. */
static void apply_alone(const dls_pol_rec *r, uint64_t end, applier *a) DLS_REQUIRES(dls_pol_g.lock)
{
    end_run(a);
    dls_pol_stream *st = dls_pol_stream_get(&r->stream, r->tid);
    uint64_t pos;
    int rc = !st || st->capturing
                 ? -1
                 : dls_hb_op(dls_pol_g.hb, r->tid, st->id, (dls_hb_when){.begin = r->begin, .end = end}, &pos);
    if (rc == ENOMEM)
        dls_pol_degrade("policy-op-memory", "out of memory recording a CUDA operation");
    if (rc) { /* an unknown stream, or captured work: recorded into a graph, not run */
        if (st && st->capturing)
            dls_pol_graph_captured(st->id, &r->e.a);
        dls_pol_after_put(r->after);
        return;
    }
    st->last = pos;
    if (!r->after)
        *a = (applier){.st = st,
                       .tid = r->tid,
                       .pos = pos,
                       .end = end,
                       .begin = r->begin,
                       .told = pos,
                       .watching = a->watching,
                       .cleared = a->cleared};
    if (dls_pol_is_memory_op(r->e.a.kind)) {
        dls_pol_after *after = r->after && r->after->st == st ? r->after : NULL;
        if (after)
            dls_pol_after_placed(after, pos);
        apply_memory(r, st, pos, after, a);
    }
    if (r->after)
        dls_pol_after_put(r->after);
}

/* Applies r, an event record or a stream's wait for an event, whose call ended at stamp `end`:
 * alone (each is an hb call). A wait in doubt (dls_pol_rec) is ordered after nothing it knows. */
static void apply_event(const dls_pol_rec *r, uint64_t end, applier *a) DLS_REQUIRES(dls_pol_g.lock)
{
    end_run(a);
    dls_pol_stream *st = dls_pol_stream_get(&r->stream, r->tid);
    if (!st || st->capturing)
        return;
    dls_hb *hb = dls_pol_g.hb;
    dls_hb_when when = {.begin = r->begin, .end = end};
    uint64_t pos;
    int rc = r->e.a.kind == DLS_OP_EVENT_RECORD ? dls_hb_event_record(hb, r->tid, st->id, r->event, when, &pos)
             : r->in_doubt                      ? dls_hb_op(hb, r->tid, st->id, when, &pos)
                                                : dls_hb_event_wait(hb, r->tid, st->id, r->event, when, &pos);
    if (rc == ENOMEM)
        dls_pol_degrade("policy-op-memory", "out of memory recording a CUDA operation");
    if (!rc)
        st->last = pos;
}

/* Applies r, whose call ended at stamp `end`, in a's run or alone. */
static inline void apply(const dls_pol_rec *r, uint64_t end, applier *a) DLS_REQUIRES(dls_pol_g.lock)
{
    if (dls_pol_is_event_order(r->e.a.kind))
        apply_event(r, end, a);
    else if (continues_run(a, r))
        apply_in_run(r, end, a);
    else
        apply_alone(r, end, a);
}

void dls_pol_apply(const dls_pol_rec *r, uint64_t end)
{
    applier a;
    applier_init(&a);
    apply(r, end, &a);
    end_run(&a);
}

void dls_pol_drain(void)
{
    uint64_t end = atomic_fetch_add_explicit(&dls_pol_queue_tail, 0, memory_order_acq_rel), head = g_head;
    if (head == end)
        return;
    applier a;
    applier_init(&a);
    for (; head != end; head++) {
        dls_pol_slot *s = &dls_pol_queue[head % QUEUE];
        while (!(atomic_load_explicit(&s->seq, memory_order_acquire) & 1))
            sched_yield(); /* claimed, being filled */
        apply(&s->rec, dls_pol_ticket_end(head), &a);
        atomic_store_explicit(&s->seq, head - head % QUEUE + QUEUE, memory_order_release);
    }
    end_run(&a);
    dls_summary_add(DLS_COUNT_OPS, end - g_head); /* once per drain: no shared counter per launch */
    g_head = end;
}

uint64_t dls_pol_end_now(void)
{
    for (;;) {
        uint64_t t = g_head; /* the queue is applied up to t: slot t is free for t's lap */
        if (atomic_compare_exchange_strong_explicit(&dls_pol_queue_tail, &t, t + 1, memory_order_acq_rel,
                                                    memory_order_relaxed)) {
            atomic_store_explicit(&dls_pol_queue[t % QUEUE].seq, t - t % QUEUE + QUEUE, memory_order_release);
            g_head = t + 1;
            return dls_pol_ticket_end(t);
        }
        dls_pol_drain(); /* a claim came first */
    }
}
