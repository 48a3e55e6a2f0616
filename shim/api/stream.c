/* Stream values of the public API and the ordering that makes a tensor safe on a stream. */
#include "stream.h"

#include "../common/config.h"
#include "../cuda/drv.h"
#include "../hooks/exchange.h"
#include "../hooks/extent.h"
#include "../hooks/wrap.h"
#include "../policy/policy.h"

#include <errno.h>

/* The rows a tensor the shim has not seen is registered under (it reaches the shim through the
 * API, not through a wrapped export). */
static const dls_profile g_api_rows[2] = {
    {.symbol = "dlsync_make_safe_unversioned",
     .framework = "unknown",
     .role = DLS_ROLE_EXPORT,
     .where = DLS_WHERE_ARG,
     .versioned = 0,
     .display = "dlsync_make_safe_unversioned (a tensor from an unwrapped producer)"},
    {.symbol = "dlsync_make_safe",
     .framework = "unknown",
     .role = DLS_ROLE_EXPORT,
     .where = DLS_WHERE_ARG,
     .versioned = 1,
     .display = "dlsync_make_safe (a tensor from an unwrapped producer)"},
};

int dls_api_stream(intptr_t stream, uintptr_t *handle)
{
    if (stream == 0)
        return DLSYNC_ERR_STREAM_ZERO;
    if (stream == DLSYNC_STREAM_NO_SYNC) {
        *handle = 0;
        return DLSYNC_OK;
    }
    if (stream < 0)
        return DLSYNC_ERR_STREAM;
    if (stream == DLSYNC_STREAM_LEGACY || stream == DLSYNC_STREAM_PER_THREAD) {
        *handle = stream == DLSYNC_STREAM_LEGACY ? (uintptr_t)CU_STREAM_LEGACY : (uintptr_t)CU_STREAM_PER_THREAD;
        return DLSYNC_OK;
    }
    /* A handle points to a driver object: anything unaligned is not one, and the driver is
     * asked before the shim hands the value to any other driver call. */
    if ((uintptr_t)stream % sizeof(void *) != 0)
        return DLSYNC_ERR_STREAM;
    CUcontext ctx = NULL;
    if (dls_drv_stream_get_ctx((CUstream)stream, &ctx) != CUDA_SUCCESS)
        return DLSYNC_ERR_STREAM;
    *handle = (uintptr_t)stream;
    return DLSYNC_OK;
}

int dls_api_check(void *mt, int versioned)
{
    dls_managed_view v;
    dls_extent ext;
    if (dls_managed_view_of(mt, versioned, &v))
        return versioned ? DLSYNC_ERR_VERSION : DLSYNC_ERR_TENSOR;
    if (dls_tensor_check(v.tensor, v.flags, &ext))
        return DLSYNC_ERR_TENSOR;
    return DLSYNC_OK;
}

/* Without a model: everything queued in the calling thread's context and on every device the
 * program uses completes before the consumer enqueues more (the producer may be on another
 * device). No context (CUDA unused) leaves nothing to wait for. */
static int synchronize(void)
{
    CUresult r = dls_drv_synchronize_devices();
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_INVALID_CONTEXT)
        return DLSYNC_OK;
    return DLSYNC_ERR_CUDA;
}

int dls_api_order(void *mt, int versioned, uintptr_t handle)
{
    dls_mode mode = dls_config_get()->mode;
    if (mode != DLS_MODE_CHECK && mode != DLS_MODE_FIX)
        return synchronize();
    if (dls_exchange_find_tensor(mt, NULL) != 0)
        dls_wrap_export(&g_api_rows[versioned ? 1 : 0], "", mt);
    switch (dls_policy_make_safe(mt, handle)) {
    case 0:
        return DLSYNC_OK;
    case EIO:
        return DLSYNC_ERR_CUDA;
    case EINVAL:
        return DLSYNC_ERR_STREAM;
    default: /* not tracked (no deleter, no memory) or no model: the fallback still orders it */
        return synchronize();
    }
}
