/* The head every log record begins with: `{"ev":"<kind>","t":<ns>,"pid":P,"tid":T`, and the
 * clock and ids it is made of. The bottom of the log: log.c (records and the file) and run.c
 * (the run's manifest) both begin records here; it calls neither. */
#ifndef DLS_LOG_HEAD_H
#define DLS_LOG_HEAD_H

#include "json.h"

#include <stddef.h>
#include <stdint.h>

/* Starts a record of kind `ev` (the n bytes at ev: letters and '_', written as they are) in j
 * (see json.h for the values) with the keys every line has: ev, t, pid, tid. */
void dls_log_begin_n(dls_rec *j, const char *ev, size_t n);

/* dls_log_begin_n for a NUL-terminated ev (a literal's length is known at compile time). */
static inline void dls_log_begin(dls_rec *j, const char *ev)
{
    dls_log_begin_n(j, ev, __builtin_strlen(ev));
}

/* Nanoseconds since the Unix epoch: the realtime clock read once at startup plus the monotonic
 * time since, so records of one process are ordered even if the wall clock jumps. */
uint64_t dls_log_now_ns(void);

/* Kernel thread id of the calling thread (cached per thread). */
int dls_log_tid(void);

/* In a forked child (log.c's atfork handler): the ids are read again, the child's own. */
void dls_log_head_forked(void);

#endif
