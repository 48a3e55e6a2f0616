/* The race reports written so far, as the query API gives them (dlsync.h: dlsync_race).
 *
 * race.c keeps each report it writes here, after the text and the log record; the query API
 * reads them back by index. At most 256 are kept, each one allocation holding every string,
 * never freed. Thread-safe (one lock around the table; copies are made outside it). */
#ifndef DLS_RACE_ENTRIES_H
#define DLS_RACE_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

/* A report as written. The strings stay valid for the life of the process; a stack is its
 * frames, one per line, innermost first. */
typedef struct {
    uint64_t key, xid;
    const char *kind, *framework, *symbol, *producer_op, *consumer_op, *fix;
    const char *producer_stack, *consumer_stack;
    const char *text; /* the report exactly as written on stderr */
} dls_race_entry;

/* Keeps a copy of e and of every string it points to (NULL strings stay NULL); nothing when
 * memory is short or 256 reports are kept. */
void dls_race_entry_keep(const dls_race_entry *e);

/* Number of reports written so far (at most 256 are kept). */
size_t dls_race_entries(void);

/* Copies the i-th report kept (from 0) into *out. Returns 0, or -1 when there is no such
 * report. */
int dls_race_entry_at(size_t i, dls_race_entry *out);

#endif
