/* The CUPTI callback: turns driver-API callbacks into deliveries to the policy's receivers
 * (ops.h, dls_cuda_receivers), one lane per call.
 *
 * Driver domain: the authority. Each handled call is decoded and delivered at ENTER and at EXIT,
 * unless the calling thread is inside the shim's own guarded driver calls (drv.h) or already
 * delivering an operation. Runtime domain: annotation only. A thread-local frame remembers the
 * outermost runtime call in progress, and the driver operations made beneath it carry its name
 * and correlation id, so one runtime call and its driver call are one operation. With
 * DLSYNC_DEBUG_OPS=1 every delivered op is also written to stderr as "dlsync: " followed by
 * dls_cuda_op_format's line. */
#ifndef DLS_CUDA_CALLBACK_H
#define DLS_CUDA_CALLBACK_H

#include "cuda_api.h"
#include "ops.h"

/* The function subscribed with cuptiSubscribe_v2 (tests call it directly). userdata unused. */
void CUPTIAPI dls_cuda_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata);

/* DLSYNC_DEBUG_OPS: write every delivered op to stderr, and deliver every ENTER (set by the
 * observer at its start). */
void dls_cuda_callback_set_debug(int on);

#endif
