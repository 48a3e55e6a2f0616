/* The C library's dl functions, for the shim's own use and for the loader hooks' way through
 * (see libdl.h). */
#include "libdl.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

/* The C library's version of `name` (the current one, else the x86-64 base version), looked up
 * once into *cache. */
DLS_NO_SANITIZE static void *libc_fn(_Atomic(void *) *cache, const char *name)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (!f) {
        f = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");
        if (!f)
            f = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f;
}

static _Atomic(void *) g_dlsym, g_dlopen, g_dlmopen, g_dlclose;

DLS_NO_SANITIZE dls_dlsym_fn dls_real_dlsym_fn(void)
{
    return (dls_dlsym_fn)libc_fn(&g_dlsym, "dlsym");
}

void *dls_real_dlopen_fn(void)
{
    return libc_fn(&g_dlopen, "dlopen");
}

void *dls_real_dlmopen_fn(void)
{
    return libc_fn(&g_dlmopen, "dlmopen");
}

void *dls_real_dlvsym_fn(void)
{
    return (void *)dlvsym; /* the shim does not export dlvsym: this is the C library's */
}

void *dls_real_dlopen(const char *file, int mode)
{
    void *(*f)(const char *, int) = (void *(*)(const char *, int))dls_real_dlopen_fn();
    return f ? f(file, mode) : NULL;
}

void *dls_real_dlmopen(long lmid, const char *file, int mode)
{
    void *(*f)(long, const char *, int) = (void *(*)(long, const char *, int))dls_real_dlmopen_fn();
    return f ? f(lmid, file, mode) : NULL;
}

DLS_NO_SANITIZE dls_dlclose_fn dls_real_dlclose_fn(void)
{
    return (dls_dlclose_fn)libc_fn(&g_dlclose, "dlclose");
}
