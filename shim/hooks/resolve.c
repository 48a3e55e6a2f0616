/* Real-function resolution (see resolve.h). */
#include "resolve.h"

#include "../common/map.h"
#include "engine.h"
#include "libdl.h"
#include "objects.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Calls the real dlsym; NULL when it is unavailable or the name is not found. */
static void *real_dlsym(void *handle, const char *name)
{
    dls_dlsym_fn f = dls_real_dlsym_fn();
    return f ? f(handle, name) : NULL;
}

static const void *shim_base(void);

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
static pthread_mutex_t g_paths_lock = PTHREAD_MUTEX_INITIALIZER;

/* The kept copy of name ("" when the table is full or memory is short). Leaf lock; no loader
 * call. */
static const char *kept(const char *name)
{
    const char *out = "";
    pthread_mutex_lock(&g_paths_lock);
    size_t i = dls_map_index(&g_paths, (uintptr_t)name);
    char *copy;
    if (dls_map_key_at(&g_paths, i))
        out = (const char *)dls_map_key_at(&g_paths, i);
    else if (!dls_map_full(&g_paths) && (copy = strdup(name)) != NULL)
        out = *(const char **)dls_map_claim(&g_paths, i, (uintptr_t)copy);
    pthread_mutex_unlock(&g_paths_lock);
    return out;
}

const char *dls_object_path(const void *addr)
{
    Dl_info di;
    return addr && dladdr(addr, &di) && di.dli_fname ? kept(di.dli_fname) : "";
}

static void *search(const dls_object_list *l, const char *name, const char **lib)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!l->v[i].name[0])
            continue; /* the main program: not searched */
        void *h = dls_real_dlopen(l->v[i].name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        void *f = real_dlsym(h, name);
        dls_release(h, l->v[i].phdr);
        if (f && !dls_addr_in_shim(f)) {
            *lib = dls_object_path(f);
            return f;
        }
    }
    return NULL;
}

void *dls_resolve(const char *name, const char **lib, unsigned long long *adds)
{
    void *f = real_dlsym(RTLD_NEXT, name);
    if (f && !dls_addr_in_shim(f)) {
        *lib = dls_object_path(f);
        return f;
    }
    /* The list is collected first and searched after: dlopen is not called from inside the
     * dl_iterate_phdr callback, which runs under the loader's lock. */
    dls_object_list l;
    dls_objects_list(&l, (uintptr_t)shim_base());
    f = NULL;
    if (l.adds != *adds)
        f = search(&l, name, lib);
    if (!f)
        *adds = l.adds;
    dls_objects_free(&l);
    return f;
}
