/* The policy's state (types.h): the one dls_pol_state, and how the model degrades. The bottom of
 * the policy: every file may use it, it calls nothing in policy/. */
#include "types.h"

#include "../common/config.h"
#include "../report/warn.h"

dls_pol_state dls_pol_g = {.lock = PTHREAD_MUTEX_INITIALIZER,
                           .streams = DLS_MAP_INIT(DLS_MAP_WORDS, dls_pol_stream_slot)};

void dls_pol_degrade(const char *key, const char *reason)
{
    atomic_store_explicit(&dls_pol_g.degraded, 1, memory_order_relaxed);
    dls_warn_once(key, "%s; %s", reason,
                  dls_pol_g.mode == DLS_MODE_FIX
                      ? "exchanges are ordered by synchronizing the producer's context at export from now on"
                      : "exchanges are not fully checked from now on (races may go unreported)");
}
