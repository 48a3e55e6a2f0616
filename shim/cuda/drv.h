/* The shim's own CUDA driver calls: function pointers resolved from the libcuda already in the
 * process, each call made under a thread-local guard.
 *
 * Nothing here loads CUDA: the table is resolved with dlopen("libcuda.so.1", RTLD_NOLOAD), so in
 * a process without CUDA every call returns CUDA_ERROR_NOT_INITIALIZED and does nothing. While a
 * guarded call runs, dls_drv_in_shim() is true on that thread, and the CUPTI callback ignores
 * whatever the call reports: the shim's own event records and waits are never seen as user
 * operations (the policy updates its model for them directly). Every function is thread-safe. */
#ifndef DLS_DRV_H
#define DLS_DRV_H

#include "cuda_api.h"

/* The driver entry points the shim uses (field names are not the cu* names on purpose: cuda.h
 * defines some of those as macros). Any pointer may be NULL when the driver lacks it. */
typedef struct {
    CUresult (*stream_get_id)(CUstream, unsigned long long *);
    CUresult (*stream_get_ctx)(CUstream, CUcontext *);
    CUresult (*stream_get_flags)(CUstream, unsigned int *);
    CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*stream_wait_event)(CUstream, CUevent, unsigned int);
    CUresult (*stream_synchronize)(CUstream);
    CUresult (*stream_query)(CUstream);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_push_current)(CUcontext);
    CUresult (*ctx_pop_current)(CUcontext *);
    CUresult (*ctx_get_id)(CUcontext, unsigned long long *);
    CUresult (*ctx_get_device)(CUdevice *);
    CUresult (*ctx_synchronize)(void);
    CUresult (*device_get_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_ctx_get_state)(CUdevice, unsigned int *, int *);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*primary_ctx_release)(CUdevice);
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_destroy)(CUevent);
    CUresult (*event_query)(CUevent);
    CUresult (*event_synchronize)(CUevent);
    CUresult (*pointer_get_attribute)(void *, CUpointer_attribute, CUdeviceptr);
    CUresult (*func_get_param_info)(CUfunction, size_t, size_t *, size_t *);
    CUresult (*kernel_get_param_info)(CUkernel, size_t, size_t *, size_t *);
} dls_drv_table;

/* The resolved table, or NULL while no libcuda is loaded in the process (retried on each call
 * until it is). */
const dls_drv_table *dls_drv(void);

/* 1 while the calling thread is inside one of the guarded calls below, else 0. */
int dls_drv_in_shim(void);

/* Guarded calls: each returns the driver's result, or CUDA_ERROR_NOT_INITIALIZED when libcuda
 * is not loaded or lacks the entry point. Same meaning as the cu* function named. */
CUresult dls_drv_stream_get_id(CUstream s, unsigned long long *id);             /* cuStreamGetId */
CUresult dls_drv_stream_get_ctx(CUstream s, CUcontext *ctx);                    /* cuStreamGetCtx */
CUresult dls_drv_stream_get_flags(CUstream s, unsigned int *flags);             /* cuStreamGetFlags */
CUresult dls_drv_stream_is_capturing(CUstream s, CUstreamCaptureStatus *st);    /* cuStreamIsCapturing */
CUresult dls_drv_stream_wait_event(CUstream s, CUevent e, unsigned int flags);  /* cuStreamWaitEvent */
CUresult dls_drv_stream_synchronize(CUstream s);                                /* cuStreamSynchronize */
CUresult dls_drv_stream_query(CUstream s);                                      /* cuStreamQuery */
CUresult dls_drv_ctx_get_current(CUcontext *ctx);                               /* cuCtxGetCurrent */
CUresult dls_drv_ctx_push_current(CUcontext ctx);                               /* cuCtxPushCurrent_v2 */
CUresult dls_drv_ctx_pop_current(CUcontext *ctx);                               /* cuCtxPopCurrent_v2 */
CUresult dls_drv_ctx_get_id(CUcontext ctx, unsigned long long *id);             /* cuCtxGetId */
CUresult dls_drv_ctx_get_device(CUdevice *dev);                                 /* cuCtxGetDevice */
CUresult dls_drv_ctx_synchronize(void);                                         /* cuCtxSynchronize */
CUresult dls_drv_event_create(CUevent *e, unsigned int flags);                  /* cuEventCreate */
CUresult dls_drv_event_record(CUevent e, CUstream s);                           /* cuEventRecord */
CUresult dls_drv_event_destroy(CUevent e);                                      /* cuEventDestroy_v2 */
CUresult dls_drv_event_query(CUevent e);                                        /* cuEventQuery */
CUresult dls_drv_event_synchronize(CUevent e);                                  /* cuEventSynchronize */
CUresult dls_drv_pointer_get_attribute(void *data, CUpointer_attribute a, CUdeviceptr p); /* cuPointerGetAttribute */
CUresult dls_drv_func_get_param_info(CUfunction f, size_t i, size_t *off, size_t *size);  /* cuFuncGetParamInfo */
CUresult dls_drv_kernel_get_param_info(CUkernel k, size_t i, size_t *off, size_t *size);  /* cuKernelGetParamInfo */

/* Makes `ctx` current on the calling thread for the shim's next calls (cuCtxPushCurrent), unless
 * ctx is NULL or already current. An event must be created and recorded in the context of its
 * stream, and the legacy and per-thread handles name the current context's streams, so the shim
 * enters a stream's context before such calls. Returns CUDA_SUCCESS with *pushed = 1 when a
 * context was pushed (dls_drv_ctx_leave pops it), 0 when none was; or the driver's error, with
 * nothing pushed. */
CUresult dls_drv_ctx_enter(CUcontext ctx, int *pushed);

/* Undoes dls_drv_ctx_enter: pops the context it pushed, if it pushed one. */
void dls_drv_ctx_leave(int pushed);

/* Synchronizes the calling thread's current context and the primary context of every device
 * whose primary context is active (one the program uses; an inactive one is never created), for
 * the fallbacks that cannot tell on which device the producer's work is. Returns CUDA_SUCCESS
 * (also when there is no context at all) or the first error. */
CUresult dls_drv_synchronize_devices(void);

/* Tests only: use `t` instead of the libcuda table (NULL returns to normal resolution). */
void dls_drv_set_table_for_tests(const dls_drv_table *t);

#endif
