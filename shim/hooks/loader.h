/* The shim's dlsym, dlvsym, dlopen and dlmopen.
 *
 * The shim exports dlsym, dlopen, dlmopen and dlclose (a preload library's definitions come first in
 * every lookup); dlvsym is reached through the callers' GOT slots (engine.h), so the shim's own
 * calls of dlvsym keep going to the C library. Each entry is a short assembly routine:
 *   - until the shim's constructor turns the hooks on, and always with DLSYNC_MODE=off, it jumps
 *     straight to the C library's function, with the caller's own return address;
 *   - dlsym and dlvsym of a name that is not wrapped (no profile row, not a Python capsule
 *     function) do the same: the C library sees the real caller, so RTLD_DEFAULT, RTLD_NEXT and
 *     handles resolve exactly as without dlsync;
 *   - dlsym and dlvsym of a wrapped name make the lookup on behalf of the caller (caller.h) and
 *     return the wrapper bound to what it found (engine.h);
 *   - dlclose tells the binding engine that an object may be unloaded (engine.h), around the C
 *     library's dlclose;
 *   - dlopen and dlmopen load on behalf of the caller (its RUNPATH, $ORIGIN and namespace apply)
 *     and, after each successful load, let the binding engine patch the new objects (for a
 *     dlmopen into another namespace, that namespace's objects too).
 * Sanitizer runtimes call dlsym while they initialize, before any instrumented code may run: the
 * paths taken before the hooks are on are not instrumented. */
#ifndef DLS_LOADER_H
#define DLS_LOADER_H

#include "engine.h"
#include "libdl.h"

#include <stddef.h>

/* Turns the hooks on (called once by the shim's constructor, never in mode off). */
void dls_loader_hooks_enable(void);

/* The entry of the dlvsym hook, which the binding engine writes into callers' GOT slots. */
void *dls_dlvsym_entry(void *handle, const char *name, const char *version);

/* The loader's hooks for the binding engine (the dlvsym entry, for callers' GOT slots; never
 * NULL); *n gets their number. Start-up registers them (dls_engine_add_hooks). */
const dls_engine_hook *dls_loader_hooks(size_t *n);

#endif
