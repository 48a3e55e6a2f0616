/* The calls in flight (see inflight.h). A slot is taken by setting its bit in the mask, with no
 * end (UINT64_MAX) while the EXIT decodes, resolves and waits for the lock: the end it takes later
 * follows every begin handed out meanwhile. Before it claims its end ticket it stores that ticket's
 * end, or one below it, in the slot: a thread whose begin reads the counter after that claim (an
 * acquire of the claim's release) also reads the bit and the slot. One that reads a slot's stale
 * value from its previous call reads a lower end: an earlier begin, which orders less, never
 * wrongly. Setting the end at the EXIT's start instead lowered every begin for as long as an EXIT
 * made identity calls or waited for the lock, and the calls that returned meanwhile, the asking
 * thread's own included, counted as overlapping it. */
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
            atomic_store_explicit(&g_end[slot], UINT64_MAX, memory_order_release);
            return slot;
        }
    }
}

void dls_pol_inflight_claiming(int slot)
{
    uint64_t next = atomic_load_explicit(&dls_pol_queue_tail, memory_order_acquire);
    atomic_store_explicit(&g_end[slot], dls_pol_ticket_end(next), memory_order_release);
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
