/* A brute-force reference model of the happens-before engine, for the differential test.
 *
 * It keeps the explicit happens-before graph: one node per operation, with edges from the
 * previous operation of its stream, from every operation its enqueuing thread has synchronized
 * with, from the legacy-stream rules and from the event record or capture an event wait waits
 * for; each node stores its full ancestor set (reachability), and an event or capture the
 * union of the ancestor sets it covers. Every question of shim/hb/hb.h is answered from the
 * definitions written there, with no clocks, no copy-on-write sharing and no legacy-stream
 * bookkeeping. Host order ("Host order" in hb.h) is taken literally: each node keeps its end
 * stamp and each stream the nodes of its last DLS_HB_POINTS calls; the legacy rules and event
 * records look for the last node whose end is below the call's begin; an event keeps its last
 * two captures, and a wait that may precede the latest is ordered after their intersection. Small fixed limits (see HBREF_*); exceeding one returns ENOSPC. Return codes and
 * output formats follow hb.h. */
#ifndef HB_REFERENCE_H
#define HB_REFERENCE_H

#include "hb/hb.h"

#define HBREF_MAX_OPS 640
#define HBREF_MAX_STREAMS 32
#define HBREF_MAX_THREADS 16
#define HBREF_MAX_EVENTS 32

typedef struct hbref hbref;

/* Creates an empty model (NULL when memory is short); hbref_destroy frees it. */
hbref *hbref_create(void);
void hbref_destroy(hbref *r);

/* Model updates, as the dls_hb_* functions of the same names. */
int hbref_stream_add(hbref *r, uint64_t stream, uint64_t ctx, dls_hb_stream_kind kind);
int hbref_stream_remove(hbref *r, uint64_t stream);
void hbref_thread_remove(hbref *r, uint64_t thread);
void hbref_event_remove(hbref *r, uint64_t event);
int hbref_op(hbref *r, uint64_t thread, uint64_t stream, dls_hb_when when, uint64_t *pos);
int hbref_op_again(hbref *r, uint64_t thread, uint64_t stream, uint64_t n, uint64_t end, uint64_t *pos);
int hbref_event_record(hbref *r, uint64_t thread, uint64_t stream, uint64_t event, dls_hb_when when, uint64_t *pos);
int hbref_event_wait(hbref *r, uint64_t thread, uint64_t stream, uint64_t event, dls_hb_when when, uint64_t *pos);
int hbref_sync_stream(hbref *r, uint64_t thread, uint64_t stream);
int hbref_sync_event(hbref *r, uint64_t thread, uint64_t event);
int hbref_capture_stream(hbref *r, uint64_t event, uint64_t stream);
int hbref_capture_at(hbref *r, uint64_t event, uint64_t stream, uint64_t pos);
int hbref_capture_event(hbref *r, uint64_t event, uint64_t from);
int hbref_capture_context(hbref *r, uint64_t event, uint64_t ctx);
int hbref_capture_all(hbref *r, uint64_t event);
int hbref_capture_op(hbref *r, uint64_t event, uint64_t thread, uint64_t stream, uint64_t begin);

/* Questions, as the dls_hb_* functions of the same names; waits in the order hb.h specifies. */
uint64_t hbref_event_covers(hbref *r, uint64_t event, uint64_t stream);
int hbref_frontier_waits(hbref *r, uint64_t thread, uint64_t stream, const dls_hb_epoch *f, size_t nf,
                         dls_hb_epoch *out, size_t cap, size_t *n);
int hbref_ordered(hbref *r, uint64_t thread, uint64_t stream, uint64_t x, uint64_t pos, int *ordered);

#endif
