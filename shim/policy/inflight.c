/* The calls in flight (see inflight.h). A slot is taken by setting its bit in the mask, then
 * given the end of the counter's next ticket before the call claims its own: a thread whose begin
 * reads the counter after that claim (an acquire of the claim's release) also reads the bit and
 * the slot. One that reads a slot's stale value from its previous call reads a lower end: an
 * earlier begin, which orders less, never wrongly. A call applied under the lock has no end while
 * it waits for the lock (dls_pol_inflight_unstamped): the end it takes there follows every begin
 * handed out meanwhile, and it tells that end before it claims it (dls_pol_end_now_telling). */
#include "inflight.h"

#include "../common/config.h"
#include "queue.h"
#include "types.h"

#include <stdatomic.h>

_Atomic uint64_t dls_pol_inflight_mask;
static _Atomic uint64_t g_end[DLS_POL_INFLIGHT];

int dls_pol_inflight_enter(void)
{
    if (dls_pol_g.mode != DLS_MODE_CHECK)
        return -1;
    uint64_t m = atomic_load_explicit(&dls_pol_inflight_mask, memory_order_relaxed);
    for (;;) {
        if (m == UINT64_MAX)
            return -1;
        int slot = __builtin_ctzll(~m);
        if (atomic_compare_exchange_weak_explicit(&dls_pol_inflight_mask, &m, m | UINT64_C(1) << slot,
                                                  memory_order_acq_rel, memory_order_relaxed)) {
            uint64_t next = atomic_load_explicit(&dls_pol_queue_tail, memory_order_acquire);
            atomic_store_explicit(&g_end[slot], dls_pol_ticket_end(next), memory_order_release);
            return slot;
        }
    }
}

void dls_pol_inflight_unstamped(int slot)
{
    if (slot >= 0)
        atomic_store_explicit(&g_end[slot], UINT64_MAX, memory_order_release);
}

_Atomic uint64_t *dls_pol_inflight_end_of(int slot)
{
    return &g_end[slot];
}

void dls_pol_inflight_leave(int slot)
{
    if (slot >= 0)
        atomic_fetch_and_explicit(&dls_pol_inflight_mask, ~(UINT64_C(1) << slot), memory_order_release);
}

void dls_pol_inflight_forget_all(void)
{
    atomic_store_explicit(&dls_pol_inflight_mask, 0, memory_order_release);
}

uint64_t dls_pol_inflight_lower(uint64_t now)
{
    for (uint64_t m = atomic_load_explicit(&dls_pol_inflight_mask, memory_order_acquire); m; m &= m - 1) {
        uint64_t end = atomic_load_explicit(&g_end[__builtin_ctzll(m)], memory_order_acquire);
        if (end < now)
            now = end;
    }
    return now;
}
