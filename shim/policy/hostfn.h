/* Observed completion through host functions. A host thread may wait for a host function H
 * (cuLaunchHostFunc, cuStreamAddCallback) instead of a stream or event (XLA does), which the shim
 * cannot see; so at the ENTER of every host-function launch on a stream that is not capturing it
 * records a mark, an event of its own, just before H. At the ENTER of an operation that touches a
 * live exchange with a frontier entry W that hb does not order it after, the marks hb places after
 * W are queried with no lock held; a complete mark is an observed completion (the thread learns
 * it, and the mark's stream is done up to it), an incomplete one teaches nothing. */
#ifndef DLS_POL_HOSTFN_H
#define DLS_POL_HOSTFN_H

#include "types.h"

/* The marks one decision asks the driver about, pinned until dls_pol_hostfn_learn. */
typedef struct {
    unsigned n;
    int slot[DLS_POL_HOSTFN];
    CUevent ev[DLS_POL_HOSTFN];
    CUcontext ctx[DLS_POL_HOSTFN];
    int complete[DLS_POL_HOSTFN]; /* filled by dls_pol_hostfn_query */
} dls_pol_hostfn_ask;

/* ENTER of a host-function launch (op), no lock held: records a mark on op's stream (takes the
 * lock to plan and commit; records outside it). Does nothing on a capturing stream. */
void dls_pol_hostfn_launch(const dls_cuda_op *op) DLS_UNLOCKED;

/* For every live exchange access a touches that st is not ordered for, and every frontier
 * entry thread tid's next operation on st is not ordered after, learns a mark after it already
 * seen complete, or else collects (pinned) the marks after it into *ask. Returns ask->n > 0. */
int dls_pol_hostfn_wanted(const dls_pol_access *a, const dls_pol_stream *st, uint64_t tid, dls_pol_hostfn_ask *ask)
    DLS_REQUIRES(dls_pol_g.lock);

/* No lock held: asks the driver whether each mark of ask is complete. */
void dls_pol_hostfn_query(dls_pol_hostfn_ask *ask) DLS_UNLOCKED;

/* Unpins ask's marks; thread tid learns those found complete. */
void dls_pol_hostfn_learn(const dls_pol_hostfn_ask *ask, uint64_t tid) DLS_REQUIRES(dls_pol_g.lock);

#endif
