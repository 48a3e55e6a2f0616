/* The timeline `dlsync report --chrome-trace` writes: the Trace Event format (a JSON object with
 * "traceEvents") that Perfetto and chrome://tracing open. One track per host thread and one per
 * CUDA stream (named by metadata events), exchanges as instant events with flow arrows from each
 * export to its import, injected waits and races as marked instants (with arrows from the stream
 * waited for), fallbacks and warnings as process-wide instants. Times are microseconds since the
 * earliest record. */
#ifndef DLT_CHROME_H
#define DLT_CHROME_H

#include <stdio.h>

#include "logread.h"

/* Track id ("tid") used for a stream's track: far above kernel thread ids. */
#define DLT_CHROME_STREAM_TID_BASE 0x40000000LL

/* Writes the timeline of set to out. Returns 0, or -1 when memory runs out or writing fails. */
int dlt_chrome_write(const dlt_log_set *set, FILE *out);

#endif
