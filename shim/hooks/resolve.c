/* The shim's own object and the paths of loaded objects (see resolve.h). */
#include "resolve.h"

#include "../common/mutex.h"
#include "../common/map.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const void *shim_base(void) DLS_UNLOCKED;

uintptr_t dls_shim_base(void)
{
    return (uintptr_t)shim_base();
}

static const void *shim_base(void)
{
    static _Atomic(const void *) base;
    const void *b = atomic_load_explicit(&base, memory_order_relaxed);
    if (!b) {
        Dl_info di;
        if (dladdr((const void *)&shim_base, &di))
            b = di.dli_fbase;
        atomic_store_explicit(&base, b, memory_order_relaxed);
    }
    return b;
}

int dls_addr_in_shim(const void *addr)
{
    Dl_info di;
    return addr && dladdr(addr, &di) && di.dli_fbase == shim_base();
}

/* The paths dls_object_path hands out, kept for the process: the loader frees an object's name
 * when it unloads it, and callers keep the path (profile rows, bindings, exchanges). */
static const char *g_path_slots[4096];
static dls_map g_paths = DLS_MAP_OVER(DLS_MAP_STRINGS, g_path_slots);
static dls_mutex g_paths_lock = PTHREAD_MUTEX_INITIALIZER;

/* The kept copy of name ("" when the table is full or memory is short). Leaf lock; no loader
 * call. */
static const char *kept(const char *name)
{
    const char *out = "";
    dls_mutex_lock(&g_paths_lock);
    size_t i = dls_map_index(&g_paths, (uintptr_t)name);
    char *copy;
    if (dls_map_key_at(&g_paths, i))
        out = (const char *)dls_map_key_at(&g_paths, i);
    else if (!dls_map_full(&g_paths) && (copy = strdup(name)) != NULL)
        out = *(const char **)dls_map_claim(&g_paths, i, (uintptr_t)copy);
    dls_mutex_unlock(&g_paths_lock);
    return out;
}

const char *dls_object_path(const void *addr)
{
    Dl_info di;
    return addr && dladdr(addr, &di) && di.dli_fname ? kept(di.dli_fname) : "";
}
