/* check-mode race reports: formatting, deduplication, stderr text and the `race` log record.
 *
 * A report describes one unsynchronized use of an exchanged tensor: the tensor, the producer
 * side (framework, symbol, the last conflicting operation and its stream, the stack captured at
 * export), the consumer side (operation, stream, the stack of the thread that made the use),
 * why the two are unordered, and what to change (the fix line, advice.h). Reports with the same
 * key (exchange site, producer operation and stream kind, consumer operation and stream, hazard
 * kind) are one hazard: only the first
 * is printed and logged; later ones only raise its count (an occurrence in an exchange other than
 * the hazard's latest adds a short `race_again` log record naming it), and hazards seen more than
 * once get one "seen N times" line on stderr at exit. A hazard a suppression rule matches (suppress.h) is
 * not printed: it is logged with the rule and counted as suppressed. Thread-safe (one lock around the table; the text
 * is written with one write(2) outside it). */
#ifndef DLS_RACE_H
#define DLS_RACE_H

#include "race_entries.h"
#include "race_types.h"

#include <stddef.h>
#include <stdint.h>

/* Stable name of a kind as written in the log ("write-read", ...). */
const char *dls_race_kind_name(dls_race_kind k);

/* The deduplication key of r. */
uint64_t dls_race_key(const dls_race *r);

/* Reports r: the first time its key is seen, writes the report on stderr and the `race` record
 * in the log and counts one race in the summary, or, when a suppression rule matches it, only
 * the `race` record (with the rule) and one suppressed race, or, for a kernel-pair race while
 * DLSYNC_KERNEL_PAIRS is not 1, only one more in the summary's kernel_pairs; afterwards only
 * counts. When the
 * consumer is the calling thread and it released the GIL, the report is written when the thread
 * takes the GIL back, with its Python frames, or at exit. Returns the number of
 * times the key has been seen, this one included (0 when the table is full and the report was
 * printed without deduplication). */
unsigned dls_race_report(const dls_race *r);

/* Copies the i-th report written (from 0; race_entries.h) into *out and the times its hazard
 * was seen so far into *count. Returns 0, or -1 when there is no such report. */
int dls_race_entry_get(size_t i, dls_race_entry *out, unsigned *count);

/* Number of distinct hazards reported so far. */
size_t dls_race_distinct(void);

/* Tests only: forget every report. */
void dls_race_reset_for_tests(void);

/* Writes one "seen N times" line on stderr for each hazard reported more than once (at exit,
 * by the shim's start-up file). */
void dls_race_emit_repeats(void);

#endif
