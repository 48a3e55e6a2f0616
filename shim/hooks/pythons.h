/* The objects of the process that define the Python C API: a libpython, or the executable of a
 * static Python; one per dlmopen namespace.
 *
 * The hooks of Python functions (capsule.h, pythread.h) carry no context, so each keeps one set of
 * entries per such object, calling that object's own functions. The objects are numbered here,
 * 0 to DLS_PYTHONS - 1, in the order the binding engine first meets a function of theirs, so that
 * every set of entries gives the same object the same number. Numbers are never given back.
 * Lock-free. */
#ifndef DLS_PYTHONS_H
#define DLS_PYTHONS_H

#include "../common/compiler.h"
#include <stdint.h>

#define DLS_PYTHONS 4

/* The number of the object defining `real` (the object dladdr finds it in, known by its load
 * address), given on first sight; *base (when non-NULL) gets that load address. Returns -1 when
 * real lies in no object or every number stands for another object. Calls dladdr: never under a
 * dlsync lock. */
int dls_python_of(const void *real, uintptr_t *base) DLS_UNLOCKED;

#endif
