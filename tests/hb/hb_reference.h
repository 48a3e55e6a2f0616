/* A brute-force reference model of the happens-before engine, for the differential test.
 *
 * It keeps the explicit happens-before graph: one node per operation, with edges from the
 * previous operation of its stream, from every operation its enqueuing thread has synchronized
 * with, from the legacy-stream rules and from the event record an event wait waits for; each
 * node stores its full ancestor set (reachability). Accesses keep their whole history. Every
 * question of shim/hb/hb.h is answered from the definitions written there, with no clocks, no
 * frontier compression and no interval structure. Small fixed limits (see HBREF_*); exceeding
 * one returns ENOSPC. Return codes and output formats follow hb.h. */
#ifndef HB_REFERENCE_H
#define HB_REFERENCE_H

#include "hb/hb.h"

#define HBREF_MAX_OPS 640
#define HBREF_MAX_STREAMS 32
#define HBREF_MAX_THREADS 16
#define HBREF_MAX_EVENTS 32
#define HBREF_MAX_RANGES 64

typedef struct hbref hbref;

/* Creates an empty model (NULL when memory is short); hbref_destroy frees it. */
hbref *hbref_create(void);
void hbref_destroy(hbref *r);

/* Model updates, as the dls_hb_* functions of the same names. Tracked ranges take the handle
 * the engine gave them, so answers can be compared directly. */
int hbref_stream_add(hbref *r, uint64_t stream, uint64_t ctx, dls_hb_stream_kind kind);
int hbref_stream_remove(hbref *r, uint64_t stream);
void hbref_thread_remove(hbref *r, uint64_t thread);
void hbref_event_remove(hbref *r, uint64_t event);
int hbref_op(hbref *r, uint64_t thread, uint64_t stream, uint64_t op, uint64_t *pos);
int hbref_event_record(hbref *r, uint64_t thread, uint64_t stream, uint64_t event, uint64_t op,
                       uint64_t *pos);
int hbref_event_wait(hbref *r, uint64_t thread, uint64_t stream, uint64_t event, uint64_t op,
                     uint64_t *pos);
int hbref_sync_stream(hbref *r, uint64_t thread, uint64_t stream);
int hbref_sync_event(hbref *r, uint64_t thread, uint64_t event);
int hbref_sync_context(hbref *r, uint64_t thread, uint64_t ctx);
int hbref_sync_all(hbref *r, uint64_t thread);
int hbref_track(hbref *r, uint64_t handle, uint64_t lo, uint64_t hi);
int hbref_untrack(hbref *r, uint64_t handle);
int hbref_access(hbref *r, uint64_t stream, uint64_t handle, dls_hb_access_kind kind);

/* Questions; stream == NULL asks for host thread `thread` itself. Conflicts come in no
 * particular order; waits and frontiers in the order hb.h specifies. */
int hbref_conflicts(hbref *r, uint64_t thread, const uint64_t *stream, uint64_t lo, uint64_t hi,
                    dls_hb_access_kind kind, dls_hb_conflict *out, size_t cap, size_t *n);
int hbref_waits(hbref *r, uint64_t thread, const uint64_t *stream, uint64_t lo, uint64_t hi,
                dls_hb_access_kind kind, dls_hb_epoch *out, size_t cap, size_t *n);
int hbref_frontier(hbref *r, uint64_t thread, dls_hb_epoch *out, size_t cap, size_t *n);
int hbref_frontier_waits(hbref *r, uint64_t thread, uint64_t stream, const dls_hb_epoch *f,
                         size_t nf, dls_hb_epoch *out, size_t cap, size_t *n);
int hbref_ordered(hbref *r, uint64_t thread, uint64_t stream, uint64_t x, uint64_t pos,
                  int *ordered);

#endif
