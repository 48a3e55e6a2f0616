/* The Python capsule layer (see capsule.h). */
#include "capsule.h"

#include "caller.h"
#include "capsule_pending.h"
#include "capsule_rows.h"
#include "exchange.h"
#include "exchange_api.h"
#include "libdl.h"
#include "pythons.h"
#include "resolve.h"
#include "wrap.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void *(*capsule_new_fn)(void *pointer, const char *name, void *destructor);
typedef int (*capsule_set_name_fn)(void *capsule, const char *name);
typedef void *(*capsule_get_pointer_fn)(void *capsule, const char *name);

/* The real capsule functions of one object defining them (pythons.h numbers them): each has
 * its own set of hook entries, since the hooks carry no context. */
typedef struct {
    _Atomic(void *) new_fn, set_name, get_pointer; /* capsule_new_fn, capsule_set_name_fn, ... */
} python_fns;

static python_fns g_py[DLS_PYTHONS];

/* 1 for "dltensor", 2 for "dltensor_versioned", after "used_" when `used`; 0 otherwise. It runs
 * for every capsule the hooked callers touch: other names are mostly told apart by their first
 * byte; a DLPack name costs one strncmp (which stops at a NUL), and only the versioned name a
 * second comparison of its suffix. */
static inline int dltensor_kind(const char *name, int used)
{
    const char *prefix = used ? "used_dltensor" : "dltensor";
    size_t n = used ? 13 : 8;
    if (!name || name[0] != prefix[0] || strncmp(name, prefix, n) != 0)
        return 0;
    if (!name[n]) /* the n bytes before it matched, none of them a NUL */
        return 1;
    return strcmp(name + n, "_versioned") == 0 ? 2 : 0;
}

/* 1 when mt already carries dlsync's deleter (a wrapped export or import registered it). */
static int registered(void *mt, int versioned)
{
    dls_managed_view v;
    return !dls_managed_view_of(mt, versioned, &v) && *v.deleter_slot == (void *)dls_exchange_deleter;
}

/* Records the export of mt when a capsule made for it is taken apart for the first time. */
static void export_if_pending(void *mt)
{
    const dls_profile *row;
    const char *lib;
    if (dls_capsule_pending_take(mt, &row, &lib))
        dls_wrap_export(row, lib, mt);
}

static inline void *capsule_new(const python_fns *py, void *pointer, const char *name, void *destructor,
                                const void *caller)
{
    capsule_new_fn real = (capsule_new_fn)atomic_load_explicit(&py->new_fn, memory_order_acquire);
    void *cap = real(pointer, name, destructor);
    int kind = dltensor_kind(name, 0);
    if (!cap || !pointer || !kind || registered(pointer, kind == 2))
        return cap; /* registered: exported by a native profile row already, the same exchange */
    const char *lib;
    const dls_profile *row = dls_capsule_row_of_caller(caller, DLS_ROLE_EXPORT, kind == 2, &lib);
    if (row)
        dls_capsule_pending_add(pointer, row, lib);
    return cap;
}

/* The consumer's read of a DLPack capsule on this thread, awaiting its rename or the release. */
static __thread struct {
    void *mt;
    const void *caller;
    int versioned;
} t_read;

/* Imports mt for the consumer that called from `caller`. */
static void import_from(void *mt, const void *caller, int versioned)
{
    const char *lib;
    const dls_profile *row = dls_capsule_row_of_caller(caller, DLS_ROLE_IMPORT, versioned, &lib);
    if (row)
        dls_wrap_import(row, lib, mt);
}

/* A tensor a wrapped export registered is imported at the rename (or at its release when the
 * consumer releases it first, as jax does); an unregistered one is imported at once, while its
 * memory is known to be valid. */
static inline void *capsule_get_pointer(const python_fns *py, void *capsule, const char *name, const void *caller)
{
    capsule_get_pointer_fn real = (capsule_get_pointer_fn)atomic_load_explicit(&py->get_pointer, memory_order_acquire);
    void *mt = real(capsule, name);
    if (!mt)
        return mt;
    int kind = dltensor_kind(name, 0);
    if (!kind)
        return name && name[0] == 'd' && strcmp(name, "dlpack_exchange_api") == 0 ? (void *)dls_exchange_api_wrap(mt)
                                                                                  : mt;
    export_if_pending(mt);
    if (!registered(mt, kind == 2)) {
        import_from(mt, caller, kind == 2);
        return mt;
    }
    t_read.mt = mt;
    t_read.caller = caller;
    t_read.versioned = kind == 2;
    return mt;
}

/* Called by the shim's deleter before it removes mt from the registry, once some libpython is
 * hooked (registered with wrap.h's before-release slot then): a consumer that read the capsule on
 * this thread and releases the tensor before renaming the capsule (jax) imported it; the import is
 * recorded first. Does nothing otherwise (one thread-local comparison). */
static void before_release_bound(void *mt)
{
    if (t_read.mt != mt)
        return;
    t_read.mt = NULL;
    dls_exchange x;
    const char *lib;
    dls_capsule_row_of_caller(t_read.caller, DLS_ROLE_IMPORT, t_read.versioned, &lib);
    if (dls_exchange_find_tensor(mt, &x) == 0 && x.imports == 0 &&
        !(x.producer_lib && strcmp(x.producer_lib, lib) == 0))
        import_from(mt, t_read.caller, t_read.versioned);
}

