/* The objects that define the Python C API, numbered (see pythons.h). */
#include "pythons.h"

#include <dlfcn.h>
#include <stdatomic.h>

static _Atomic(uintptr_t) g_base[DLS_PYTHONS]; /* load address of object k; 0: number k is free */

int dls_python_of(const void *real, uintptr_t *base)
{
    Dl_info di;
    if (!dladdr(real, &di) || !di.dli_fbase)
        return -1;
    uintptr_t at = (uintptr_t)di.dli_fbase;
    for (int k = 0; k < DLS_PYTHONS; k++) {
        uintptr_t b = atomic_load_explicit(&g_base[k], memory_order_acquire);
        if (b == at || (!b && (atomic_compare_exchange_strong(&g_base[k], &b, at) || b == at))) {
            if (base)
                *base = at;
            return k;
        }
    }
    return -1;
}
