/* The JSON-lines log (DLSYNC_LOG, format in docs/log-format.md).
 *
 * A record is built in a dls_json buffer (on the caller's stack; it moves to the heap only for
 * very long records) and written with a single write(2) to a file opened with O_APPEND, so
 * lines from threads and processes never interleave. The file is opened on first use; "%p" in
 * the path becomes the pid, "%r" the launcher rank (OMPI_COMM_WORLD_RANK, PMI_RANK,
 * SLURM_PROCID or RANK; DLS_LOG_NO_RANK when none), "%%" a '%'. The first line is a `start`
 * record. A forked child with "%p" in the path reopens its own file. The file is one of dlsync's
 * own descriptors (common/ownfd.h): opened without blocking, checked before each write. Nothing
 * here can fail the caller: when the log cannot be opened or a write fails (a full device, the
 * program closed or reused the descriptor), one warning is printed and no more records are
 * written. */
#ifndef DLS_LOG_H
#define DLS_LOG_H

#include <stddef.h>
#include <stdint.h>

#define DLS_JSON_INLINE 1536
#define DLS_LOG_NO_RANK "norank" /* what %r becomes in a process without a launcher rank */

/* One record under construction. Fill only through the functions below. */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;                   /* out of memory: the record is dropped */
    char inline_buf[DLS_JSON_INLINE];
} dls_json;

/* 1 when DLSYNC_LOG is set and the log could be opened (opens it on the first call). */
int dls_log_enabled(void);

/* Starts a record of kind `ev` with the keys every line has: ev, t, pid, tid. */
void dls_json_begin(dls_json *j, const char *ev);

/* Appends "key": value. Strings are escaped; dls_json_ptr writes "0x..." (null for NULL);
 * dls_json_raw appends an already-formatted JSON value; dls_json_i64s writes an array of n
 * integers (null when v is NULL). */
void dls_json_str(dls_json *j, const char *key, const char *val);
void dls_json_i64(dls_json *j, const char *key, int64_t v);
void dls_json_u64(dls_json *j, const char *key, uint64_t v);
void dls_json_ptr(dls_json *j, const char *key, const void *p);
void dls_json_raw(dls_json *j, const char *key, const char *json);
void dls_json_i64s(dls_json *j, const char *key, const int64_t *v, size_t n);

/* Closes the record, writes it as one line (when the log is enabled) and releases j. */
void dls_log_write(dls_json *j);

/* Nanoseconds since the Unix epoch: the realtime clock read once at startup plus the monotonic
 * time since, so records of one process are ordered even if the wall clock jumps. */
uint64_t dls_log_now_ns(void);

/* Kernel thread id of the calling thread (cached per thread). */
int dls_log_tid(void);

/* Expands %p, %r and %% of a DLSYNC_LOG path into buf (size n) for process `pid` and rank
 * `rank` (NULL: none, written DLS_LOG_NO_RANK). Returns 0, or -1 when the result does not fit. */
int dls_log_expand_path(const char *pattern, int pid, const char *rank, char *buf, size_t n);

/* The launcher rank from the usual variables, or NULL when none is set. */
const char *dls_log_rank(void);

#endif
