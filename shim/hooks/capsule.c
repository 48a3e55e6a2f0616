/* The Python capsule layer (see capsule.h). */
#include "capsule.h"

#include "../common/spin.h"
#include "../report/warn.h"

#include "caller.h"
#include "exchange.h"
#include "exchange_api.h"
#include "resolve.h"
#include "wrap.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void *(*capsule_new_fn)(void *pointer, const char *name, void *destructor);
typedef int (*capsule_set_name_fn)(void *capsule, const char *name);
typedef void *(*capsule_get_pointer_fn)(void *capsule, const char *name);

/* The real capsule functions of one libpython (one object defining them: a process may hold
 * several, one per dlmopen namespace). Each has its own set of hook entries, since the hooks
 * carry no context. */
#define PYTHONS 4

typedef struct {
    _Atomic(uintptr_t) base;                       /* load address of the defining object; 0: free */
    _Atomic(void *) new_fn, set_name, get_pointer; /* capsule_new_fn, capsule_set_name_fn, ... */
} python_fns;

static python_fns g_py[PYTHONS];
atomic_int dls_capsule_bound;

/* 1 for "dltensor", 2 for "dltensor_versioned", after "used_" when `used`; 0 otherwise. It runs
 * for every capsule the hooked callers touch: other names are mostly told apart by their first
 * byte; a DLPack name costs one strncmp (which stops at a NUL), and only the versioned name a
 * second comparison of its suffix. */
static inline __attribute__((always_inline)) int dltensor_kind(const char *name, int used)
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

/* ---- framework names ---- */

static const struct {
    const char *fragment, *framework;
} g_frameworks[] = {
    {"tvm_ffi", "tvm-ffi"}, {"numpy", "numpy"},           {"jaxlib", "jax"},    {"/jax/", "jax"},
    {"cupy", "cupy"},       {"tensorflow", "tensorflow"}, {"paddle", "paddle"}, {"torch", "pytorch"},
    {"tvm", "tvm"},         {"mxnet", "mxnet"},           {"cudf", "cudf"},     {"dask", "dask"},
};

const char *dls_capsule_framework(const char *path, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof g_frameworks / sizeof *g_frameworks; i++)
        if (strstr(path, g_frameworks[i].fragment)) {
            snprintf(buf, n, "%s", g_frameworks[i].framework);
            return buf;
        }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(buf, n, "%s", base[0] ? base : "python");
    return buf;
}

/* ---- per-caller profile rows, made once per (object, role, version) ---- */

#define MAX_ROWS 64
#define CACHE_SLOTS 256

typedef struct {
    const void *caller;
    const dls_profile *row;
    const char *lib;
} caller_info;

static dls_profile g_rows[MAX_ROWS];
static const char *g_row_lib[MAX_ROWS];
static size_t g_rows_n;
static pthread_mutex_t g_rows_lock = PTHREAD_MUTEX_INITIALIZER;
static caller_info g_info[CACHE_SLOTS * 2];
static atomic_size_t g_info_n;
static _Atomic(const caller_info *) g_cache[CACHE_SLOTS];

const dls_profile *dls_capsule_row(const char *lib, const char *display, dls_role role, dls_where where, int versioned,
                                   dls_xpath path)
{
    char fw[DLS_PROFILE_FRAMEWORK_MAX];
    dls_capsule_framework(lib, fw, sizeof fw);
    const dls_profile *r = NULL;
    pthread_mutex_lock(&g_rows_lock);
    for (size_t i = 0; i < g_rows_n && !r; i++)
        if (g_rows[i].role == role && g_rows[i].versioned == versioned && strcmp(g_rows[i].display, display) == 0 &&
            strcmp(g_row_lib[i], lib) == 0)
            r = &g_rows[i];
    if (!r && g_rows_n < MAX_ROWS) {
        dls_profile *p = &g_rows[g_rows_n];
        g_row_lib[g_rows_n++] = lib;
        snprintf(p->symbol, sizeof p->symbol, "%.*s", (int)strcspn(display, "("), display);
        snprintf(p->framework, sizeof p->framework, "%s", fw);
        snprintf(p->display, sizeof p->display, "%s", display);
        p->role = role;
        p->where = where;
        p->versioned = versioned;
        p->path = path;
        r = p;
    }
    pthread_mutex_unlock(&g_rows_lock);
    if (!r)
        dls_warn_once("capsule-rows", "more than %d kinds of capsule exchange; %s in %s is not traced", MAX_ROWS,
                      display, lib);
    return r;
}

