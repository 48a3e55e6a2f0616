/* The CUPTI observer's lifecycle: loading libcupti, subscribing, enabling callback ids.
 *
 * The observer starts from InitializeInjection (inject.c), which the driver calls during cuInit
 * when CUDA_INJECTION64_PATH names libdlsync.so. It loads CUPTI with dlopen (DLSYNC_CUPTI, else
 * beside the loaded CUDA libraries, else by soname), subscribes as "dlsync" with
 * cuptiSubscribe_v2, and enables exactly the callback ids in cbids.h. A CUPTI of API version
 * 130200 or later (cuptiGetVersion) is asked for multi-subscriber mode, so dlsync and a profiler
 * (Nsight Systems, the PyTorch profiler) each get their callbacks; an older one, or one that
 * refuses the request, is subscribed alone (cupti_subscriber.h); the summary says which
 * (dls_summary_set_cupti). When CUPTI cannot be loaded or another tool holds the subscription,
 * it warns once, naming what the configured mode does instead, and stays inactive: the policy
 * then falls back (dls_cuda_observer_active / _reason). Thread-safe; no lock of the observer is
 * held across a loader or CUPTI call (test_cuda_observer). */
#ifndef DLS_CUDA_OBSERVER_H
#define DLS_CUDA_OBSERVER_H

/* Starts the observer once: the first call starts it, a later one returns the first outcome
 * (0 while the first is still under way on another thread). Returns 1 when active. */
int dls_cuda_observer_start(void);

/* 1 when CUPTI callbacks are being delivered, else 0. */
int dls_cuda_observer_active(void);

/* Why the observer is not active ("CUDA was not initialized in this process", "CUPTI
 * subscription held by <tool>", ...), or "active". Never NULL; the string stays valid. */
const char *dls_cuda_observer_reason(void);

/* 1 when the observer failed to start and said so in its warning (the policy's fallback then
 * adds no warning of its own), else 0. */
int dls_cuda_observer_warned(void);

/* Records why the observer cannot start before it was asked to (the shim was not able to
 * arrange its injection); ignored once the observer started. */
void dls_cuda_observer_set_reason(const char *reason);

#endif
