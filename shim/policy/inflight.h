/* check: the calls in flight on the host clock (queue.h): those in their EXIT callback, after
 * which they return to the program. Until then another thread's call that begins cannot be after
 * them in the program's own order, so once such a call has told the end stamp it takes, the begin
 * stamps handed out (dls_pol_clock_at) stay at or below that end. The
 * registry is a mask of DLS_POL_INFLIGHT slots; with more EXITs in flight at once the rest go
 * unregistered (their calls count as returned at their end stamps, as they do under fix). */
#ifndef DLS_POL_INFLIGHT_H
#define DLS_POL_INFLIGHT_H

#include <stdatomic.h>
#include <stdint.h>

#define DLS_POL_INFLIGHT 64

/* The slots taken (bit i: slot i). */
extern _Atomic uint64_t dls_pol_inflight_mask;

/* check, at the start of an EXIT that may take an end stamp: registers the call as in flight,
 * with no end yet (it lowers no begin until it tells one: the end it will take follows every
 * begin handed out before); returns its slot, or -1 (another mode, or no slot free). */
int dls_pol_inflight_enter(void);

/* The call of `slot` (not -1) is about to claim its end ticket without the lock (a deferred
 * record): from now on it counts at the counter's next ticket, at or below the one it claims. */
void dls_pol_inflight_claiming(int slot);

/* Where the call of `slot` (not -1) tells the end it takes under the lock (dls_pol_end_now_telling). */
_Atomic uint64_t *dls_pol_inflight_end_of(int slot);

/* The call of `slot` (-1 is ignored) returns: its EXIT callback is over. */
void dls_pol_inflight_leave(int slot);

/* Forgets every call in flight (a forked child: their threads are not in it). */
void dls_pol_inflight_forget_all(void);

/* `now` lowered to the end of every call in flight (the mask is not empty). */
uint64_t dls_pol_inflight_lower(uint64_t now);

/* The host clock now as a begin stamp: twice the claim counter (`tail`, read with an acquire),
 * lowered to the end of any call still in flight: every end below it belongs to a call that
 * returned, or to one that went unregistered. Inline: check's begin of every call reads it. */
static inline uint64_t dls_pol_clock_at(uint64_t tail)
{
    uint64_t now = 2 * tail;
    return atomic_load_explicit(&dls_pol_inflight_mask, memory_order_acquire) ? dls_pol_inflight_lower(now) : now;
}

#endif
