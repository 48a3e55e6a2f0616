/* The lifetime decoder (see decode.h, dls_cuda_decode_lifetime): calls.def's STREAM_CREATE and
 * STREAM_DESTROY rows. Each case reads its call's parameters as `p` (calls.def's F). */
#include "decode_life.h"

#include "decode_sync.h"

#define CALL(name, class)
#define STREAM_CREATE(name, class, flags, current)                          \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                  \
        const name##_params *p = cb->functionParams;                        \
        *kind = DLS_OP_STREAM_CREATE;                                       \
        (void)dls_cuda_decode_created(cb, p->phStream, flags, current, &s); \
        return 1;                                                           \
    }
#define STREAM_DESTROY(name, class)                                \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                         \
        const name##_params *p = cb->functionParams;               \
        *kind = DLS_OP_STREAM_DESTROY;                             \
        dls_cuda_decode_destroyed(cb, p->hStream, &s);             \
        return !s.resolved; /* else a model may hold the stream */ \
    }

int dls_cuda_decode_lifetime(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_op_kind *kind)
{
    dls_cuda_stream s;
    if (!cb->functionParams)
        return 0;
    switch (cbid) {
#include "calls.def"
    default:
        return 0;
    }
}
