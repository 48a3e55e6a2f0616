/* The loader hooks (see loader.h). */
#include "loader.h"

#include "../common/compiler.h"
#include "../common/export.h"
#include "../report/stack.h"
#include "../report/warn.h"
#include "caller.h"
#include "engine.h"
#include "libdl.h"
#include "resolve.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* 0 until dls_loader_hooks_enable. */
static unsigned char g_loader_on;

/* Called by the assembly entries (x86_64/loader.S). */
#define ENTRY_FN DLS_NO_SANITIZE DLS_HIDDEN
ENTRY_FN void *dls_real_dlopen_fn(void);
ENTRY_FN void *dls_real_dlmopen_fn(void);
ENTRY_FN void *dls_real_dlvsym_fn(void);
/* Called by the assembly entries (x86_64/loader.S). */
#define ENTRY_FN DLS_NO_SANITIZE DLS_HIDDEN
ENTRY_FN int dls_loader_wants(const char *name);
ENTRY_FN int dls_loader_active(void);

int dls_loader_active(void)
{
    return __atomic_load_n(&g_loader_on, __ATOMIC_ACQUIRE);
}

int dls_loader_wants(const char *name)
{
    return dls_loader_active() && name && dls_engine_wants(name);
}

void dls_loader_hooks_enable(void)
{
    __atomic_store_n(&g_loader_on, 1, __ATOMIC_RELEASE);
}

typedef int (*dlclose_fn)(void *);

/* The exported dlclose: the binding engine forgets the objects it finished, and the stack
 * capture the code it walked (one may be unloaded and another loaded at its address). */
DLS_EXPORT DLS_NO_SANITIZE int dlclose(void *handle)
{
    dls_dlclose_fn f = dls_real_dlclose_fn();
    if (!f)
        return -1;
    int active = dls_loader_active();
    if (active)
        dls_engine_unload_begin();
    int rc = f(handle);
    if (active)
        dls_engine_unload_end(1);
    dls_stack_unloaded(); /* its code's addresses may come to hold another object's */
    return rc;
}

/* The gadget standing for `caller`, warning once when another object than the shim has none (the
 * call is then made from the shim, which changes RTLD_DEFAULT, RUNPATH and namespace for that
 * caller). The shim's own calls need none: made from the shim, they are the caller's already (a
 * shim linked by lld against zig's C library has no DT_FINI or DT_INIT to take one from). */
static const void *gadget_for(const void *caller)
{
    const void *g = dls_caller_gadget(caller);
    if (!g && !dls_addr_in_shim(caller))
        dls_warn_once("no-gadget",
                      "cannot call the loader on behalf of %s (no _fini epilogue found); "
                      "its dlopen/dlsym of wrapped names run as if called from dlsync",
                      dls_object_path(caller));
    return g;
}

DLS_HIDDEN void *dls_dlsym_hook(void *handle, const char *name, const void *caller);
DLS_HIDDEN void *dls_dlvsym_hook(void *handle, const char *name, const char *version, const void *caller);
DLS_HIDDEN void *dls_dlopen_hook(const char *file, int mode, const void *caller);
DLS_HIDDEN void *dls_dlmopen_hook(long lmid, const char *file, int mode, const void *caller);

void *dls_dlsym_hook(void *handle, const char *name, const void *caller)
{
    const void *g = gadget_for(caller);
    void *real = dls_call_as(g, (void *)dls_real_dlsym_fn(), (uintptr_t)handle, (uintptr_t)name, 0, 0);
    return real ? dls_engine_wrap(name, real) : NULL;
}

void *dls_dlvsym_hook(void *handle, const char *name, const char *version, const void *caller)
{
    const void *g = gadget_for(caller);
    void *real = dls_call_as(g, dls_real_dlvsym_fn(), (uintptr_t)handle, (uintptr_t)name, (uintptr_t)version, 0);
    return real ? dls_engine_wrap(name, real) : NULL;
}

/* dlopen/dlmopen calls in progress on this thread (a library's constructor may load another). */
static __thread int t_loading;

/* After a successful load: patch what it brought (in the other namespace too when it went to
 * one), leaving errno and the dlerror state as the load left them (no error). A load made inside
 * another leaves it to the outer one. */
static void after_load(void *h, int mode, int other_namespace)
{
    if (!h || (mode & RTLD_NOLOAD) || t_loading > 0)
        return;
    int e = errno;
    dls_engine_scan(1);
    if (other_namespace)
        dls_engine_scan_namespace(h);
    dlerror();
    errno = e;
}

void *dls_dlopen_hook(const char *file, int mode, const void *caller)
{
    t_loading++;
    void *h = dls_call_as(gadget_for(caller), dls_real_dlopen_fn(), (uintptr_t)file, (uintptr_t)mode, 0, 0);
    t_loading--;
    after_load(h, mode, 0);
    return h;
}

void *dls_dlmopen_hook(long lmid, const char *file, int mode, const void *caller)
{
    t_loading++;
    void *h =
        dls_call_as(gadget_for(caller), dls_real_dlmopen_fn(), (uintptr_t)lmid, (uintptr_t)file, (uintptr_t)mode, 0);
    t_loading--;
    after_load(h, mode, lmid != LM_ID_BASE);
    return h;
}
