/* The CUPTI callback ids the observer enables, the rows of calls.def. Enabling a whole domain
 * would make every CUDA call pay for a callback; only these ids are enabled, one by one. */
#ifndef DLS_CUDA_CBIDS_H
#define DLS_CUDA_CBIDS_H

#include "../common/export.h"
#include "cuda_api.h"

#include <stddef.h>

/* Driver-domain ids: every call the decoders handle, plus the invalidating calls (calls.def's
 * driver rows, in its order). *n = count. */
const CUpti_CallbackId *dls_cuda_driver_cbids(size_t *n);

/* Runtime-domain ids whose calls annotate the driver operations beneath them (calls.def's
 * RUNTIME rows). *n = count. */
const CUpti_CallbackId *dls_cuda_runtime_cbids(size_t *n);

/* What the observer does with a driver id (its row's class in calls.def): the ENTER of
 * STREAM_WORK ids (work that only enqueues on a stream and waits for nothing) is
 * delivered only while the policy watches some memory (dls_cuda_receivers.watching); INVALIDATION
 * ids make cached handles stale (module or library unload, context destroy or reset); RANGES ids
 * may free or unmap memory, which ages the allocation ranges kept (ranges.h); MADE ids
 * (calls that make a stream, an event or an executable graph, known only at EXIT) are delivered
 * at EXIT only: their ENTER has nothing to tell; ALWAYS ids are delivered at ENTER and EXIT;
 * UNHANDLED (0) ids are not enabled. */
typedef enum {
    DLS_CBID_UNHANDLED = 0,
    DLS_CBID_ALWAYS,
    DLS_CBID_STREAM_WORK,
    DLS_CBID_INVALIDATION,
    DLS_CBID_RANGES,
    DLS_CBID_MADE,
} dls_cuda_cbid_class;

/* The class of every driver id below CUPTI_DRIVER_TRACE_CBID_SIZE. */
extern const unsigned char dls_cuda_cbid_classes[CUPTI_DRIVER_TRACE_CBID_SIZE] DLS_HIDDEN;

/* The class of driver id cbid. */
static inline dls_cuda_cbid_class dls_cuda_cbid_class_of(CUpti_CallbackId cbid)
{
    return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? (dls_cuda_cbid_class)dls_cuda_cbid_classes[cbid] : DLS_CBID_UNHANDLED;
}

#endif
