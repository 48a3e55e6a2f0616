/* Interpreting log records for `dlsync report`: matching imports to the exports they came from,
 * and formatting the values the summary and the timeline both print (devices, ids, streams). */
#ifndef DLT_RECORDS_H
#define DLT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "logread.h"

#define DLT_NO_RECORD SIZE_MAX

/* Returns a malloc'd array of set->n indices: for each `import` record, the index of the
 * `export` record with the same pid and xid (the first such export), else DLT_NO_RECORD; for
 * every other record DLT_NO_RECORD. NULL when memory runs out (or the set is empty). */
size_t *dlt_match_exchanges(const dlt_log_set *set);

/* Writes a scalar JSON value (string, integer, other number, bool) of `key` in obj as text
 * into buf; "?" when absent or not a scalar. Returns buf. */
const char *dlt_scalar_text(const dlt_json_value *obj, const char *key, char *buf, size_t n);

/* Writes "type:id" for a log device object ({"type": "cuda", "id": 0}) into buf, "?" parts for
 * what is missing. Returns buf. */
const char *dlt_device_text(const dlt_json_value *device, char *buf, size_t n);

/* Writes a short description of a log stream object ("stream 3 (non-blocking, dev 0)") into
 * buf; "host" when stream is NULL or JSON null. Returns buf. */
const char *dlt_stream_text(const dlt_json_value *stream, char *buf, size_t n);

#endif
