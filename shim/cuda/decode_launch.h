/* The reader of a multi-device cooperative launch (decode.h). */
#ifndef DLS_CUDA_DECODE_LAUNCH_H
#define DLS_CUDA_DECODE_LAUNCH_H

#include "decode_common.h"

/* The launch of device index of a multi-device cooperative launch
 * (list[0..n)), its argument words in scratch: returns 1, or 0 when there is no such device. */
int dls_cuda_decode_launch_devices(dls_cuda_op *op, const CUpti_CallbackData *cb, unsigned index,
                                   const CUDA_LAUNCH_PARAMS *list, unsigned n, dls_cuda_scratch *scratch);

#endif
