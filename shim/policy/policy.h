/* The policy layer: what `check` and `fix` do with exchanges and CUDA stream work.
 *
 * At startup (shim/startup/startup.c), when DLSYNC_MODE is check or fix, the policy installs the
 * exchange observer (shim/hooks/policy_hooks.h) and the CUDA receivers (shim/cuda/ops.h) and keeps
 * one happens-before engine (shim/hb) behind one mutex. In trace and off modes it installs
 * nothing. docs/architecture.md, "The policy's model", describes the model and its decisions.
 *
 * The functions below are the internal API other parts of the shim (the public C API) use.
 * Streams are driver handles: a CUstream, CU_STREAM_LEGACY (0x1) or CU_STREAM_PER_THREAD (0x2);
 * 0 names the legacy stream as in driver calls. All functions are thread-safe and never fail
 * the caller's program: errors are return codes. */
#ifndef DLS_POLICY_H
#define DLS_POLICY_H

#include <stdint.h>

/* Installs the observers for the configured mode (idempotent). Called by the shim's start-up. */
void dls_policy_start(void);

/* At exit, before the summary: applies the operations still queued, so the summary counts them. */
void dls_policy_stop(void);

/* Sets the calling thread's consumer stream: every later export made by this thread (through a
 * wrapped legacy to_dlpack) is made safe on `stream` at once, in fix mode. */
void dls_policy_set_consumer_stream(uintptr_t stream);

/* Clears the calling thread's consumer stream. */
void dls_policy_clear_consumer_stream(void);

/* The calling thread's consumer stream in *stream; returns 1 when one is set, else 0. */
int dls_policy_consumer_stream(uintptr_t *stream);

/* Makes the live exchanged tensor `tensor` (a DLManagedTensor* or DLManagedTensorVersioned*
 * known to the exchange registry) safe to use on `stream`: injects the event record(s) and the
 * stream wait the model shows missing (none when ordered), whatever the mode is (the caller
 * asked for it). When it cannot be modelled (no CUDA observer, the model lost work or memory is
 * short) the current context is synchronized instead, with one warning. Returns 0 when the
 * tensor is safe on `stream` (ordered, nothing needed, or the fallback synchronize succeeded);
 * ENOENT when the tensor is not a live exchange; ENOTSUP when the policy is not running (mode
 * trace or off, or no memory at start-up); EINVAL when `stream` cannot be resolved; EIO when the
 * ordering and every fallback failed. Never 0 when the tensor was not made safe. */
int dls_policy_make_safe(const void *tensor, uintptr_t stream);

/* The stream the calling thread's legacy producer last used on device `device_id` of
 * DLPack device type `device_type` (kDLCUDA, kDLCUDAHost, kDLCUDAManaged), as observed: the
 * stream of the last producer operation that touched a tensor this thread exported for that
 * device. Stores the handle in *out and returns 0, or returns ENOENT (nothing observed yet;
 * *out = CU_STREAM_LEGACY, the array-API default) or EINVAL (bad arguments). */
int dls_policy_current_work_stream(int device_type, int device_id, void **out);

#endif
