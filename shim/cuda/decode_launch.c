/* Decoding of every kernel launch form of the driver API (see decode.h). */
#include "decode.h"

#include "kparams.h"

#define P(type) ((const type##_params *)cb->functionParams)

/* Fills the launch of f on stream h with its argument words. */
static void launch(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUpti_CallbackData *cb, CUfunction f, CUstream h,
                   int per_thread, void **kernel_params, void **extra)
{
    op->kind = DLS_OP_LAUNCH;
    op->flags |= DLS_OPF_ASYNC;
    dls_cuda_decode_stream(op, h, per_thread, cb);
    op->words = scratch->words;
    if (dls_cuda_kernel_words(f, kernel_params, extra, scratch->words, DLS_SCRATCH_WORDS, &op->nwords))
        op->flags |= DLS_OPF_WORDS_EXACT;
    else
        op->flags |= DLS_OPF_CONSERVATIVE;
}

/* Legacy launches (cuLaunch, cuLaunchGrid*): arguments were set with cuParamSet*, unseen here. */
static void legacy_launch(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h)
{
    op->kind = DLS_OP_LAUNCH;
    op->flags |= DLS_OPF_ASYNC | DLS_OPF_CONSERVATIVE;
    dls_cuda_decode_stream(op, h, 0, cb);
}

/* One case per cbid, each reading its own parameter struct. */
#define KERNEL(name, ptsz, extra_)                                                                  \
    case CUPTI_DRIVER_TRACE_CBID_##name:                                                            \
        if (index)                                                                                  \
            return 0;                                                                               \
        launch(op, scratch, cb, P(name)->f, P(name)->hStream, ptsz, P(name)->kernelParams, extra_); \
        return 1;
#define KERNEL_EX(name, ptsz)                                                                        \
    case CUPTI_DRIVER_TRACE_CBID_##name:                                                             \
        if (index)                                                                                   \
            return 0;                                                                                \
        launch(op, scratch, cb, P(name)->f, P(name)->config ? P(name)->config->hStream : NULL, ptsz, \
               P(name)->kernelParams, P(name)->extra);                                               \
        return 1;

int dls_cuda_decode_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                           dls_cuda_scratch *scratch)
{
    switch (cbid) {
        KERNEL(cuLaunchKernel, 0, P(cuLaunchKernel)->extra)
        KERNEL(cuLaunchKernel_ptsz, 1, P(cuLaunchKernel_ptsz)->extra)
        KERNEL(cuLaunchCooperativeKernel, 0, NULL)
        KERNEL(cuLaunchCooperativeKernel_ptsz, 1, NULL)
        KERNEL_EX(cuLaunchKernelEx, 0)
        KERNEL_EX(cuLaunchKernelEx_ptsz, 1)
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice: {
        const cuLaunchCooperativeKernelMultiDevice_params *p = P(cuLaunchCooperativeKernelMultiDevice);
        if (!p->launchParamsList || index >= p->numDevices)
            return 0;
        const CUDA_LAUNCH_PARAMS *l = &p->launchParamsList[index];
        launch(op, scratch, cb, l->function, l->hStream, 0, l->kernelParams, NULL);
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
