/* The DLPack C exchange API (DLPack 1.3's DLPackExchangeAPI), seen through its capsule.
 *
 * Frameworks publish a table of C functions in a capsule named "dlpack_exchange_api" (torch 2.x:
 * torch.Tensor.__dlpack_c_exchange_api__; paddle; tvm-ffi reads them). When a hooked caller reads
 * that capsule (PyCapsule_GetPointer, capsule.h), it gets dlsync's copy of the table instead,
 * whose fields are:
 *   header                                   copied (version, prev_api unchanged)
 *   managed_tensor_allocator                 the framework's own (allocates, exchanges nothing)
 *   managed_tensor_from_py_object_no_sync    wrapped: a successful call is an export of *out
 *   managed_tensor_to_py_object_no_sync      wrapped: the call is an import of `tensor`
 *   dltensor_from_py_object_no_sync          wrapped: a successful call is a non-owning export
 *                                            of the caller's DLTensor (wrap.h, fill form)
 *   current_work_stream                      the framework's own
 * The exports and imports reach the policy like any other, so the NoSync exchanges are checked
 * or ordered in check and fix. The framework is named after the object defining the original
 * functions. Up to DLS_EXCHANGE_APIS distinct tables are wrapped (one warning past that; the
 * original is handed out). Layout: torch 2.15's ATen/dlpack.h (DLPack 1.3), declared here under
 * dlsync's own names so that a system dlpack.h of any version can be included beside it. */
#ifndef DLS_EXCHANGE_API_H
#define DLS_EXCHANGE_API_H

#include "dlsync_dlpack.h"

#define DLS_EXCHANGE_APIS 4

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
