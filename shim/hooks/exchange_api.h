/* The DLPack C exchange API (DLPackExchangeAPI, DLPack 1.3), seen through its capsule.
 *
 * Frameworks publish a table of C functions in a capsule named "dlpack_exchange_api" on their
 * tensor type (paddle.Tensor and torch.Tensor's __dlpack_c_exchange_api__); consumers such as
 * tvm-ffi read it with PyCapsule_GetPointer and call the functions directly. When a hooked
 * caller reads that capsule (capsule.h), it gets dlsync's copy of the table instead:
 *   header                                   copied: version and prev_api unchanged (older
 *                                            tables down the prev_api chain are not wrapped)
 *   managed_tensor_allocator                 the framework's own (allocates, exchanges nothing)
 *   managed_tensor_from_py_object_no_sync    wrapped: a successful call is an export of *out
 *   managed_tensor_to_py_object_no_sync      wrapped: the call is an import of `tensor`
 *   dltensor_from_py_object_no_sync          wrapped: a successful call is a non-owning export
 *                                            of the caller's DLTensor (wrap.h, fill form)
 *   current_work_stream                      wrapped: a successful call is logged (work_stream:
 *                                            the stream the consumer is told to launch on)
 * A NULL field stays NULL. The exports and imports reach the policy like any other, so the NoSync
 * exchanges are checked or ordered in check and fix. The framework's own wrapped entry points
 * that the table's functions call (paddle's ToDLPackVersioned behind
 * managed_tensor_from_py_object_no_sync) pass straight through: each exchange is recorded once,
 * under the table's field. The framework is named after the object defining the original
 * functions. Only tables of major version 1 and minor version up to 3 are wrapped (a later minor
 * version may append fields this copy would not have); up to DLS_EXCHANGE_APIS distinct tables
 * (one warning past that, or for another version; the original is handed out). Layout: the
 * DLPack 1.3 dlpack.h that tvm-ffi 0.1.15 ships (include/dlpack/dlpack.h, which paddle 3.3's
 * table also reports), declared here under dlsync's own names so that a system dlpack.h of any
 * version can be included beside it. */
#ifndef DLS_EXCHANGE_API_H
#define DLS_EXCHANGE_API_H

#include "dlsync_dlpack.h"

#define DLS_EXCHANGE_APIS 4
#define DLS_EXCHANGE_API_MAJOR 1
#define DLS_EXCHANGE_API_MINOR 3

typedef struct dls_dlpack_api_header {
    DLPackVersion version;
    struct dls_dlpack_api_header *prev_api;
} dls_dlpack_api_header;

typedef struct {
    dls_dlpack_api_header header;
    int (*managed_tensor_allocator)(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                                    void (*set_error)(void *error_ctx, const char *kind, const char *message));
    int (*managed_tensor_from_py_object_no_sync)(void *py_object, DLManagedTensorVersioned **out);
    int (*managed_tensor_to_py_object_no_sync)(DLManagedTensorVersioned *tensor, void **out_py_object);
    int (*dltensor_from_py_object_no_sync)(void *py_object, DLTensor *out);
    int (*current_work_stream)(DLDeviceType device_type, int32_t device_id, void **out_current_stream);
} dls_dlpack_exchange_api;

/* dlsync's table standing for `api` (made on first use; the same pointer for the same table), or
 * api itself when it cannot be wrapped. Never NULL when api is not NULL. */
const dls_dlpack_exchange_api *dls_exchange_api_wrap(const dls_dlpack_exchange_api *api);

#endif
