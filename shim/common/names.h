/* Names the shim and the dlsync command share: the version, the DLSYNC_MODE names, and the
 * variables of an automatic CUDA injection. Header only, libc only, so the command
 * compiles it without the rest of the shim. */
#ifndef DLS_NAMES_H
#define DLS_NAMES_H

#include <string.h>

#define DLS_VERSION "0.1.0"

/* X(enum suffix, name as written in DLSYNC_MODE and `dlsync run --mode`), in dls_mode order. */
#define DLS_MODES(X)                                                                     \
    X(OFF, "off")     /* wrappers pass straight through, nothing recorded */             \
    X(TRACE, "trace") /* record exchanges only */                                        \
    X(CHECK, "check") /* record and report unsynchronized uses; never change ordering */ \
    X(FIX, "fix")     /* default: make every exchanged tensor safe on its consumer stream */

/* Set beside CUDA_INJECTION64_PATH, to the same value, whenever dlsync (the shim or `dlsync
 * run`) sets CUDA_INJECTION64_PATH itself. A process that inherits both but was not given the
 * shim by LD_PRELOAD (a child that dropped it) knows the injection was not asked for. */
#define DLS_INJECTION_MARKER "DLSYNC_AUTO_INJECTION"

/* The library CUDA_INJECTION64_PATH named before the shim took its place (a profiler such as
 * Nsight Systems): the shim's InitializeInjection initializes it first. Inherited by children. */
#define DLS_INJECTION_CHAIN "DLSYNC_CHAINED_INJECTION"

#define DLS_MODE_NAME_(id, name) name,

/* The name of mode index m (a dls_mode value), or "?" when out of range. */
static inline const char *dls_mode_text(int m)
{
    static const char *const names[] = {DLS_MODES(DLS_MODE_NAME_)};
    return m >= 0 && m < (int)(sizeof names / sizeof *names) ? names[m] : "?";
}

/* The index of mode name `s` in DLS_MODES (a dls_mode value), or -1 when it is none. */
static inline int dls_mode_from_name(const char *s)
{
    static const char *const names[] = {DLS_MODES(DLS_MODE_NAME_)};
    for (int i = 0; s && i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

#undef DLS_MODE_NAME_

#endif
