/* Reading dlsync JSON-lines logs (docs/log-format.md) into memory for `dlsync report`.
 *
 * Each good line becomes one record. A damaged line (not JSON, not an object, no "ev", or cut
 * short because the process was killed mid-write) is skipped with one message naming file:line
 * and column, and reading goes on with the next line, so a log is always read up to and past its
 * damage. Several files append into one set: processes are told apart by their "pid". */
#ifndef DLS_TOOL_LOGREAD_H
#define DLS_TOOL_LOGREAD_H

#include <stdio.h>

#include "json.h"

typedef struct {
    const char *file; /* path as given (borrowed: must outlive the set) */
    long line;        /* 1-based line number */
    dls_json *obj;    /* the parsed object; owned by the set */
    const char *ev;   /* its "ev" value, never NULL */
} dls_log_record;

typedef struct {
    dls_log_record *recs;
    size_t n, cap;
    long damaged;     /* lines skipped as damaged, over all files */
    int files_failed; /* files that could not be opened or read */
} dls_log_set;

/* Appends every good record of the log at `path` to *set (zero-initialize a set before the first
 * call). Messages about damage go to `errs` (NULL: silent). Returns 0 when the file was read
 * (damage included), -1 when it could not be opened or read (also counted in files_failed). */
int dls_log_read(dls_log_set *set, const char *path, FILE *errs);

/* Frees every record of the set and resets it to empty. */
void dls_log_set_free(dls_log_set *set);

#endif
