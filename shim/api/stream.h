/* The public C API's stream values (shim/include/dlsync.h): checking them, checking a tensor,
 * and the ordering that makes a tensor safe on a stream. Every function returns a
 * dlsync_status. */
#ifndef DLS_API_STREAM_H
#define DLS_API_STREAM_H

#include "dlsync.h"

#include <stdint.h>

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

#endif
