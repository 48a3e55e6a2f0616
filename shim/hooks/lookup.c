/* Real-function lookup for the C API's producers (see lookup.h). */
#include "lookup.h"

#include "engine.h"
#include "libdl.h"
#include "objects.h"
#include "resolve.h"

#include <dlfcn.h>
#include <stddef.h>

/* Calls the real dlsym; NULL when it is unavailable or the name is not found. */
static void *real_dlsym(void *handle, const char *name)
{
    dls_dlsym_fn f = dls_real_dlsym_fn();
    return f ? f(handle, name) : NULL;
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
    dls_objects_list(&l, dls_shim_base());
    f = NULL;
    if (l.adds != *adds)
        f = search(&l, name, lib);
    if (!f)
        *adds = l.adds;
    dls_objects_free(&l);
    return f;
}
