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
void dls_pol_check_use(const dls_pol_access *a, dls_pol_stream *st, uint64_t tid, uint64_t begin);

/* Checks synchronous free a (ENTER, by thread tid, of a call that began at `begin`) of memory in
 * context ctx (0: not known, then nothing is reported) against the pending uses of every live or
 * released exchange it hands back that lie on streams of other contexts (reports
 * free-during-use). */
void dls_pol_check_free(const dls_pol_access *a, uintptr_t ctx, uint64_t tid, uint64_t begin);

/* A host-visible import of x by thread tid through `importer`: from now on the host may read it,
 * but dlsync cannot see host loads. When the host has not waited for the producer's writes yet,
 * the verdict waits for the thread's next operation that enqueues work or waits on the host:
 * dls_pol_check_host (at that enqueue's ENTER or that wait's EXIT), or the tensor's release
 * (dls_pol_check_host_of), whichever comes first. A consumer that synchronizes right after the
 * import, before it reads, is not reported; one that reads and only then synchronizes is not
 * either (README, Limitations). */
void dls_pol_check_import(dls_pol_x *x, uint64_t tid, const char *importer);

/* Judges the host accesses thread tid's imports left pending: reports host-read for each producer
 * write that neither the thread has waited for by now nor a host synchronize of another thread
 * had seen complete before the import (one that returned later may have returned after the
 * read). Nothing to do when dls_pol_g.nhost is 0. */
void dls_pol_check_host(uint64_t tid);

/* The same for x's pending host access alone, whichever thread it belongs to (its release). */
void dls_pol_check_host_of(dls_pol_x *x);

/* Writes the reports the calling thread queued under the lock (no lock held). */
void dls_pol_check_flush(void);

#endif