/* The known caller (caller, role, versioned), or NULL. Lock-free: entries below g_info_n are
 * complete and never change. */
static const caller_info *known_caller(const void *caller, dls_role role, int versioned)
{
    size_t n = atomic_load_explicit(&g_info_n, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (g_info[i].caller == caller && g_info[i].row->role == role && g_info[i].row->versioned == versioned)
            return &g_info[i];
    return NULL;
}

/* The row for a call from `caller` (its return address). Each caller is looked up in the loader
 * once (dladdr), then remembered (up to 512 call sites): a hash slot finds it at once, and a
 * caller whose slot another took meanwhile is found again by a scan of the known ones. */
static const dls_profile *row_of_caller(const void *caller, dls_role role, int versioned, const char **lib)
{
    size_t h = (((uintptr_t)caller >> 2) ^ (size_t)role * 7 ^ (size_t)versioned * 13) & (CACHE_SLOTS - 1);
    const caller_info *c = atomic_load_explicit(&g_cache[h], memory_order_acquire);
    if (c && c->caller == caller && c->row->role == role && c->row->versioned == versioned) {
        *lib = c->lib;
        return c->row;
    }
    c = known_caller(caller, role, versioned);
    if (!c) {
        const char *path = dls_object_path(caller);
        int exp = role == DLS_ROLE_EXPORT;
        char display[64];
        snprintf(display, sizeof display, "%s(\"%sdltensor%s\")", exp ? "PyCapsule_New" : "PyCapsule_SetName",
                 exp ? "" : "used_", versioned ? "_versioned" : "");
        /* Only the protocol (__dlpack__ with max_version) makes versioned capsules; an unversioned
         * one may come from a legacy to_dlpack(), which cannot carry a stream. */
        const dls_profile *r = dls_capsule_row(path, display, role, exp ? DLS_WHERE_RET : DLS_WHERE_ARG, versioned,
                                               versioned ? DLS_XPATH_PROTOCOL : DLS_XPATH_LEGACY_CAPSULE);
        *lib = path;
        if (!r)
            return NULL;
        pthread_mutex_lock(&g_rows_lock);
        c = known_caller(caller, role, versioned);
        size_t n = atomic_load_explicit(&g_info_n, memory_order_relaxed);
        if (!c && n < sizeof g_info / sizeof *g_info) {
            g_info[n] = (caller_info){caller, r, path};
            atomic_store_explicit(&g_info_n, n + 1, memory_order_release);
            c = &g_info[n];
        }
        pthread_mutex_unlock(&g_rows_lock);
        if (!c)
            return r; /* every call site remembered is another one: this one is looked up each time */
    }
    atomic_store_explicit(&g_cache[h], c, memory_order_release);
    *lib = c->lib;
    return c->row;
}

/* ---- capsules made but not yet taken apart ---- */

/* A tensor wrapped by PyCapsule_New is read only when the capsule is first taken apart
 * (PyCapsule_GetPointer, or the consumer's rename): a producer may create the capsule before it
 * fills the tensor (CuPy does), so at creation the tensor can be uninitialized memory. The export
 * is recorded then, with the row of the object that created the capsule.
 *
 * The capsules made but not taken apart yet: an open-addressing table keyed by tensor pointer
 * (linear probing, backward-shift deletion), at most half full, so that adding, taking and
 * missing each cost a probe or two under a spin lock; taking from an empty table costs one
 * atomic load. At most PENDING_MAX are remembered: when that many are pending, the oldest gives
 * way (a capsule that is never taken apart exports nothing), found by a scan of the table that
 * only a program leaving that many capsules untaken pays for. */
#define PENDING_MAX 256
#define PENDING_SLOTS (2 * PENDING_MAX)

typedef struct {
    void *mt; /* NULL: empty slot */
    const dls_profile *row;
    const char *lib;
    uint64_t seq; /* order of creation */
} pending;

static pending g_pending[PENDING_SLOTS];
static atomic_size_t g_pending_n; /* written under the lock (dls_spin_count_add), read without it */
static uint64_t g_pending_seq;
static dls_spin g_pending_lock = DLS_SPIN_INIT;

static size_t pending_home(const void *mt)
{
    return (size_t)(((uint64_t)(uintptr_t)mt * 0x9e3779b97f4a7c15ull) >> 32) & (PENDING_SLOTS - 1);
}

/* The slot holding mt, or the empty slot ending its probe chain. Lock held. */
static size_t pending_probe(const void *mt)
{
    size_t i = pending_home(mt);
    while (g_pending[i].mt && g_pending[i].mt != mt)
        i = (i + 1) & (PENDING_SLOTS - 1);
    return i;
}

/* Empties slot i, moving later entries of the probe chain back so that none is cut off. Lock
 * held. */
static void pending_delete(size_t i)
{
    for (size_t j = i;;) {
        j = (j + 1) & (PENDING_SLOTS - 1);
        if (!g_pending[j].mt)
            break;
        size_t home = pending_home(g_pending[j].mt);
        if (((j - home) & (PENDING_SLOTS - 1)) >= ((j - i) & (PENDING_SLOTS - 1))) {
            g_pending[i] = g_pending[j];
            i = j;
        }
    }
    g_pending[i].mt = NULL;
    dls_spin_count_add(&g_pending_n, (size_t)-1);
}

/* Empties the slot of the oldest entry. Lock held; the table is not empty. */
static void pending_evict_oldest(void)
{
    size_t oldest = PENDING_SLOTS;
    for (size_t i = 0; i < PENDING_SLOTS; i++)
        if (g_pending[i].mt && (oldest == PENDING_SLOTS || g_pending[i].seq < g_pending[oldest].seq))
            oldest = i;
    pending_delete(oldest);
}

/* Remembers that mt was wrapped into a capsule by `row`'s object (again: the newer capsule
 * counts). */
static void pending_add(void *mt, const dls_profile *row, const char *lib)
{
    dls_spin_lock(&g_pending_lock);
    size_t i = pending_probe(mt);
    if (!g_pending[i].mt) {
        if (atomic_load_explicit(&g_pending_n, memory_order_relaxed) == PENDING_MAX) {
            pending_evict_oldest();
            i = pending_probe(mt);
        }
        dls_spin_count_add(&g_pending_n, 1);
    }
    g_pending[i] = (pending){mt, row, lib, g_pending_seq++};
    dls_spin_unlock(&g_pending_lock);
}

/* Records the export of mt when a capsule made for it is taken apart for the first time (outside
 * the table's lock). */
static void export_if_pending(void *mt)
{
    if (!atomic_load_explicit(&g_pending_n, memory_order_relaxed))
        return;
    const dls_profile *row = NULL;
    const char *lib = NULL;
    dls_spin_lock(&g_pending_lock);
    size_t i = pending_probe(mt);
    if (g_pending[i].mt) {
        row = g_pending[i].row;
        lib = g_pending[i].lib;
        pending_delete(i);
    }
    dls_spin_unlock(&g_pending_lock);
    if (row)
        dls_wrap_export(row, lib, mt);
}

/* ---- the hooks ---- */

static inline __attribute__((always_inline)) void *capsule_new(const python_fns *py, void *pointer, const char *name,
                                                               void *destructor, const void *caller)
{
    capsule_new_fn real = (capsule_new_fn)atomic_load_explicit(&py->new_fn, memory_order_acquire);
    void *cap = real(pointer, name, destructor);
    int kind = dltensor_kind(name, 0);
    if (!cap || !pointer || !kind || registered(pointer, kind == 2))
        return cap; /* registered: exported by a native profile row already, the same exchange */
    const char *lib;
    const dls_profile *row = row_of_caller(caller, DLS_ROLE_EXPORT, kind == 2, &lib);
    if (row)
        pending_add(pointer, row, lib);
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
    const dls_profile *row = row_of_caller(caller, DLS_ROLE_IMPORT, versioned, &lib);
    if (row)
        dls_wrap_import(row, lib, mt);
}

/* A tensor a wrapped export registered is imported at the rename (or at its release when the
 * consumer releases it first, as jax does); an unregistered one is imported at once, while its
 * memory is known to be valid. */
static inline __attribute__((always_inline)) void *capsule_get_pointer(const python_fns *py, void *capsule,
                                                                       const char *name, const void *caller)
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

void dls_capsule_before_release_bound(void *mt)
{
    if (t_read.mt != mt)
        return;
    t_read.mt = NULL;
    dls_exchange x;
    const char *lib;
    row_of_caller(t_read.caller, DLS_ROLE_IMPORT, t_read.versioned, &lib);
    if (dls_exchange_find_tensor(mt, &x) == 0 && x.imports == 0 &&
        !(x.producer_lib && strcmp(x.producer_lib, lib) == 0))
        import_from(mt, t_read.caller, t_read.versioned);
}

static inline __attribute__((always_inline)) int capsule_set_name(const python_fns *py, void *capsule, const char *name,
                                                                  const void *caller)
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

static void *const g_new_entries[PYTHONS] = {(void *)capsule_new_0, (void *)capsule_new_1, (void *)capsule_new_2,
                                             (void *)capsule_new_3};
static void *const g_get_pointer_entries[PYTHONS] = {(void *)capsule_get_pointer_0, (void *)capsule_get_pointer_1,
                                                     (void *)capsule_get_pointer_2, (void *)capsule_get_pointer_3};
static void *const g_set_name_entries[PYTHONS] = {(void *)capsule_set_name_0, (void *)capsule_set_name_1,
                                                  (void *)capsule_set_name_2, (void *)capsule_set_name_3};

/* Index of the instance of the object defining `real`, claimed on first use (an object loaded
 * later at a freed instance's address takes it over: the functions are stored again at each
 * binding), with `real` stored in its member at offset `member`; -1 when every instance stands
 * for another object. */
static int claim(void *real, size_t member)
{
    Dl_info di;
    if (!dladdr(real, &di) || !di.dli_fbase)
        return -1;
    uintptr_t base = (uintptr_t)di.dli_fbase;
    for (int k = 0; k < PYTHONS; k++) {
        uintptr_t b = atomic_load_explicit(&g_py[k].base, memory_order_acquire);
        if (b == base || (!b && (atomic_compare_exchange_strong(&g_py[k].base, &b, base) || b == base))) {
            atomic_store(&dls_capsule_bound, 1);
            atomic_store_explicit((_Atomic(void *) *)((char *)&g_py[k] + member), real, memory_order_release);
            return k;
        }
    }
    return -1;
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
    {"PyCapsule_New", NULL, new_entry, 1},
    {"PyCapsule_SetName", NULL, set_name_entry, 1},
    {"PyCapsule_GetPointer", NULL, get_pointer_entry, 1},
};

const dls_engine_hook *dls_capsule_hooks(size_t *n)
{
    *n = sizeof g_hooks / sizeof *g_hooks;
    return g_hooks;
}
