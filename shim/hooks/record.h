/* The log records of the hooks layer: export, import, release, double_release, malformed
 * (keys in docs/log-format.md). Each function writes nothing when the log is off. */
#ifndef DLS_RECORD_H
#define DLS_RECORD_H

#include "exchange.h"
#include "extent.h"
#include "profiles.h"

#include <stdint.h>

/* An export, import or release (`ev`) of managed tensor mt (read through v, extent ext) with
 * exchange id xid, seen at profile row p whose real function lives in `lib`. `producer` names
 * the framework that exported it (NULL: unknown): a string that never changes while the process
 * lives (a profile row's framework), since records are told apart by its address. */
void dls_record_exchange(const char *ev, uint64_t xid, const dls_profile *p, const char *lib, const void *mt,
                         const dls_managed_view *v, const dls_extent *ext, const char *producer);

/* The release of live exchange x (its tensor still readable: before the producer's deleter). */
void dls_record_release(const dls_exchange *x);

/* A successful current_work_stream call of a DLPack C exchange API table (row p names it, its
 * real function lives in `lib`): the stream the producer works on for `device`, the one its
 * consumer is told to launch on (NULL: the legacy default stream, or none for the CPU). */
void dls_record_work_stream(const dls_profile *p, const char *lib, DLDevice device, const void *stream);

/* Input that was not interpreted and was passed on untouched. */
void dls_record_malformed(const dls_profile *p, const void *mt, const char *reason);

/* A second call of the shim's deleter for mt; xid 0 when the first release is not remembered. */
void dls_record_double_release(const void *mt, uint64_t xid);

#endif
