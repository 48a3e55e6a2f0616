/* The policy's receivers, one per lane of the observer (ops.h, dls_cuda_receivers). Each
 * operation becomes hb calls, a history entry and consumer accesses; one that may touch an
 * exchanged tensor is checked (check) or ordered (fix) at ENTER, after asking whether
 * host-function marks show the producer's work complete, and so (fix) is one that reuses released
 * memory, a stream-ordered free included. A host-function launch records its mark at ENTER; host
 * synchronizes capture at ENTER what they will complete. */
#ifndef DLS_POL_SINK_H
#define DLS_POL_SINK_H

#include "types.h"

void dls_pol_on_op(const dls_cuda_op *op);
void dls_pol_on_work(const dls_cuda_work *w);

/* A call with nothing to model is counted as an operation, and its thread's horizon catches up,
 * as dls_pol_on_op does for the same call delivered as operations. */
void dls_pol_on_lifetime(int nested);

/* check's receivers. Of the lifetime lane: the call is counted; the thread's next call stamps its
 * begin. Of every call's begin (fix orders at its calls' bodies and does not register it): at the
 * very start of the ENTER of call corr, the thread's horizon catches up with the host clock, and
 * its delivered ENTER raises it no further: the call is judged as of that begin (check.h), not as
 * of the point where its ENTER took the lock, by which time other threads' overlapping calls may
 * have returned. */
void dls_pol_check_on_lifetime(int nested);
void dls_pol_check_on_begins(uint32_t corr, int nested);

#endif
