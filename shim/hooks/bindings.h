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

#include "profiles.h"
#include "trampoline.h"

#include <stdatomic.h>
#include <stddef.h>

/* One binding (visible for the inline accessors below; written only by bindings.c). */
typedef struct {
    _Atomic(const dls_profile *) profile; /* published last: the binding is complete once set */
    void *real;
    const char *lib;
} dls_binding;

/* The table (bindings_table.c), indexed by stub. */
extern dls_binding dls_binding_table[DLS_STUB_COUNT] DLS_HIDDEN;

/* Binding of stub i, or NULL when i is out of range or not bound. Lock-free. */
static inline dls_binding *dls_binding_at(size_t i)
{
    if (i >= DLS_STUB_COUNT || !atomic_load_explicit(&dls_binding_table[i].profile, memory_order_acquire))
        return NULL;
    return &dls_binding_table[i];
}

/* The binding's profile row (never NULL for a binding returned by dls_binding_at). */
static inline const dls_profile *dls_binding_profile(const dls_binding *b)
{
    return atomic_load_explicit(&b->profile, memory_order_acquire);
}

/* The real function behind b; *lib gets the path of its object. Lock-free, never NULL. */
static inline void *dls_binding_real(const dls_binding *b, const char **lib)
{
    *lib = b->lib;
    return b->real;
}

/* The stub bound to (row, real), binding a free stub when there is none yet. Returns NULL, with
 * one warning, when every stub is bound. Calls dladdr (for the object's path) before it takes
 * the bindings lock, which it holds only to search and fill the table. */
void *dls_binding_stub(const dls_profile *row, void *real);

#endif
