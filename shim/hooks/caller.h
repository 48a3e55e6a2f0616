/* Calling a loader function on behalf of another object.
 *
 * glibc's dlopen, dlmopen, dlsym and dlvsym look at their return address to learn who calls
 * them: dlsym(RTLD_DEFAULT) searches the caller's scope (which, for a library loaded with
 * RTLD_LOCAL, includes its own dependencies), RTLD_NEXT starts after the caller, dlopen applies
 * the caller's RUNPATH/RPATH, $ORIGIN and link-map namespace. A hook that called them from the
 * shim would make the shim the caller. dls_call_as makes the call so that the loader sees a
 * return address inside the real caller's object: the address of a `ret` instruction of that
 * object (its _fini epilogue), under which the stack holds the shim's continuation. The loader
 * returns to that `ret`, which returns into the shim. The object's code and data are not
 * changed. This needs no shadow stack (CET SHSTK): the shim's objects carry no SHSTK marking,
 * so glibc never enables it in a process that loads the shim. */
#ifndef DLS_CALLER_H
#define DLS_CALLER_H

#include "../common/compiler.h"
#include "../common/export.h"

#include <stdint.h>

/* Calls fn(a, b, c, d) with `gadget` as the return address fn sees (gadget must be a `ret`
 * instruction, as dls_caller_gadget returns; NULL calls fn normally) and returns what fn
 * returned in rax. Unwinding through the call (a C++ exception escaping fn) is not supported. */
void *dls_call_as(const void *gadget, void *fn, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d) DLS_HIDDEN;

/* A `ret` instruction inside the object that contains `addr`, to stand for calls made on that
 * object's behalf, or NULL when the object has none that can be found (no DT_FINI/DT_INIT
 * epilogue) or addr is in no object. Calls dladdr: never call it under a dlsync lock. */
const void *dls_caller_gadget(const void *addr) DLS_UNLOCKED;

/* The same for the object with load bias `base` and dynamic section `dyn` (as in a link map or
 * dl_phdr_info); reads only the object's mapped memory. */
const void *dls_gadget_of_object(uintptr_t base, const void *dyn);

#endif
