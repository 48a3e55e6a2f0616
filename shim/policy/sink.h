/* The policy's receivers of the observer's operations (ops.h): the work sink, which the
 * launches, linear asynchronous copies and sets reach through the work lane at ENTER and EXIT;
 * the call sink, which the lifetime lane's calls reach at EXIT; and the sink, which every other
 * operation reaches. Each operation becomes hb calls, a history entry and consumer accesses; one
 * that may touch an exchanged tensor is checked (check) or ordered (fix) at ENTER, after asking
 * whether host-function marks show the producer's work complete, and so (fix) is one that reuses
 * released memory, a stream-ordered free included. A host-function launch records its mark at
 * ENTER; host synchronizes capture at ENTER what they will complete. */
#ifndef DLS_POL_SINK_H
#define DLS_POL_SINK_H

#include "types.h"

/* The sink (dls_cuda_sink). */
void dls_pol_sink(const dls_cuda_op *op, void *user);

/* The work sink (dls_cuda_work_sink). */
void dls_pol_work(const dls_cuda_work *w);

/* The call sink (dls_cuda_call_sink): a call with nothing to model is counted as an operation,
 * and its thread's horizon catches up, as the sink does for the same call delivered as
 * operations. */
void dls_pol_call(int nested);

#endif
