/* The spin lock's wait (see spin.h). */
#include "spin.h"

#include <sched.h>
#include <time.h>

void dls_spin_wait(dls_spin *s)
{
    for (unsigned n = 0;;) {
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
        if (!atomic_exchange_explicit(&s->held, 1, memory_order_acquire))
            return;
    }
}