static inline int capsule_set_name(const python_fns *py, void *capsule, const char *name, const void *caller)
{
    capsule_set_name_fn real = (capsule_set_name_fn)atomic_load_explicit(&py->set_name, memory_order_acquire);
    int rc = real(capsule, name);
    int kind = dltensor_kind(name, 1);
    capsule_get_pointer_fn get = (capsule_get_pointer_fn)atomic_load_explicit(&py->get_pointer, memory_order_acquire);
    if (rc != 0 || !kind || !get)
        return rc;
    void *mt = get(capsule, name);
    if (mt)
        export_if_pending(mt); /* taken apart by a PyCapsule_GetPointer dlsync did not see */
    if (t_read.mt == mt)
        t_read.mt = NULL;
    /* Not live: released already (its import, if any, was recorded then). Imported: by a native
     * profile row or at the read, the same exchange. */
    if (mt && dls_exchange_imports(mt) == 0)
        import_from(mt, caller, kind == 2);
    return rc;
}

/* The entries of instance K: they pass their caller's address on. */
#define PYTHON_ENTRIES(K)                                                                     \
    static void *capsule_new_##K(void *pointer, const char *name, void *destructor)           \
    {                                                                                         \
        return capsule_new(&g_py[K], pointer, name, destructor, __builtin_return_address(0)); \
    }                                                                                         \
    static void *capsule_get_pointer_##K(void *capsule, const char *name)                     \
    {                                                                                         \
        return capsule_get_pointer(&g_py[K], capsule, name, __builtin_return_address(0));     \
    }                                                                                         \
    static int capsule_set_name_##K(void *capsule, const char *name)                          \
    {                                                                                         \
        return capsule_set_name(&g_py[K], capsule, name, __builtin_return_address(0));        \
    }
PYTHON_ENTRIES(0)
PYTHON_ENTRIES(1)
PYTHON_ENTRIES(2)
PYTHON_ENTRIES(3)

static void *const g_new_entries[DLS_PYTHONS] = {(void *)capsule_new_0, (void *)capsule_new_1, (void *)capsule_new_2,
                                                 (void *)capsule_new_3};
static void *const g_get_pointer_entries[DLS_PYTHONS] = {(void *)capsule_get_pointer_0, (void *)capsule_get_pointer_1,
                                                         (void *)capsule_get_pointer_2, (void *)capsule_get_pointer_3};
static void *const g_set_name_entries[DLS_PYTHONS] = {(void *)capsule_set_name_0, (void *)capsule_set_name_1,
                                                      (void *)capsule_set_name_2, (void *)capsule_set_name_3};

/* The number of the object defining `real` (pythons.h), with `real` stored in that object's
 * member at offset `member` (again at each binding: a new object may have the address of an
 * unloaded one); -1 when every number stands for another object. */
static int claim(void *real, size_t member)
{
    int k = dls_python_of(real, NULL);
    if (k < 0)
        return -1;
    dls_wrap_set_before_release(before_release_bound);
    _Atomic(void *) *slot = (_Atomic(void *) *)(void *)((char *)&g_py[k] + member);
    atomic_store_explicit(slot, real, memory_order_release);
    return k;
}

static void *new_entry(void *real)
{
    int k = claim(real, offsetof(python_fns, new_fn));
    return k < 0 ? NULL : g_new_entries[k];
}

static void *get_pointer_entry(void *real)
{
    int k = claim(real, offsetof(python_fns, get_pointer));
    return k < 0 ? NULL : g_get_pointer_entries[k];
}

/* PyCapsule_GetPointer (for the rename, whose caller may not call it through its GOT) is looked
 * up on behalf of the object that defines the real PyCapsule_SetName, in its own scope (from the
 * shim, the lookup could find another namespace's copy); none without a way to call as it. */
static void *set_name_entry(void *real)
{
    int k = claim(real, offsetof(python_fns, set_name));
    if (k < 0)
        return NULL;
    const void *gadget = dls_caller_gadget(real);
    void *get = gadget ? dls_call_as(gadget, (void *)dls_real_dlsym_fn(), (uintptr_t)RTLD_DEFAULT,
                                     (uintptr_t) "PyCapsule_GetPointer", 0, 0)
                       : NULL;
    if (get && !dls_addr_in_shim(get)) /* looked up again at each binding: the object may be new */
        atomic_store_explicit(&g_py[k].get_pointer, get, memory_order_release);
    return g_set_name_entries[k];
}

static const dls_engine_hook g_hooks[] = {
    {"PyCapsule_New", NULL, new_entry, 1, 0, 0},
    {"PyCapsule_SetName", NULL, set_name_entry, 1, 0, 0},
    {"PyCapsule_GetPointer", NULL, get_pointer_entry, 1, 0, 0},
};

const dls_engine_hook *dls_capsule_hooks(size_t *n)
{
    *n = sizeof g_hooks / sizeof *g_hooks;
    return g_hooks;
}
