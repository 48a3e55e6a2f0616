/* rt.h: internal helpers of the simulated libcudart.so.13.
 *
 * The runtime is a thin layer over the simulated driver, as the real one is: each runtime call
 * is reported in the runtime domain and then calls driver functions, which report themselves.
 * Driver error codes become runtime codes unchanged (the codes the simulator produces have the
 * same numbers in both enums: 1, 2, 3, 101, 201, 400, 401, 500, 600, 719, 801, 900-908). */
#ifndef CUDASIM_RT_H
#define CUDASIM_RT_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>

#include "cudasim_hook.h"

#pragma GCC visibility push(hidden)

/* Makes the driver initialized and the calling thread's device's primary context current (the
 * runtime's lazy initialization). Returns cudaSuccess or the driver's error. */
cudaError_t dls_rt_ready(void);

/* Records err as the thread's last error (cudaGetLastError) unless it is success or
 * cudaErrorNotReady, and returns it. */
cudaError_t dls_rt_record(cudaError_t err);

#pragma GCC visibility pop

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define RT_PICK(plain, ptsz) ptsz
#else
#define RT_PICK(plain, ptsz) plain
#endif

#define RT_CAT_(a, b) a##b
#define RT_CAT(a, b) RT_CAT_(a, b)
#define RT_STR_(a) #a
#define RT_STR(a) RT_STR_(a)
/* The real params struct of runtime API `api` (a callback-id suffix such as cudaMalloc_v3020). */
#define RT_PARAMS(api) RT_CAT(api, _params)

/* The body of a simulated runtime function: reports ENTER, evaluates `expr` (a cudaError_t) after
 * lazy initialization unless a forced error is pending, records the error, reports EXIT. */
#define RT_CALL(api, params_ptr, symbol, expr)                                                                        \
    do {                                                                                                              \
        cudasim_call c_;                                                                                              \
        cudaError_t r_ =                                                                                              \
            (cudaError_t)cudasim_call_enter(&c_, CUPTI_CB_DOMAIN_RUNTIME_API, RT_CAT(CUPTI_RUNTIME_TRACE_CBID_, api), \
                                            RT_STR(api), (params_ptr), (symbol));                                     \
        if (r_ == cudaSuccess)                                                                                        \
            r_ = dls_rt_ready();                                                                                      \
        if (r_ == cudaSuccess)                                                                                        \
            r_ = (expr);                                                                                              \
        dls_rt_record(r_);                                                                                            \
        cudasim_call_exit(&c_, &r_);                                                                                  \
        return r_;                                                                                                    \
    } while (0)

#endif
