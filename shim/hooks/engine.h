/* The binding engine: how dlsync reaches the functions it wraps.
 *
 * dlsync exports no framework name. It rewrites, in every loaded object other than itself, the
 * GOT slots (JUMP_SLOT and GLOB_DAT, got.h) that refer to a wrapped name:
 *   - a profile row (built-in or DLSYNC_PROFILES): the slot gets the wrapper stub bound to (row,
 *     the function the object's slot stands for, bindings.h);
 *   - a Python capsule function (capsule.h) or dlvsym (loader.h): the slot gets dlsync's hook.
 * The function a slot stands for is looked up in the object's own scope, as the loader binds it
 * (dlsym(RTLD_DEFAULT) on the object's behalf, caller.h), so lazily bound slots and libraries
 * loaded with RTLD_LOCAL are handled alike. A scan runs once at start-up and after each
 * successful dlopen/dlmopen; it visits the objects it has not finished yet (all of them again
 * after an object may have been unloaded: dlpi_subs changed, or a dlclose made through the shim
 * began), each held with dlopen(RTLD_NOLOAD) while it is read so that it
 * cannot be unloaded meanwhile; a slot whose name cannot be resolved yet is retried at the next
 * scan. Holding an object with dlopen runs the initializers it still lacks, so a scan made while
 * this thread is inside the loader (the shim's constructor, a dlopen made by a library's
 * constructor) must not hold objects: the constructor's scan reads them unheld (the objects loaded
 * at start-up cannot be unloaded) and nested loads leave the scan to the outermost one. Scans may run concurrently in several threads: writes are idempotent and serialized per
 * slot write (got.h), and no dlsync lock is held while the loader is called. With
 * DLSYNC_MODE=off nothing is patched.
 *
 * Namespaces: dl_iterate_phdr lists the namespace of its caller only, and the shim lives in the
 * base one. After a dlmopen into another namespace (a new one or an existing Lmid), the engine
 * learns the namespace and the loaded object from the handle (dlinfo RTLD_DI_LMID,
 * RTLD_DI_LINKMAP) and lists that namespace with dl_iterate_phdr called on the object's behalf
 * (caller.h), under the loader's lock like every listing, rather than walking the link-map chain
 * that other threads may change; each object is held with dlmopen(lmid, RTLD_NOLOAD) and its
 * slots are resolved in its own scope, which lies in that namespace. There, profile rows are
 * bound to the namespace's own functions, and so are the capsule hooks (an entry set per
 * libpython, up to four; past that one warning and the slots are left); the dlvsym hook
 * is not used (the namespace's dlsym is its own C library's, which the preload does not
 * interpose). Objects the namespace loads itself (its own dlopen) are patched at the next
 * dlmopen into it, and every object of the namespace is visited at each such scan (its own
 * dlclose is not the shim's: the finished set cannot be trusted there). */
#ifndef DLS_ENGINE_H
#define DLS_ENGINE_H

#include "../common/compiler.h"
#include "engine_hook.h"

#include <stddef.h>

/* Adds a provider's hooks (n of them, in static storage) to the names the engine binds. Called
 * by start-up, before the first scan (dls_engine_scan), for the capsule layer, the GIL hooks,
 * the loader's dlvsym and the CUPTI host (cuda/cupti_host.h), in that order; at most 4
 * providers. The engine calls no provider. */
void dls_engine_add_hooks(const dls_engine_hook *hooks, size_t n);

/* Patches the loaded objects not finished yet (see above), holding each while it is read when
 * hold_objects is 1. Never under a dlsync lock. */
void dls_engine_scan(int hold_objects);

/* Patches the objects of the link-map namespace that `handle` (a successful dlmopen's result)
 * belongs to, when it is not the base one (see below). Never under a dlsync lock. */
void dls_engine_scan_namespace(void *handle) DLS_UNLOCKED;

/* Bracket a dlclose made through the shim (the program's, loader.h, or the shim's own release
 * of an object it held): until the end, no object is recorded as finished, and an unload
 * (`unloaded`: 1 when the call may have unloaded an object) makes the next scan forget the
 * finished ones. Lock-free. */
void dls_engine_unload_begin(void);
void dls_engine_unload_end(int unloaded);

/* 1 when `name` is wrapped for dlsym lookups (a profile row or a Python capsule function).
 * Lock-free; callable before the engine was set up (0 then). */
int dls_engine_wants(const char *name);

/* What dlsym of `name` returns when the lookup found `real`: the wrapper bound to it (a stub, or
 * the capsule hook), or real itself when name is not wrapped or no stub is free. */
void *dls_engine_wrap(const char *name, void *real);

/* dlclose of a handle the shim opened to hold an object (`inside`: an address inside it),
 * telling the binding engine when that unloaded the object (its owner closed it meanwhile). */
int dls_release(void *handle, const void *inside) DLS_UNLOCKED;

#endif
