/* Stub bindings (see bindings.h). */
#include "bindings.h"

#include "../common/mutex.h"
#include "../report/warn.h"
#include "resolve.h"
#include "trampoline.h"

#include <pthread.h>
#include <stdatomic.h>

static size_t g_used;
static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Address of stub i in the block of the trampoline form that row's function needs (the scalar
 * form when row->scalar, trampoline.h). */
static void *stub_address(size_t i, const dls_profile *row)
{
    return (void *)((row->scalar ? dls_stubs_scalar : dls_stubs) + i * DLS_STUB_SIZE);
}

void *dls_binding_stub(const dls_profile *row, void *real)
{
    const char *lib = dls_object_path(real);
    void *stub = NULL;
    dls_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_used && !stub; i++)
        if (atomic_load_explicit(&dls_binding_table[i].profile, memory_order_relaxed) == row &&
            dls_binding_table[i].real == real)
            stub = stub_address(i, row);
    if (!stub && g_used < DLS_STUB_COUNT) {
        dls_binding *b = &dls_binding_table[g_used];
        b->real = real;
        b->lib = lib;
        atomic_store_explicit(&b->profile, row, memory_order_release);
        stub = stub_address(g_used++, row);
    }
    dls_mutex_unlock(&g_lock);
    if (!stub)
        dls_warn_once("stubs-full", "more than %d wrapped functions; %s in %s is not traced", DLS_STUB_COUNT,
                      dls_profile_name(row), lib);
    return stub;
}
