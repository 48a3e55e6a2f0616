/* What the HTML report draws (lanes.h) for a race and for the orderings dlsync injected into
 * one exchange, built from the log's records.
 *
 * A race: the host lane (its exchange's export, import and release, on the threads that made
 * them), one lane per stream involved (the producer's, the consumer's, the stream the import
 * named, the streams of orderings injected into the same exchange), the two accesses in enqueue
 * order (a one-way race's producer access before the export and the consumer's after the
 * import; a two-way race's pending use before the later access; a release-reuse race's pending
 * use before the release), the missing ordering between them, and the fix: an event recorded
 * after the earlier access and waited for before the later one, or the host waiting for the
 * earlier stream before a host access; orderings injected into the same exchange are drawn too,
 * as below. Marks are placed by the records' times, the accesses
 * beside the records they come before or after (the race record's time is when the later
 * access was enqueued).
 *
 * Injected orderings: the exchange's export, import and release on the host lane, and each
 * ordering as an event recorded on the stream waited for and a wait on the stream (or the host)
 * made to wait, in the order the records were written. */
#ifndef DLT_SCENES_H
#define DLT_SCENES_H

#include <stddef.h>

#include "lanes.h"
#include "logread.h"

/* The records of one exchange (a pid and an xid) a scene shows: indices into the set. */
typedef struct {
    size_t export_rec, import_rec, release_rec; /* DLT_NO_RECORD (records.h) when absent */
    size_t injects[16];                         /* its inject records, in log order */
    size_t ninjects;
} dlt_exchange_recs;

/* Finds the records of the exchange (pid, xid) of record r in set. */
void dlt_exchange_find(const dlt_log_set *set, const dlt_json_value *r, dlt_exchange_recs *x);

/* Builds the scene of the race record set->recs[race] (zeroes *s first). */
void dlt_scene_race(const dlt_log_set *set, size_t race, dlt_scene *s);

/* Builds the scene of the orderings injected into the exchange x (zeroes *s first). */
void dlt_scene_injects(const dlt_log_set *set, const dlt_exchange_recs *x, dlt_scene *s);

/* Writes a log stream object as the text report names it: "stream 2 (non-blocking,
 * 0x55d5322436f0, device 0)", "the host" for null. Returns buf. */
const char *dlt_scene_stream_text(const dlt_json_value *stream, char *buf, size_t n);

#endif
