/* A spin lock for critical sections of a few dozen instructions that call nothing.
 *
 * An uncontended lock and unlock cost one atomic exchange and one store (a pthread mutex pair
 * costs about fifty instructions), which matters on the exchange path. A waiter spins briefly,
 * then yields, then sleeps, so a holder that was descheduled gets the processor back. Rules:
 * never call anything that may block or take another lock while holding one, never hold one
 * across a call into another library. */
#ifndef DLS_SPIN_H
#define DLS_SPIN_H

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

typedef struct {
    atomic_int held;
} dls_spin;

#define DLS_SPIN_INIT \
    {                 \
        0             \
    }

/* Waits for s and takes it. */
static inline void dls_spin_lock(dls_spin *s)
{
    for (unsigned n = 0; atomic_exchange_explicit(&s->held, 1, memory_order_acquire);) {
        while (atomic_load_explicit(&s->held, memory_order_relaxed)) {
            if (++n < 64) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else if (n < 1024) {
                sched_yield();
            } else {
                struct timespec ts = {0, 50000};
                nanosleep(&ts, NULL);
            }
        }
    }
}

/* Releases s, which the caller holds. */
static inline void dls_spin_unlock(dls_spin *s)
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
