/* check mode: finding unordered uses of exchanged tensors and describing them (the reports are
 * formatted and deduplicated by shim/report/race.c). Never changes ordering. Lock held, except
 * dls_pol_check_flush: a report is copied into a per-thread queue under the lock and written
 * (symbolized with dladdr) after it. */
#ifndef DLS_POL_CHECK_H
#define DLS_POL_CHECK_H

#include "types.h"

/* Checks access a (ENTER, on st by thread tid) against every exchange it touches (its frontier,
 * the other streams' uses: the two-way rule; released ones: their fence); reports races and counts
 * kernel pairs (race.h). Drops released exchanges no longer watched. */
void dls_pol_check_use(const dls_pol_access *a, dls_pol_stream *st, uint64_t tid);

/* Checks synchronous free a (ENTER, by thread tid) of memory in context ctx (0: not known, then
 * nothing is reported) against the pending uses of every live or released exchange it hands back
 * that lie on streams of other contexts (reports free-during-use). */
void dls_pol_check_free(const dls_pol_access *a, uintptr_t ctx, uint64_t tid);

/* Checks a host-visible import of x by thread tid through `importer` (reports host-read). */
void dls_pol_check_import(dls_pol_x *x, uint64_t tid, const char *importer);

/* Writes the reports the calling thread queued under the lock (no lock held). */
void dls_pol_check_flush(void);

#endif
