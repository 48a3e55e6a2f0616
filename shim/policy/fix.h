/* fix mode: which orderings the shim adds (an event wait of a consumer stream on a producer
 * stream, host waits for host-visible memory, lazy release fences) and the fallback when exchanges
 * cannot be modelled. These plan (order.h, lock held); order.c makes the orderings without the
 * lock and commits them. A capturing stream never receives an injected operation: the graph
 * launch is ordered instead. */
#ifndef DLS_POL_FIX_H
#define DLS_POL_FIX_H

#include "order.h"

/* Plans st after the frontier of every live exchange access a touches (ENTER), and after every
 * other stream's use of it that a conflicts with (the two-way rule, docs/architecture.md: either
 * side may write; between two streams of the consumer's side, only a known write). Returns 1 when
 * a is a consumer access that wants an after event: it touches a live exchange none of whose
 * producer streams is st. */
int dls_pol_fix_use(dls_pol_plan *p, const dls_pol_access *a, dls_pol_stream *st) DLS_REQUIRES(dls_pol_g.lock);

/* Plans st after x's frontier (made and marked at commit; p->rc says whether it was). A
 * capturing st is left alone (x is marked captured; the graph launch is ordered instead). */
void dls_pol_fix_stream(dls_pol_plan *p, dls_pol_x *x, dls_pol_stream *st, const char *reason)
    DLS_REQUIRES(dls_pol_g.lock);

/* Plans the host after x's pending producer work (host-visible import). */
void dls_pol_fix_import(dls_pol_plan *p, dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* Release of x: returns 1 when x was moved to the released list, watched on as a fence (its
 * accesses after the release count too; ownership passes to the list), 0 when the caller drops
 * it (used, with every use complete; or host-visible memory, whose host wait is planned). Plans
 * the oldest fence at once when the list is full. */
int dls_pol_fix_release(dls_pol_plan *p, dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* Plans st after every use (the consumer's accesses, before and after the release) of every
 * released exchange access a reuses, and after its frontier (ENTER); drops those no longer
 * watched (dls_pol_x_released_done), and (at commit) those that a reuses all of once it is
 * ordered, when a is a known write or on a producer stream (a consumer's late kernel does not end
 * the watch). */
void dls_pol_fix_reuse(dls_pol_plan *p, const dls_pol_access *a, dls_pol_stream *st) DLS_REQUIRES(dls_pol_g.lock);

/* Plans the host after every pending use of every live or released exchange that synchronous free
 * a hands back (ENTER, lock held). The free itself waits only for its own context's work: a use
 * on another device's stream would otherwise read memory already freed. */
void dls_pol_fix_free(dls_pol_plan *p, const dls_pol_access *a) DLS_REQUIRES(dls_pol_g.lock);

/* Synchronizes the current context and every device's active primary context (the producer's
 * work may be on any device) because exchanges cannot be modelled (no observer, or the model is
 * degraded) at an export; warns once. No lock held. Returns 0, or EIO when the synchronize
 * failed. */
int dls_pol_fix_no_observer(void) DLS_UNLOCKED;

#endif
