/* The policy's state (types.h): the one dls_pol_state, its reset for tests, and how the model
 * degrades. The bottom of the policy: every file may use it, it calls nothing in policy/. */
#include "thread.h"
#include "types.h"

#include "../common/config.h"
#include "../report/warn.h"

#include <stdlib.h>
#include <string.h>

dls_pol_state dls_pol_g = {.lock = PTHREAD_MUTEX_INITIALIZER,
                           .streams = DLS_MAP_INIT(DLS_MAP_WORDS, dls_pol_stream_slot),
                           .graphs = {.by_graph = DLS_MAP_INIT(DLS_MAP_WORDS, dls_pol_known_writes),
                                      .by_exec = DLS_MAP_INIT(DLS_MAP_WORDS, dls_pol_known_writes)}};

void dls_pol_degrade(const char *key, const char *reason)
{
    atomic_store_explicit(&dls_pol_g.degraded, 1, memory_order_relaxed);
    dls_warn_once(key, "%s; %s", reason,
                  dls_pol_g.mode == DLS_MODE_FIX
                      ? "exchanges are ordered by synchronizing the producer's context at export from now on"
                      : "exchanges are not fully checked from now on (races may go unreported)");
}

void dls_pol_reset_for_tests(void)
{
    dls_pol_thread *pt = dls_pol_thread_self(); /* its holds go with the streams freed below */
    pt->after_st = pt->legacy_st = NULL;
    for (size_t i = 0; i < dls_pol_g.streams.cap; i++) {
        const dls_pol_stream_slot *sl = dls_map_at(&dls_pol_g.streams, i);
        if (sl->id) {
            free(sl->st->ring);
            free(sl->st);
        }
    }
    free(dls_map_take(&dls_pol_g.streams));
    free(dls_pol_g.listed);
    dls_pol_g.listed = NULL;
    dls_pol_g.nlisted = dls_pol_g.caplisted = 0;
    while (dls_pol_g.forgotten.list) { /* held or not: no hold outlives a reset */
        dls_pol_stream *next = dls_pol_g.forgotten.list->forgotten;
        free(dls_pol_g.forgotten.list);
        dls_pol_g.forgotten.list = next;
    }
    memset(dls_pol_g.found, 0, sizeof dls_pol_g.found);
    dls_pol_g.nremoved = 0;
    free(dls_pol_g.superseded.pieces);
    free(dls_pol_g.superseded.cands);
    memset(&dls_pol_g.superseded, 0, sizeof dls_pol_g.superseded);
    memset(dls_pol_g.forgotten.recent, 0, sizeof dls_pol_g.forgotten.recent);
    memset(dls_pol_g.graphs.captures, 0, sizeof dls_pol_g.graphs.captures);
    free(dls_map_take(&dls_pol_g.graphs.by_graph));
    free(dls_map_take(&dls_pol_g.graphs.by_exec));
    memset(dls_pol_g.hostfn.marks, 0, sizeof dls_pol_g.hostfn.marks);
    dls_pol_g.hostfn.nlive = 0;
}
