/* The records of the orderings fix makes, beside the other record schemas: `inject` (an ordering
 * made: an event wait, a host wait, a context synchronize) and `fallback` (a safer way taken, or
 * none possible). Each is also counted in the summary; an injection is kept for the query API
 * (history.h) and marked for NVTX tools. Any thread, any lock (the log and the summary take only
 * leaf locks). */
#ifndef DLS_ORDER_LOG_H
#define DLS_ORDER_LOG_H

#include <stdint.h>

/* A stream as the records name it. */
typedef struct {
    uint64_t id;
    uintptr_t handle;
    const char *kind; /* "legacy", "per-thread", "blocking", "non-blocking", "unknown" */
} dls_order_stream;

/* An ordering of exchange xid was made (`what`: how), `to` (NULL: the host) after `from` (NULL:
 * unknown), for `reason`. */
void dls_order_log_inject(uint64_t xid, const char *what, const dls_order_stream *from, const dls_order_stream *to,
                          const char *reason);

/* A fallback was taken (`reason`, `detail`: what and why). */
void dls_order_log_fallback(const char *reason, const char *detail);

#endif
