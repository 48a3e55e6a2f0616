/* cudasim_hook.h: the seam between the simulator's three libraries (not for tests).
 *
 * libcuda.so.1 owns all simulator state and exports these functions: libcudart.so.13 reports its
 * own API calls through cudasim_call_enter / cudasim_call_exit (so runtime and driver calls are
 * counted, failed and reported the same way), and libcupti.so.13 installs the callback hook that
 * turns reports into CUPTI callbacks. Every report carries the real CUPTI callback ids and data. */
#ifndef CUDASIM_HOOK_H
#define CUDASIM_HOOK_H

#include <stdint.h>
#include <cuda.h>
#include <cupti_callbacks.h>

/* Receives every report: `cbdata` is a CUpti_CallbackData for the API domains and a
 * CUpti_ResourceData for the resource domain. Called on the calling thread, with no simulator
 * lock held, so it may call CUDA itself (those calls are reported too). */
typedef void (*cudasim_hook_fn)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata);

/* Installs (or with NULL removes) the single hook. */
void cudasim_set_callback_hook(cudasim_hook_fn hook);

/* One API call in flight: filled by cudasim_call_enter, finished by cudasim_call_exit. */
typedef struct {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_CallbackData data;
    uint64_t correlation_data;
    uint32_t outer_call; /* the call this one was made inside, while tracing (trace.h) */
} cudasim_call;

/* Counts the call, reports ENTER with `params` (the real *_params struct of the function) and
 * `symbol` (kernel name for launches, else NULL), and returns a pending forced error for
 * `name` (cudasim_fail_next), or 0 when the call should proceed. `name` must be a string
 * constant. */
int cudasim_call_enter(cudasim_call *c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char *name,
                       const void *params, const char *symbol);

/* Reports EXIT with `retval` (a CUresult* for the driver, cudaError_t* for the runtime). */
void cudasim_call_exit(cudasim_call *c, void *retval);

/* Reports a resource-domain event (stream created / destroy starting, context created). */
void cudasim_report_resource(CUpti_CallbackId cbid, CUcontext ctx, CUstream stream);

/* The CUDA version the simulated driver reports (cuDriverGetVersion): CUDASIM_DRIVER_VERSION, by
 * default CUDA_VERSION of the headers. Reported to no one. */
int cudasim_driver_version(void);

/* The registered name of a simulated kernel (the runtime reports it as symbolName), or NULL. */
const char *cudasim_kernel_name(CUfunction f);

#endif
