/* Reading dlsync JSON-lines logs (docs/log-format.md) for `dlsync report` and `dlsync run`.
 *
 * A log is opened only when it is what it should be: "-" is standard input; otherwise a regular
 * file, or, when the caller allows it, a pipe or FIFO (opened without waiting for a writer);
 * a directory, a device or a socket is refused with one reason. Lines longer than
 * DLT_LOG_MAX_LINE bytes are refused. A file whose first line is not a log record (a JSON
 * object with a string "ev"), one with a line that is too long, and one with more than
 * DLT_LOG_MAX_DAMAGED damaged lines is not a dlsync log: one message, reading stops, the file
 * counts as failed. Otherwise a damaged line (not JSON, not an object, no "ev", or cut short
 * because the process was killed mid-write) is skipped with one message naming file:line and
 * column, so a log is read up to and past its damage. Several files append into one set:
 * processes are told apart by their "pid" (and their start records). Messages escape the
 * control characters of what they quote. */
#ifndef DLT_LOGREAD_H
#define DLT_LOGREAD_H

#include <stdio.h>

#include "json.h"

#define DLT_LOG_MAX_LINE (1u << 20) /* bytes; the shim's records are far shorter */
#define DLT_LOG_MAX_DAMAGED 20      /* damaged lines in one file before it is not a log */

typedef struct {
    const char *file;    /* path as given (borrowed: must outlive the set) */
    long line;           /* 1-based line number */
    dlt_json_value *obj; /* the parsed object; owned by the set */
    const char *ev;      /* its "ev" value, never NULL */
} dlt_log_record;

typedef struct {
    dlt_log_record *recs;
    size_t n, cap;
    long damaged;     /* lines skipped as damaged, over all files */
    int files_failed; /* files that could not be opened or read, or were no dlsync log */
} dlt_log_set;

/* What dlt_log_scan accepts. */
typedef struct {
    int pipes;                /* also pipes and FIFOs (and "-" for standard input) */
    const char *const *kinds; /* NULL, or the only record kinds wanted (NULL-terminated): lines that
                                  do not begin {"ev":"KIND" with one of them (as the shim writes
                                  them) are skipped unparsed */
    FILE *errs;               /* messages (NULL: silent) */
} dlt_log_scan_opts;

/* Called for each good record (r->obj is freed after the call unless the callee took it and set
 * r->obj to NULL). Return 0 to go on, -1 to stop (out of memory). */
typedef int (*dlt_log_visit)(dlt_log_record *r, void *ctx);

/* Reads the log at path line by line, calling visit for each good record. *damaged counts the
 * lines skipped as damaged. Returns 0 when the file was read (damage included), -1 when it
 * could not be opened or read, was refused, or was not a dlsync log (one message then). */
int dlt_log_scan(const char *path, const dlt_log_scan_opts *opts, dlt_log_visit visit, void *ctx, long *damaged);

/* Appends every good record of the log at `path` (pipes and "-" allowed) to *set (zero-initialize
 * a set before the first call). Messages go to `errs` (NULL: silent). Returns 0 when the file was
 * read (damage included), -1 when not (also counted in files_failed). */
int dlt_log_read(dlt_log_set *set, const char *path, FILE *errs);

/* Frees every record of the set and resets it to empty. */
void dlt_log_set_free(dlt_log_set *set);

#endif
