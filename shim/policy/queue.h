/* The queue of deferred operations, and the host clock that stamps calls.
 *
 * The lock (dls_pol_g.lock, through dls_pol_lock / dls_pol_unlock, lock.h) guards the model. No CUDA,
 * CUPTI or loader call is ever made with it held. The EXIT of an operation that only enqueues
 * work (launch, async copy or set, host function, graph launch, stream-ordered free, event
 * record, stream wait for an event) takes no lock: it claims a slot of a bounded lock-free
 * multi-producer queue, fills its record there and publishes it; whoever takes the lock next
 * applies the queue in claim order before reading the model (a thread that finds the queue full
 * applies its record itself).
 *
 * Host order (hb.h): the queue's claim counter is the host clock, in halves of a ticket. A
 * record's call ends at 2 * ticket + 1 (the ticket is claimed after the call returned, with a
 * release that every later claim continues); an operation applied under the lock takes a ticket
 * of its own, T, once every ticket below it is applied, and ends at 2T + 1 too: so a call that
 * begins after it reads a counter above T however few operations were deferred meanwhile (with
 * an end of 2T, that of "applied now", such a call, reading T, would seem to overlap it). Every
 * end is odd. A call's begin stamp is the calling thread's horizon `h` when it began: a stamp
 * below which every end belongs to a call known (acquired through the counter or the lock) to
 * have returned: 2 * its own last ticket + 2 (deferred or applied under the lock), twice the
 * counter as its last delivered ENTER (or lock-free EXIT) read it, 2T + 1 after the drain of a
 * lock it took inside a call's ENTER with the tickets below T applied. A stale horizon (an ENTER the gate did
 * not deliver) only makes a begin earlier, which orders less. What a call nested in another of
 * the thread's calls (ops.h, `nested`) would raise the horizon to waits in `later` until the
 * outermost call returns: the outer call began before it. */
#ifndef DLS_POL_QUEUE_H
#define DLS_POL_QUEUE_H

#include "access.h"
#include "thread.h"
#include "types.h"

#include "../common/config.h"

/* The queue: slot i holds the record of claim i (mod its size). */
#define DLS_POL_QUEUE 1024
typedef struct {
    _Atomic uint64_t seq; /* k * DLS_POL_QUEUE: free for lap k; + 1: published in lap k */
    dls_pol_rec rec;
} dls_pol_slot;
extern dls_pol_slot dls_pol_queue[DLS_POL_QUEUE] DLS_HIDDEN;
extern _Atomic uint64_t dls_pol_queue_tail DLS_HIDDEN;

/* Defers an operation, lock-free: claims the next slot, whose record the caller fills in place
 * and then publishes with the ticket. The claim holds up whoever drains the queue until it is
 * published, so nothing between the two may block or take a lock. NULL when the queue is full:
 * the caller applies its record with dls_pol_apply_now. Inline: every deferred operation claims. */
static inline dls_pol_rec *dls_pol_defer_claim(uint64_t *ticket)
{
    uint64_t pos = atomic_load_explicit(&dls_pol_queue_tail, memory_order_relaxed);
    for (;;) {
        uint64_t lap = pos - pos % DLS_POL_QUEUE;
        dls_pol_slot *s = &dls_pol_queue[pos % DLS_POL_QUEUE];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq == lap) {
            if (atomic_compare_exchange_weak_explicit(&dls_pol_queue_tail, &pos, pos + 1, memory_order_acq_rel,
                                                      memory_order_relaxed)) {
                *ticket = pos;
                return &s->rec;
            }
        } else if (seq < lap) {
            return NULL; /* the previous lap's record is not applied yet */
        } else {
            pos = atomic_load_explicit(&dls_pol_queue_tail, memory_order_relaxed);
        }
    }
}

/* Publishes record r, claimed with `ticket`. */
static inline void dls_pol_defer_publish(dls_pol_rec *r, uint64_t ticket)
{
    dls_pol_slot *s = (dls_pol_slot *)((char *)r - offsetof(dls_pol_slot, rec));
    atomic_store_explicit(&s->seq, ticket - ticket % DLS_POL_QUEUE + 1, memory_order_release);
}

/* Applies every record claimed before the call. The counter is read with a
 * read-modify-write, so that the claims after it continue its release. */
void dls_pol_drain(void) DLS_REQUIRES(dls_pol_g.lock);

/* Applies r, whose call ended at stamp `end`, to the model (lock held): hb operation, history
 * entry, consumer accesses; drops r's reference of its after event. */
void dls_pol_apply(const dls_pol_rec *r, uint64_t end) DLS_REQUIRES(dls_pol_g.lock);

/* The deferred record of op, made by a call that began at stamp `begin`, its stream to be found
 * when applied. */
static inline void dls_pol_rec_of_op(const dls_cuda_op *op, dls_pol_rec *r, uint64_t begin)
{
    r->tid = op->tid;
    r->begin = begin;
    r->stream = op->stream;
    r->after = NULL;
    r->cleared = 0;
    r->event = op->event_id;
    r->in_doubt = 0;
    r->e.a.kind = op->kind;
    if (dls_pol_is_memory_op(op->kind)) {
        dls_pol_access a;
        dls_pol_access_of_op(&a, op);
        dls_pol_entry_store(&r->e, &a);
    }
}

/* Thread t learned that every stamp below `to` belongs to a call that returned: at once, or
 * (`nested`, inside a call nested in another) when the outermost call returns. */
static inline void dls_pol_horizon_raise(dls_pol_horizon_state *t, uint64_t to, int nested)
{
    if (nested) {
        if (to > t->later)
            t->later = to;
        return;
    }
    if (t->later > to)
        to = t->later;
    t->later = 0;
    if (to > t->h)
        t->h = to;
}

/* At a delivered ENTER of a call of thread t, and (check) at the very start of each call: its
 * horizon catches up with the counter. */
static inline void dls_pol_horizon_enter(dls_pol_horizon_state *t, int nested)
{
    dls_pol_horizon_raise(t, 2 * atomic_load_explicit(&dls_pol_queue_tail, memory_order_acquire), nested);
}

/* The end stamp of the call that holds `ticket`. */
static inline uint64_t dls_pol_ticket_end(uint64_t ticket)
{
    return 2 * ticket + 1;
}

/* 2T, the tickets below T being applied: every call that ended so far ended below it
 * (a begin stamp of applied() + 1 is after them all). */
uint64_t dls_pol_applied(void) DLS_REQUIRES(dls_pol_g.lock);

/* At the drain of the lock that the ENTER of a call of thread t took: fix learns that
 * the call's body begins after what is applied (it orders at bodies); check judges the call as of
 * its begin. */
static inline void dls_pol_horizon_drained(dls_pol_horizon_state *t, int nested) DLS_REQUIRES(dls_pol_g.lock)
{
    if (dls_pol_g.mode == DLS_MODE_FIX)
        dls_pol_horizon_raise(t, dls_pol_applied() + 1, nested);
}

/* The end stamp of an operation applied now, 2T + 1, T a ticket it takes once every
 * ticket below it is applied (see the file comment). */
uint64_t dls_pol_end_now(void) DLS_REQUIRES(dls_pol_g.lock);

/* The host stamps of an operation of the calling thread, outside any call, applied now. */
dls_hb_when dls_pol_when_now(void) DLS_REQUIRES(dls_pol_g.lock);

#endif
