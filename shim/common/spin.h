/* A spin lock for critical sections of a few dozen instructions that call nothing.
 *
 * An uncontended lock and unlock cost one atomic exchange and one store (a pthread mutex pair
 * costs about fifty instructions), which matters on the exchange path. A waiter spins briefly,
 * then yields, then sleeps, so a holder that was descheduled gets the processor back. Rules:
 * never call anything that may block or take another lock while holding one, never hold one
 * across a call into another library. */
#ifndef DLS_SPIN_H
#define DLS_SPIN_H

#include "compiler.h"

#include <stdatomic.h>
#include <stddef.h>

typedef struct DLS_CAPABILITY("spin lock") {
    atomic_int held;
} dls_spin;

#define DLS_SPIN_INIT \
    {                 \
        0             \
    }

/* dls_spin_lock once s was found held: spins, yields, sleeps until it takes s. */
void dls_spin_wait(dls_spin *s);

/* Waits for s and takes it: one atomic exchange inline when s is free. (Without the hint the
 * wrapped export+release of make bench's hooks-export-release figure costs 2 instructions more,
 * which takes it over its budget.) */
static inline void dls_spin_lock(dls_spin *s) DLS_ACQUIRE(*s, dls_any_lock) DLS_NO_LOCK_ANALYSIS
{
    if (DLS_UNLIKELY(atomic_exchange_explicit(&s->held, 1, memory_order_acquire)))
        dls_spin_wait(s);
}

/* Takes s when it is free and returns 1; returns 0, taking nothing, when it is held. */
static inline int dls_spin_trylock(dls_spin *s) DLS_TRY_ACQUIRE(1, *s, dls_any_lock) DLS_NO_LOCK_ANALYSIS
{
    return !atomic_exchange_explicit(&s->held, 1, memory_order_acquire);
}

/* Releases s, which the caller holds. */
static inline void dls_spin_unlock(dls_spin *s) DLS_RELEASE(*s, dls_any_lock) DLS_NO_LOCK_ANALYSIS
{
    atomic_store_explicit(&s->held, 0, memory_order_release);
}

/* Adds d (may wrap: (size_t)-1 subtracts one) to a counter written only under a lock and read
 * without it: a load and a store, no locked instruction. */
static inline void dls_spin_count_add(atomic_size_t *c, size_t d)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + d, memory_order_relaxed);
}

#endif
