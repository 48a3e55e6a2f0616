/* The Python capsule layer: DLPack exchanges seen through PyCapsule_New and PyCapsule_SetName.
 *
 * numpy, jax, cupy and others implement DLPack in code the dynamic linker cannot see into; what
 * they all do through it is create the capsule (`PyCapsule_New(tensor, "dltensor" or
 * "dltensor_versioned", destructor)`: an export) and, as consumers, read it and rename it
 * (`PyCapsule_GetPointer(capsule, "dltensor")`, then `PyCapsule_SetName(capsule,
 * "used_dltensor")` or "used_dltensor_versioned": an import). The binding engine points the
 * callers' GOT slots for these three functions at the hooks below, whether libpython is a shared
 * library or part of the executable (Debian's /usr/bin/python3), and dlsym of their names
 * (ctypes.pythonapi) returns the hooks too. dlsync never links libpython: the real functions
 * are what the callers' own slots stood for; a process without Python never has such a slot.
 * Each object defining them (one libpython per dlmopen namespace) gets its own set of hook
 * entries calling its own functions, up to four.
 *
 *   - export: the capsule the real PyCapsule_New made is remembered, and its tensor is read and
 *     registered with the shim's deleter (wrap.h) when the capsule is first taken apart
 *     (PyCapsule_GetPointer, or the rename), not at creation: a producer may fill the tensor
 *     after it made the capsule (CuPy does), so at creation it can be uninitialized memory.
 *     Nothing is remembered when a native profile row already exported it (one exchange);
 *   - import: after the real SetName succeeded, the tensor (read back with the real
 *     PyCapsule_GetPointer under the new name, which cannot fail or raise) is imported, unless a
 *     native profile row already imported it; a consumer that releases the tensor before the
 *     rename (jax) imports it at the release, after its PyCapsule_GetPointer on that thread; a
 *     tensor no wrapped export registered is imported at the PyCapsule_GetPointer itself (its
 *     memory may be gone by the rename);
 *   - release: the tensor's deleter, called by the consumer or, for a capsule never consumed,
 *     by the capsule's destructor, is the shim's (wrap.h).
 * The framework is named after the object that called (capsule_rows.h); the capsules made but
 * not taken apart yet are remembered in capsule_pending.h.
 * A "dlpack_exchange_api" capsule read through PyCapsule_GetPointer gives dlsync's wrapped table
 * (exchange_api.h). Every other capsule name costs one or two byte comparisons. */
#ifndef DLS_CAPSULE_H
#define DLS_CAPSULE_H

#include "../common/export.h"

#include "engine_hook.h"
#include "profiles.h"

#include <stdatomic.h>
#include <stddef.h>

/* The capsule hooks for the binding engine (never NULL); *n gets their number. */
const dls_engine_hook *dls_capsule_hooks(size_t *n);

#endif
