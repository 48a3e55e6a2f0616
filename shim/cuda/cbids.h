/* The CUPTI callback ids the observer enables. Enabling a whole domain would make every CUDA
 * call pay for a callback; only these ids are enabled, one by one. */
#ifndef DLS_CUDA_CBIDS_H
#define DLS_CUDA_CBIDS_H

#include "cuda_api.h"

#include <stddef.h>

typedef struct {
    CUpti_CallbackId cbid;
    int launch; /* 1: a kernel launch form, switched by dls_cuda_enable_launch_callbacks */
} dls_cuda_cbid;

/* Driver-domain ids: every call the decoders handle, plus the invalidating calls. *n = count. */
const dls_cuda_cbid *dls_cuda_driver_cbids(size_t *n);

/* Runtime-domain ids whose calls annotate the driver operations beneath them. *n = count. */
const dls_cuda_cbid *dls_cuda_runtime_cbids(size_t *n);

/* 1 for a driver call after which cached handles may be reused (module or library unload,
 * context destroy or reset), else 0. */
int dls_cuda_cbid_is_invalidation(CUpti_CallbackId cbid);

#endif
