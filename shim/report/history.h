/* What the query API (dlsync.h: dlsync_exchange, dlsync_injection) gives of the exchanges and
 * injected orderings so far, kept in memory in two bounded rings.
 *
 * Injected orderings are kept always (the policy adds one per ordering it makes, beside its log
 * record; an ordering costs an event record and a wait already). Exchanges are kept only once
 * recording was started (dlsync_record_exchanges: the Python module starts it at import), since
 * copying every exchange would add to each wrapped call. The rings keep the last 4,096 exchanges
 * (by id) and the last 1,024 orderings. Thread-safe: one leaf lock, held for a copy only. */
#ifndef DLS_HISTORY_H
#define DLS_HISTORY_H

#include <stdint.h>

#define DLS_HISTORY_NDIM 8

typedef struct {
    uint64_t xid; /* 0: none */
    uint32_t imports;
    int released;
    char producer[32], producer_symbol[96]; /* framework and entry point of the export ("" when none) */
    char consumer[32], consumer_symbol[96]; /* of the last wrapped import ("" until imported) */
    char device[16], dtype[24];
    int device_id, ndim;
    int64_t shape[DLS_HISTORY_NDIM];
} dls_history_exchange;

typedef struct {
    uint64_t seq; /* from 1, in the order the orderings were made */
    uint64_t xid;
    char what[24];        /* "event-wait", "host-wait", "context-sync", ... */
    uint64_t from_stream; /* the stream waited for (dlsync's stream id; 0: none) */
    uint64_t to_stream;   /* the stream made to wait (0: the host) */
    char reason[128];
} dls_history_injection;

/* Keeps (replaces) the entry of e->xid. */
void dls_history_put_exchange(const dls_history_exchange *e);

/* Copies the entry of xid into *out. Returns 0, or -1 when it is not kept. */
int dls_history_get_exchange(uint64_t xid, dls_history_exchange *out);

/* Keeps one injected ordering (strings may be NULL). */
void dls_history_inject(uint64_t xid, const char *what, uint64_t from_stream, uint64_t to_stream, const char *reason);

/* Number of injected orderings kept so far (the highest seq). */
uint64_t dls_history_injections(void);

/* Copies ordering number seq (from 1) into *out. Returns 0, or -1 when it is not kept. */
int dls_history_get_injection(uint64_t seq, dls_history_injection *out);

#endif
