/* The receivers' half of host completion (complete.h): a host synchronize (a stream, event or
 * context synchronize, a query, a synchronous copy or free: kinds.def's host_sync) captures at its
 * ENTER what it will complete, and its EXIT applies the capture when the call succeeded. */
#ifndef DLS_POL_HOST_SYNC_H
#define DLS_POL_HOST_SYNC_H

#include "thread.h"
#include "types.h"

/* ENTER of host synchronize op of the thread whose block is pt: takes the lock and captures what
 * op will complete (check: as of the call's begin; fix: what is told by now), kept in pt until
 * the EXIT of the same call. */
void dls_pol_sync_enter(dls_pol_thread *pt, const dls_cuda_op *op) DLS_EXCLUDES(dls_pol_g.lock);

/* EXIT of host synchronize op, made by a call of stamps `when`: a successful one completes its
 * capture (a synchronous copy is applied first as an operation of its stream); a failed one
 * forgets it. Then (check) the watched host pages are looked at again (check.h,
 * dls_pol_check_host). */
void dls_pol_sync_exit(dls_pol_thread *pt, const dls_cuda_op *op, dls_hb_when when) DLS_REQUIRES(dls_pol_g.lock);

#endif
