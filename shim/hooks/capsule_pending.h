/* The tensors of DLPack capsules made but not taken apart yet.
 *
 * A tensor wrapped by PyCapsule_New is read only when the capsule is first taken apart
 * (PyCapsule_GetPointer, or the consumer's rename): a producer may create the capsule before it
 * fills the tensor (CuPy does), so at creation the tensor can be uninitialized memory. The export
 * is recorded then, with the row of the object that created the capsule (capsule.h).
 *
 * A map keyed by tensor pointer (common/map.h) under a spin lock: adding, taking and missing each
 * cost a probe or two; taking from an empty table costs one atomic load. At most 256 are
 * remembered: when that many are pending, the oldest gives way (a capsule that is never taken
 * apart exports nothing), found by a scan of the table that only a program leaving that many
 * capsules untaken pays for. Thread-safe; no allocation. */
#ifndef DLS_CAPSULE_PENDING_H
#define DLS_CAPSULE_PENDING_H

#include "profiles.h"

/* Remembers that mt was wrapped into a capsule by row's object at lib (again: the newer capsule
 * counts). */
void dls_capsule_pending_add(void *mt, const dls_profile *row, const char *lib);

/* Forgets mt when it is pending and returns 1 with its row and object in *row and *lib; returns 0
 * otherwise. */
int dls_capsule_pending_take(const void *mt, const dls_profile **row, const char **lib);

#endif
