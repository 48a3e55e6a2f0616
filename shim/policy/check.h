/* check mode: finding unordered uses of exchanged tensors and describing them (the reports are
 * formatted and deduplicated by shim/report/race.c). Never changes ordering. Lock held, except
 * dls_pol_check_flush: a report is copied into a per-thread queue under the lock and written
 * (symbolized with dladdr) after it. */
#ifndef DLS_POL_CHECK_H
#define DLS_POL_CHECK_H

#include "types.h"

/* Checks access a (ENTER, on st by thread tid, of a call that began at stamp `begin`: queue.h)
 * against every exchange it touches (its frontier, the other streams' uses: the two-way rule;
 * released ones: their fence); reports races and counts kernel pairs (race.h). Drops released
 * exchanges no longer watched. Only what is ordered before the call began counts: calls of other
 * threads that overlapped it may have been enqueued after it (dls_pol_ordered). */
void dls_pol_check_use(const dls_pol_access *a, dls_pol_stream *st, uint64_t tid, uint64_t begin)
    DLS_REQUIRES(dls_pol_g.lock);

/* Checks synchronous free a (ENTER, by thread tid, of a call that began at `begin`) of memory in
 * context ctx (0: not known, then nothing is reported) against the pending uses of every live or
 * released exchange it hands back that lie on streams of other contexts (reports
 * free-during-use). */
void dls_pol_check_free(const dls_pol_access *a, uintptr_t ctx, uint64_t tid, uint64_t begin)
    DLS_REQUIRES(dls_pol_g.lock);

/* A host-visible import of x by thread tid through `importer`, of memory whose page-locked
 * allocation ends at pinned_end (0: not page-locked memory CUDA knows, or not known): when the
 * producer's writes are pending as far as dlsync knows, the tensor's pages are protected from the
 * CPU (pages.h) until they complete, so that the host's access itself is seen. Where that is not
 * possible (managed or pageable memory, a page the tensor shares with other data, a refused
 * mprotect), the handover itself is reported as host-read, saying why. */
void dls_pol_check_import(dls_pol_x *x, uint64_t tid, const char *importer, uintptr_t pinned_end)
    DLS_REQUIRES(dls_pol_g.lock);

/* Reports host-read for each host access caught on watched pages since the last call, and ends
 * the watches whose producer's writes are now complete (a host synchronize, event synchronize or
 * successful query of any thread). Nothing to do when dls_pol_g.nhost is 0. */
void dls_pol_check_host(void) DLS_REQUIRES(dls_pol_g.lock);

/* The same for x alone, ending its watch whether or not its producer's writes are complete (its
 * release). */
void dls_pol_check_host_of(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* Writes the reports the calling thread queued under the lock (no lock held). */
void dls_pol_check_flush(void) DLS_UNLOCKED;

#endif
