/* Lifetimes as the receivers see them: a thread's (its exit makes hb forget it), a stream's, an
 * event's and a graph's end (the model forgets them), and a stream's capture into a graph (its
 * work is recorded, not run, between the capture's begin and end). */
#ifndef DLS_POL_LIFETIME_H
#define DLS_POL_LIFETIME_H

#include "thread.h"
#include "types.h"

/* The thread whose block is pt, of id tid, is registered for the thread-exit hook, which makes hb
 * forget it (the thread id may be reused) once it exits. */
void dls_pol_thread_watch(dls_pol_thread *pt, uint64_t tid) DLS_REQUIRES(dls_pol_g.lock);

/* dls_pol_thread_watch, once per thread. Inline: every ENTER that takes the lock asks. */
static inline void dls_pol_thread_register(dls_pol_thread *pt, uint64_t tid) DLS_REQUIRES(dls_pol_g.lock)
{
    if (!pt->registered)
        dls_pol_thread_watch(pt, tid);
}

/* ENTER of op, whose kind forgets at ENTER (kinds.def): a stream's destruction takes the stream
 * out of the model; a graph's destruction or an executable graph's destruction or update forgets
 * what it writes. Done at ENTER, while the handle is still the caller's. Takes the lock. */
void dls_pol_lifetime_enter(const dls_cuda_op *op) DLS_EXCLUDES(dls_pol_g.lock);

/* EXIT of op, applied (lock held): an event's destruction, a capture's begin and end, a graph's
 * instantiation. A failed call ends nothing, but an invalidated capture still ends; other kinds
 * are ignored. */
void dls_pol_lifetime_exit(const dls_cuda_op *op) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when the driver says stream s is capturing. No lock held. */
int dls_pol_driver_capturing(const dls_cuda_stream *s) DLS_UNLOCKED;

/* dls_pol_driver_capturing, asked only while some stream captures (a stream joined to a capture
 * by an event is not seen by the capture calls). Inline: every ENTER that may touch asks. No lock
 * held. */
static inline int dls_pol_joined_capture(const dls_cuda_stream *s) DLS_UNLOCKED
{
    return atomic_load_explicit(&dls_pol_g.ncapturing, memory_order_relaxed) && dls_pol_driver_capturing(s);
}

#endif
