/* The policy's receivers of the observer's operations (ops.h, dls_cuda_receivers): the work
 * sink, which the launches, linear asynchronous copies and sets reach through the work lane at
 * ENTER and EXIT; the call sink, which the lifetime lane's calls reach at EXIT; and the sink,
 * which every other operation reaches through the op lane. Each operation becomes hb calls, a history entry and consumer accesses; one
 * that may touch an exchanged tensor is checked (check) or ordered (fix) at ENTER, after asking
 * whether host-function marks show the producer's work complete, and so (fix) is one that reuses
 * released memory, a stream-ordered free included. A host-function launch records its mark at
 * ENTER; host synchronizes capture at ENTER what they will complete. */
#ifndef DLS_POL_SINK_H
#define DLS_POL_SINK_H

#include "types.h"

/* The sink (the op lane's receiver). */
void dls_pol_sink(const dls_cuda_op *op);

/* The work sink (the work lane's receiver). */
void dls_pol_work(const dls_cuda_work *w);

/* The call sink (the lifetime lane's receiver): a call with nothing to model is counted as an operation,
 * and its thread's horizon catches up, as the sink does for the same call delivered as
 * operations. */
void dls_pol_call(int nested);

/* check's receiver of the lifetime lane: the call is counted; the thread's next call stamps its
 * begin (dls_pol_begins). */
void dls_pol_check_call(int nested);

/* check's begin receiver: at the very start of the ENTER of call corr, the thread's horizon
 * catches up with the host clock, and its delivered ENTER raises it no further: the call is judged
 * as of that begin (check.h), not as of the point where its ENTER took the lock, by which time
 * other threads' overlapping calls may have returned. fix orders at its calls' bodies and does not
 * register it. */
void dls_pol_begins(uint32_t corr, int nested);

#endif
