/* NVTX marks for Nsight Systems: exports, imports and injected waits appear in the timeline, in
 * an NVTX domain named "dlsync", next to the kernels they order.
 *
 * Built on the header-only NVTX3 that ships with CUDA. NVTX does nothing unless a tool is
 * injected (NVTX_INJECTION64_PATH, set by nsys); then every call below reaches it. Without a
 * tool each call costs one load: the domain is created once, on first use, and once it is known
 * to be NULL (no tool) every call ends at once. Thread-safe; never fails. */
#ifndef DLS_NVTX_H
#define DLS_NVTX_H

#include "../common/export.h"

#include <stdatomic.h>

/* Set once no NVTX tool is known to listen (written by nvtx.c only). */
extern atomic_int dls_nvtx_absent DLS_HIDDEN;

/* dls_nvtx_active's answer once the domain's absence is not known yet. */
int dls_nvtx_active_slow(void);

/* 1 when an NVTX tool is injected and took the "dlsync" domain, else 0: callers format a
 * message, or skip the calls below, when it will not be seen. Without a tool one load, inline;
 * the answer never changes once given. */
static inline int dls_nvtx_active(void)
{
    return !atomic_load_explicit(&dls_nvtx_absent, memory_order_relaxed) && dls_nvtx_active_slow();
}

/* Places an instantaneous marker with `message` (e.g. "inject event-wait xid 3") in the
 * "dlsync" domain. message may be freed after the call. */
void dls_nvtx_mark(const char *message);

/* Opens a range named `message` on the calling thread (e.g. around a wrapped to_dlpack call);
 * close it with dls_nvtx_range_pop on the same thread. Ranges nest. */
void dls_nvtx_range_push(const char *message);

/* Closes the calling thread's innermost range opened by dls_nvtx_range_push. */
void dls_nvtx_range_pop(void);

#endif
