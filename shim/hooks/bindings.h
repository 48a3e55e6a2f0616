/* Bindings: which wrapper stub stands for which (profile row, real function) pair.
 *
 * Stub i (16 bytes each, laid out from dls_stubs or dls_stubs_scalar, see trampoline.h) uses
 * binding i. A binding is made when the binding engine (engine.h) patches a caller's GOT slot or
 * the dlsym hook hands out a wrapper: the row and the real function are known then, so the
 * wrapper never resolves anything while it runs. A binding is never undone: a stub address may
 * still be held by a program after the object of its real function was unloaded (calling it then
 * is the program's error, as calling the real function would be). Bindings live for the
 * process. The rows themselves are profiles.h (built in) and profile_file.h (DLSYNC_PROFILES). */
#ifndef DLS_BINDINGS_H
#define DLS_BINDINGS_H

#include "../common/export.h"

#include "bindings_table.h"
#include "profiles.h"

/* The stub bound to (row, real), binding a free stub when there is none yet. Returns NULL, with
 * one warning, when every stub is bound. Calls dladdr (for the object's path) before it takes
 * the bindings lock, which it holds only to search and fill the table. */
void *dls_binding_stub(const dls_profile *row, void *real);

#endif
