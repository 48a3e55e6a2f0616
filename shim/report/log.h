/* The JSON-lines log (DLSYNC_LOG, format in docs/log-format.md).
 *
 * A record is built with the JSON writer (json.h) in the calling thread's buffer and written
 * with a single write(2) to a file opened with O_APPEND, so lines from threads and processes
 * never interleave. The file is opened on first use; "%p" in
 * the path becomes the pid, "%r" the launcher rank (OMPI_COMM_WORLD_RANK, PMI_RANK,
 * SLURM_PROCID or RANK; DLS_LOG_NO_RANK when none), "%n" the smallest number that names a new
 * file, "%%" a '%'; a relative path is taken from the directory at open. The first line is a
 * `start` record (with the run's identity, report/run.h); a forked child writes its own, and with
 * "%p" or "%n" in the path opens its own file. Opening a file that already holds another run's
 * records is said once. Each process tells its run which log it writes (report/run.h).
 * Past DLSYNC_LOG_LIMIT bytes (the file's size) only start, race, warning, fallback and summary
 * records are still written; the first record held back writes one `log_capped` record and one
 * warning. The file is one of dlsync's
 * own descriptors (common/ownfd.h): opened without blocking, checked before each write. Nothing
 * here can fail the caller: when the log cannot be opened or a write fails (a full device, the
 * program closed or reused the descriptor), one warning is printed and no more records are
 * written. */
#ifndef DLS_LOG_H
#define DLS_LOG_H

#include "../common/compiler.h"
#include "../common/export.h"

#include "json.h"
#include "log_head.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define DLS_LOG_NO_RANK "norank" /* what %r becomes in a process without a launcher rank */

/* 1 while records are written; 0 also before the log was opened (written by log.c only). */
extern atomic_int dls_log_open DLS_HIDDEN;
/* Set once the log was opened or found not wanted (written by log.c only). */
extern atomic_int dls_log_ready DLS_HIDDEN;

/* dls_log_enabled before the log was opened: opens it (once) and answers. */
int dls_log_enabled_first(void);

/* 1 when DLSYNC_LOG is set and the log could be opened (opens it on the first call). Once
 * opened, two inline loads. (The hint keeps the opening out of the way: without it a log record
 * costs 10 instructions more, make bench's log-record figure.) */
static inline int dls_log_enabled(void)
{
    if (DLS_UNLIKELY(!atomic_load_explicit(&dls_log_ready, memory_order_acquire)))
        return dls_log_enabled_first();
    return atomic_load_explicit(&dls_log_open, memory_order_acquire);
}

/* Closes the record, writes it as one line with one write(2) (when the log is enabled) and
 * releases j. */
void dls_log_write(dls_rec *j);

/* Expands %p, %r, %n and %% of a DLSYNC_LOG path into buf (size n) for process `pid`, rank
 * `rank` (NULL: none, written DLS_LOG_NO_RANK) and number `seq` (what %n becomes: the log is
 * opened with the smallest one that names a new file). Returns 0, or -1 when the result does
 * not fit. */
int dls_log_expand_path(const char *pattern, int pid, const char *rank, unsigned seq, char *buf, size_t n);

/* The absolute path of the log (expanded when it was opened), or NULL when DLSYNC_LOG is unset
 * or the log was not opened yet. */
const char *dls_log_path(void);

/* Why this process's log lost records: it could not be opened, a write failed, or the program
 * closed or replaced its descriptor; NULL while nothing was lost (the size limit is not a loss:
 * dls_log_dropped). */
const char *dls_log_problem(void);

/* Records the size limit (DLSYNC_LOG_LIMIT) held back so far. */
uint64_t dls_log_dropped(void);

/* The launcher rank: the value of the first DLS_RANK_VARIABLE of common/options.def that is set
 * and not empty (read with secure_getenv at each call), or NULL when none is. */
const char *dls_log_rank(void);

#endif
