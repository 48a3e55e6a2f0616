/* How the CUDA driver comes to load the shim as its injection library, and whether a shim that
 * arrived that way was asked for.
 *
 * The driver loads the library named by CUDA_INJECTION64_PATH at cuInit and calls its
 * InitializeInjection; that is where the observer subscribes to CUPTI. A preloaded shim makes
 * this happen by itself (dls_inject_register), long before any cuInit. Because children inherit
 * the environment, a child started without LD_PRELOAD would still get the shim through that
 * variable and lose the CUPTI subscription to it; the shim therefore marks the value it set
 * (DLSYNC_AUTO_INJECTION, a row of common/options.def) and such a child stays inert
 * (dls_inject_unrequested).
 * A CUDA_INJECTION64_PATH the user set to libdlsync.so carries no marker and works as asked.
 * An inert child still initializes a chained injection library (dls_inject_register).
 * Nothing here loads or initializes CUDA. */
#ifndef DLS_CUDA_INJECT_H
#define DLS_CUDA_INJECT_H

/* 1 when this process did not ask for the shim: it is not in LD_PRELOAD, CUDA_INJECTION64_PATH
 * names it with the marker of an automatic injection beside it, and libcuda was loaded before
 * the shim (the driver is loading it now). Then the shim must stay inert. Call once, from the
 * shim's start-up. */
int dls_inject_unrequested(void);

/* Sets CUDA_INJECTION64_PATH (and its marker) to the shim's own absolute path unless it names
 * the shim already. When it names another library (Nsight Systems, Nsight Compute, another
 * tool), that library goes into DLSYNC_CHAINED_INJECTION: the shim's InitializeInjection loads it
 * and runs its InitializeInjection first, as the driver would have, then subscribes beside it
 * (or, with a CUPTI that allows one subscriber, warns once and falls back). */
void dls_inject_register(void);

#endif
