/* Decoding of the kernel launch forms the work lane does not decode (decode_work.h): the
 * multi-device cooperative launch, one operation per device, and the legacy cuLaunch* forms. */
#include "decode.h"
#include "decode_work.h"

#define P(type) ((const type##_params *)cb->functionParams)

/* Legacy launches (cuLaunch, cuLaunchGrid*): arguments were set with cuParamSet*, unseen here. */
static void legacy_launch(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h)
{
    op->kind = DLS_OP_LAUNCH;
    op->flags |= DLS_OPF_ASYNC | DLS_OPF_CONSERVATIVE;
    dls_cuda_decode_stream(op, h, 0, cb);
}

int dls_cuda_decode_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                           dls_cuda_scratch *scratch)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice: {
        const cuLaunchCooperativeKernelMultiDevice_params *p = P(cuLaunchCooperativeKernelMultiDevice);
        if (!p->launchParamsList || index >= p->numDevices)
            return 0;
        const CUDA_LAUNCH_PARAMS *l = &p->launchParamsList[index];
        dls_cuda_work w;
        dls_cuda_work_init(&w);
        dls_cuda_work_launch(&w, l->hStream, 0, l->function, l->kernelParams, NULL, scratch->words, DLS_SCRATCH_WORDS);
        dls_cuda_op_from_work(op, &w, cb, scratch);
        return 1;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
        if (index)
            return 0;
        legacy_launch(op, cb, NULL);
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
        if (index)
            return 0;
        legacy_launch(op, cb, P(cuLaunchGridAsync)->hStream);
        return 1;
    default:
        return -1;
    }
}
