/* The Python capsule layer (see capsule.h). */
#include "capsule.h"

#include "../common/spin.h"
#include "../report/warn.h"

#include "exchange.h"
#include "exchange_api.h"
#include "loader.h"
#include "resolve.h"
#include "wrap.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void *(*capsule_new_fn)(void *pointer, const char *name, void *destructor);
typedef int (*capsule_set_name_fn)(void *capsule, const char *name);
typedef void *(*capsule_get_pointer_fn)(void *capsule, const char *name);

static _Atomic(capsule_new_fn) g_new;
static _Atomic(capsule_set_name_fn) g_set_name;
static _Atomic(capsule_get_pointer_fn) g_get_pointer;

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
static atomic_size_t g_pending_n;
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
    atomic_fetch_sub_explicit(&g_pending_n, 1, memory_order_relaxed);
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
        atomic_fetch_add_explicit(&g_pending_n, 1, memory_order_relaxed);
    }
    g_pending[i] = (pending){mt, row, lib, g_pending_seq++};
    dls_spin_unlock(&g_pending_lock);
}

/* Records the export of mt when a capsule made for it is taken apart for the first time (outside
 * the table's lock). */
static void export_if_pending(void *mt)
{
    if (!atomic_load_explicit(&g_pending_n, memory_order_acquire))
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

static void *capsule_new(void *pointer, const char *name, void *destructor)
{
    capsule_new_fn real = atomic_load_explicit(&g_new, memory_order_acquire);
    void *cap = real(pointer, name, destructor);
    int kind = dltensor_kind(name, 0);
    if (!cap || !pointer || !kind || registered(pointer, kind == 2))
        return cap; /* registered: exported by a native profile row already, the same exchange */
    const char *lib;
    const dls_profile *row = row_of_caller(__builtin_return_address(0), DLS_ROLE_EXPORT, kind == 2, &lib);
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
static void *capsule_get_pointer(void *capsule, const char *name)
{
    capsule_get_pointer_fn real = atomic_load_explicit(&g_get_pointer, memory_order_acquire);
    void *mt = real(capsule, name);
    if (!mt)
        return mt;
    int kind = dltensor_kind(name, 0);
    if (!kind)
        return name && name[0] == 'd' && strcmp(name, "dlpack_exchange_api") == 0 ? (void *)dls_exchange_api_wrap(mt)
                                                                                  : mt;
    export_if_pending(mt);
    if (!registered(mt, kind == 2)) {
        import_from(mt, __builtin_return_address(0), kind == 2);
        return mt;
    }
    t_read.mt = mt;
    t_read.caller = __builtin_return_address(0);
    t_read.versioned = kind == 2;
    return mt;
}

void dls_capsule_before_release(void *mt)
{
    if (!atomic_load_explicit(&g_get_pointer, memory_order_relaxed) || t_read.mt != mt)
        return;
    t_read.mt = NULL;
    dls_exchange x;
    const char *lib;
    row_of_caller(t_read.caller, DLS_ROLE_IMPORT, t_read.versioned, &lib);
    if (dls_exchange_find_tensor(mt, &x) == 0 && x.imports == 0 &&
        !(x.producer_lib && strcmp(x.producer_lib, lib) == 0))
        import_from(mt, t_read.caller, t_read.versioned);
}

static int capsule_set_name(void *capsule, const char *name)
{
    capsule_set_name_fn real = atomic_load_explicit(&g_set_name, memory_order_acquire);
    int rc = real(capsule, name);
    int kind = dltensor_kind(name, 1);
    capsule_get_pointer_fn get = atomic_load_explicit(&g_get_pointer, memory_order_acquire);
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
        import_from(mt, __builtin_return_address(0), kind == 2);
    return rc;
}

/* The hooks stand for one libpython: the first one bound. Another copy (in another dlmopen
 * namespace) is declined: its callers keep their own functions. */
static int bind_new(void *real)
{
    capsule_new_fn expected = NULL;
    return atomic_compare_exchange_strong(&g_new, &expected, (capsule_new_fn)real) || expected == real;
}

static int bind_get_pointer(void *real)
{
    capsule_get_pointer_fn expected = NULL;
    return atomic_compare_exchange_strong(&g_get_pointer, &expected, (capsule_get_pointer_fn)real) ||
           expected == (capsule_get_pointer_fn)real;
}

/* PyCapsule_GetPointer (for the rename, whose caller may not call it through its GOT) comes from
 * the object that defines the real PyCapsule_SetName. */
static int bind_set_name(void *real)
{
    capsule_set_name_fn expected = NULL;
    if (!atomic_compare_exchange_strong(&g_set_name, &expected, (capsule_set_name_fn)real) &&
        expected != (capsule_set_name_fn)real)
        return 0;
    if (atomic_load(&g_get_pointer))
        return 1;
    Dl_info di;
    struct link_map *map = NULL;
    if (!dladdr1(real, &di, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 1;
    void *h = dls_real_dlopen(map->l_name[0] ? map->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 1;
    void *get = dls_real_dlsym(h, "PyCapsule_GetPointer");
    dls_release(h, real);
    if (get)
        bind_get_pointer(get);
    return 1;
}

static const dls_engine_hook g_hooks[] = {
    {"PyCapsule_New", (void *)capsule_new, bind_new, 1},
    {"PyCapsule_SetName", (void *)capsule_set_name, bind_set_name, 1},
    {"PyCapsule_GetPointer", (void *)capsule_get_pointer, bind_get_pointer, 1},
};

const dls_engine_hook *dls_capsule_hooks(size_t *n)
{
    *n = sizeof g_hooks / sizeof *g_hooks;
    return g_hooks;
}
