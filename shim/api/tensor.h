/* The public C API's views of exported tensors (shim/include/dlsync.h): versioned views, and a
 * tensor's release. */
#ifndef DLS_API_TENSOR_H
#define DLS_API_TENSOR_H

#include "dlsync.h"

/* Fills *into from the producer's tensor `mt` as dlsync_to_dlpack_into documents. */
void dls_api_fill(DLManagedTensorVersioned *into, void *mt, int versioned);

/* Stores in *out a new versioned wrapper of the unversioned `mt` (MEMORY when none). */
int dls_api_wrap(DLManagedTensor *mt, DLManagedTensorVersioned **out);

/* Calls mt's deleter (when it has one). */
void dls_api_release(void *mt, int versioned);

#endif
