/* The CUPTI observer's lifecycle: loading libcupti, subscribing, enabling callback ids.
 *
 * The observer starts from InitializeInjection (inject.c), which the driver calls during cuInit
 * when CUDA_INJECTION64_PATH names libdlsync.so. It loads CUPTI with dlopen (DLSYNC_CUPTI, else
 * beside the loaded CUDA libraries, else by soname), subscribes as "dlsync" with
 * cuptiSubscribe_v2 (the function family a sharing profiler uses too; cuptiSubscribe where CUPTI
 * lacks it), and enables exactly the callback ids in cbids.h. It asks for multi-subscriber mode
 * only where CUPTI has it: CUPTI 13.3 or later (cuptiGetVersion) with a driver for CUDA 13.3 or
 * later (cuDriverGetVersion; the r610 branch), where dlsync and a profiler that shares (Nsight
 * Systems, XLA's) each get their callbacks (cupti_subscriber.h). Elsewhere, or where an earlier
 * subscriber fixed the process's mode alone, it subscribes alone; the summary says which and why
 * (dls_summary_set_cupti). When CUPTI cannot be loaded or another tool holds the subscription,
 * it warns once, naming what the configured mode does instead, and stays inactive: the policy
 * then falls back (dls_cuda_observer_active / _reason). Thread-safe; no lock of the observer is
 * held across a loader or CUPTI call (test_cuda_observer). */
#ifndef DLS_CUDA_OBSERVER_H
#define DLS_CUDA_OBSERVER_H

#include "../common/compiler.h"

/* Starts the observer once: the first call starts it, a later one returns the first outcome
 * (0 while the first is still under way on another thread). Returns 1 when active. */
int dls_cuda_observer_start(void) DLS_UNLOCKED;

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
