/* The bindings' storage (see bindings.h) and its lock-free readers: a leaf that the wrapper
 * logic (wrap.c, reached from the stubs) reads and bindings.c fills, so that the stubs, the
 * wrapper and the binder form no cycle. */
#ifndef DLS_BINDINGS_TABLE_H
#define DLS_BINDINGS_TABLE_H

#include "../common/export.h"

#include "profiles.h"
#include "trampoline.h"

#include <stdatomic.h>
#include <stddef.h>

/* One binding (written only by bindings.c). */
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

#endif
