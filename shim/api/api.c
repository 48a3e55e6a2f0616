/* The public functions of dlsync.h. */
#include "producer.h"
#include "stream.h"
#include "tensor.h"

#include "../common/export.h"
#include "../policy/policy.h"

#include <errno.h>

DLS_EXPORT const char *dlsync_status_string(int status)
{
    switch (status) {
    case DLSYNC_OK:
        return "success";
    case DLSYNC_ERR_ARGUMENT:
        return "a required argument is NULL or out of range";
    case DLSYNC_ERR_STREAM_ZERO:
        return "stream 0 is ambiguous: pass 1 (legacy default) or 2 (per-thread default)";
    case DLSYNC_ERR_STREAM:
        return "not a stream: expected -1, 1, 2 or a CUDA stream handle";
    case DLSYNC_ERR_NO_PRODUCER:
        return "no profiled export of that name is loaded";
    case DLSYNC_ERR_UNSUPPORTED:
        return "the producer's export needs arguments dlsync cannot supply";
    case DLSYNC_ERR_PRODUCER:
        return "the producer's export failed";
    case DLSYNC_ERR_VERSION:
        return "unsupported DLPack major version";
    case DLSYNC_ERR_TENSOR:
        return "the tensor cannot be interpreted";
    case DLSYNC_ERR_CUDA:
        return "a CUDA call needed for the ordering failed";
    case DLSYNC_ERR_MEMORY:
        return "out of memory";
    case DLSYNC_ERR_NOT_FOUND:
        return "no such record";
    default:
        return "unknown dlsync status";
    }
}

/* The common part of both export forms: the producer's tensor in *mt, checked and ordered on
 * `stream`; on failure nothing is left to release. */
static int export_safe(const char *producer, void *object, intptr_t stream, void **mt, int *versioned)
{
    uintptr_t handle;
    dls_api_producer p;
    if (!producer || !object)
        return DLSYNC_ERR_ARGUMENT;
    int rc = dls_api_stream(stream, &handle);
    if (!rc)
        rc = dls_api_find_producer(producer, &p);
    if (!rc)
        rc = dls_api_export(&p, object, 1, mt);
    if (rc)
        return rc;
    *versioned = p.row->versioned;
    rc = dls_api_check(*mt, *versioned);
    if (!rc && stream != DLSYNC_STREAM_NO_SYNC)
        rc = dls_api_order(*mt, *versioned, handle);
    if (rc)
        dls_api_release(*mt, *versioned);
    return rc;
}

DLS_EXPORT int dlsync_to_dlpack(const char *producer, void *object, intptr_t stream, DLManagedTensorVersioned **out)
{
    void *mt;
    int versioned;
    if (!out)
        return DLSYNC_ERR_ARGUMENT;
    int rc = export_safe(producer, object, stream, &mt, &versioned);
    if (rc)
        return rc;
    if (versioned) {
        *out = mt;
        return DLSYNC_OK;
    }
    rc = dls_api_wrap(mt, out);
    if (rc)
        dls_api_release(mt, 0);
    return rc;
}

DLS_EXPORT int dlsync_to_dlpack_into(const char *producer, void *object, intptr_t stream,
                                     DLManagedTensorVersioned *tensor)
{
    void *mt;
    int versioned;
    if (!tensor)
        return DLSYNC_ERR_ARGUMENT;
    int rc = export_safe(producer, object, stream, &mt, &versioned);
    if (!rc)
        dls_api_fill(tensor, mt, versioned);
    return rc;
}

DLS_EXPORT int dlsync_device(const char *producer, void *object, DLDevice *device)
{
    dls_api_producer p;
    void *mt;
    if (!producer || !object || !device)
        return DLSYNC_ERR_ARGUMENT;
    int rc = dls_api_find_producer(producer, &p);
    if (!rc)
        rc = dls_api_export(&p, object, 0, &mt);
    if (rc)
        return rc;
    if (p.row->versioned && ((DLManagedTensorVersioned *)mt)->version.major != DLSYNC_DLPACK_MAJOR)
        rc = DLSYNC_ERR_VERSION;
    else
        *device = p.row->versioned ? ((DLManagedTensorVersioned *)mt)->dl_tensor.device
                                   : ((DLManagedTensor *)mt)->dl_tensor.device;
    dls_api_release(mt, p.row->versioned);
    return rc;
}

/* dlsync_make_safe and dlsync_make_safe_unversioned. */
static int make_safe(void *mt, int versioned, intptr_t stream)
{
    uintptr_t handle;
    if (!mt)
        return DLSYNC_ERR_ARGUMENT;
    int rc = dls_api_stream(stream, &handle);
    if (!rc)
        rc = dls_api_check(mt, versioned);
    if (!rc && stream != DLSYNC_STREAM_NO_SYNC)
        rc = dls_api_order(mt, versioned, handle);
    return rc;
}

DLS_EXPORT int dlsync_make_safe(DLManagedTensorVersioned *tensor, intptr_t stream)
{
    return make_safe(tensor, 1, stream);
}

DLS_EXPORT int dlsync_make_safe_unversioned(DLManagedTensor *tensor, intptr_t stream)
{
    return make_safe(tensor, 0, stream);
}

DLS_EXPORT int dlsync_current_work_stream(DLDeviceType device_type, int32_t device_id, void **out_current_stream)
{
    if (!out_current_stream || device_id < 0)
        return -1;
    if (device_type == kDLCPU) {
        *out_current_stream = NULL;
        return 0;
    }
    return dls_policy_current_work_stream(device_type, device_id, out_current_stream) == EINVAL ? -1 : 0;
}

DLS_EXPORT int dlsync_set_consumer_stream(intptr_t stream)
{
    uintptr_t handle;
    int rc = dls_api_stream(stream, &handle);
    if (rc)
        return rc;
    if (stream == DLSYNC_STREAM_NO_SYNC)
        dls_policy_clear_consumer_stream();
    else
        dls_policy_set_consumer_stream(handle);
    return DLSYNC_OK;
}

DLS_EXPORT void dlsync_clear_consumer_stream(void)
{
    dls_policy_clear_consumer_stream();
}
