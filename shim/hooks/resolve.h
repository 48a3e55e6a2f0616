/* The object that contains the shim, and the kept paths of loaded objects: helpers every
 * binding file uses, below the engine (they call no other file of hooks/ but libdl.c). */
#ifndef DLS_RESOLVE_H
#define DLS_RESOLVE_H

#include "../common/compiler.h"
#include <stdint.h>

/* Load bias of the object that contains the shim. */
uintptr_t dls_shim_base(void);

/* 1 when addr lies in the object that contains the shim. */
int dls_addr_in_shim(const void *addr) DLS_UNLOCKED;

/* Path of the object containing addr ("" when unknown), a copy kept for the process (valid after
 * the object is unloaded). Calls dladdr: never under a dlsync lock. */
const char *dls_object_path(const void *addr) DLS_UNLOCKED;

#endif
