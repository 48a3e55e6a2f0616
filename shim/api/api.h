/* Internals of the public C API (shim/include/dlsync.h): stream values, producer exports,
 * versioned views of exported tensors, and the ordering that makes a tensor safe on a stream.
 * Every function returns a dlsync_status. */
#ifndef DLS_API_H
#define DLS_API_H

#include "../hooks/profiles.h"
#include "dlsync.h"

#include <stdint.h>

/* stream.c */

/* Checks an array-API stream value (see dlsync.h) and stores the driver handle it names in
 * *handle: CU_STREAM_LEGACY for 1, CU_STREAM_PER_THREAD for 2, the handle itself otherwise, 0
 * for -1. A handle must be pointer-aligned and known to the loaded CUDA driver. */
int dls_api_stream(intptr_t stream, uintptr_t *handle);

/* Checks that `mt` (versioned or not) is a tensor the shim can interpret: VERSION for a
 * versioned tensor of another major version, TENSOR for a malformed one. */
int dls_api_check(void *mt, int versioned);

/* Makes the checked tensor `mt` safe on the stream with driver handle `handle`: through the
 * policy when it runs (registering a tensor the shim has not seen), else by synchronizing the
 * calling thread's current context. */
int dls_api_order(void *mt, int versioned, uintptr_t handle);

/* producer.c */

/* A producer's export, found by framework or symbol name. */
typedef struct {
    const dls_profile *row;
    void *real; /* the framework's function */
    void *stub; /* the shim's wrapper of it (calling it records the export) */
} dls_api_producer;

/* Finds the export called `name` (see dlsync.h for the rules): NO_PRODUCER or UNSUPPORTED when
 * there is none that can be called. */
int dls_api_find_producer(const char *name, dls_api_producer *out);

/* Calls p's export on `object` (through the shim's wrapper when `wrapped`, so it is recorded and
 * announced like a program's call; the thread's consumer stream is cleared meanwhile) and
 * stores the tensor in *mt. PRODUCER when the export fails. */
int dls_api_export(const dls_api_producer *p, void *object, int wrapped, void **mt);

/* tensor.c */

/* Fills *into from the producer's tensor `mt` as dlsync_to_dlpack_into documents. */
void dls_api_fill(DLManagedTensorVersioned *into, void *mt, int versioned);

/* Stores in *out a new versioned wrapper of the unversioned `mt` (MEMORY when none). */
int dls_api_wrap(DLManagedTensor *mt, DLManagedTensorVersioned **out);

/* Calls mt's deleter (when it has one). */
void dls_api_release(void *mt, int versioned);

#endif
