/* Hooks of Python's GIL release and take-back (see pythread.h). */
#include "pythread.h"

#include "../common/config.h"
#include "../report/pyframes.h"

#include "caller.h"
#include "libdl.h"
#include "pythons.h"
#include "resolve.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef void *(*save_fn)(void);
typedef void (*restore_fn)(void *state);

/* The real functions of one object defining them (pythons.h numbers them). */
typedef struct {
    _Atomic(void *) save, restore;
    atomic_int registered; /* 1 once its Python frame functions were registered */
} python_fns;

static python_fns g_py[DLS_PYTHONS];

#define PYTHREAD_ENTRIES(K)                                                                   \
    static void *save_thread_##K(void)                                                        \
    {                                                                                         \
        void *state = ((save_fn)atomic_load_explicit(&g_py[K].save, memory_order_acquire))(); \
        dls_pythread_released(state);                                                         \
        return state;                                                                         \
    }                                                                                         \
    static void restore_thread_##K(void *state)                                               \
    {                                                                                         \
        ((restore_fn)atomic_load_explicit(&g_py[K].restore, memory_order_acquire))(state);    \
        dls_pythread_restored();                                                              \
    }
PYTHREAD_ENTRIES(0)
PYTHREAD_ENTRIES(1)
PYTHREAD_ENTRIES(2)
PYTHREAD_ENTRIES(3)

static void *const g_save_entries[DLS_PYTHONS] = {(void *)save_thread_0, (void *)save_thread_1, (void *)save_thread_2,
                                                  (void *)save_thread_3};
static void *const g_restore_entries[DLS_PYTHONS] = {(void *)restore_thread_0, (void *)restore_thread_1,
                                                     (void *)restore_thread_2, (void *)restore_thread_3};

/* `name` as the object that defines `real` would bind it, or NULL. */
static void *lookup(const void *gadget, const char *name)
{
    void *f = dls_call_as(gadget, (void *)dls_real_dlsym_fn(), (uintptr_t)RTLD_DEFAULT, (uintptr_t)name, 0, 0);
    return f && !dls_addr_in_shim(f) ? f : NULL;
}

/* Registers the Python frame functions of the object at `base` that defines `real`. */
static void register_api(void *real, uintptr_t base)
{
    const void *g = dls_caller_gadget(real);
    if (!g)
        return;
    void *current = lookup(g, "PyThreadState_GetUnchecked");
    dls_py_api api = {
        .base = base,
        .is_initialized = (int (*)(void))lookup(g, "Py_IsInitialized"),
        .gil_check = (int (*)(void))lookup(g, "PyGILState_Check"),
        .this_thread_state = (void *(*)(void))lookup(g, "PyGILState_GetThisThreadState"),
        .current_state = (void *(*)(void))(current ? current : lookup(g, "_PyThreadState_UncheckedGet")),
        .get_frame = (void *(*)(void))lookup(g, "PyEval_GetFrame"),
        .frame_back = (void *(*)(void *))lookup(g, "PyFrame_GetBack"),
        .frame_code = (void *(*)(void *))lookup(g, "PyFrame_GetCode"),
        .frame_line = (int (*)(void *))lookup(g, "PyFrame_GetLineNumber"),
        .getattr = (void *(*)(void *, const char *))lookup(g, "PyObject_GetAttrString"),
        .utf8 = (const char *(*)(void *, ssize_t *))lookup(g, "PyUnicode_AsUTF8AndSize"),
        .decref = (void (*)(void *))lookup(g, "Py_DecRef"),
        .err_fetch = (void (*)(void **, void **, void **))lookup(g, "PyErr_Fetch"),
        .err_restore = (void (*)(void *, void *, void *))lookup(g, "PyErr_Restore"),
        .err_clear = (void (*)(void))lookup(g, "PyErr_Clear"),
        .gc_disable = (int (*)(void))lookup(g, "PyGC_Disable"),
        .gc_enable = (int (*)(void))lookup(g, "PyGC_Enable"),
    };
    dls_pyframes_add(&api);
}

/* The number of the object defining `real` (pythons.h), with `real` stored in that object's
 * member at offset `member`; the object's frame functions are registered the first time. -1 when
 * every number stands for another object. */
static int claim(void *real, size_t member)
{
    uintptr_t base;
    int k = dls_python_of(real, &base);
    if (k < 0)
        return -1;
    if (!atomic_exchange(&g_py[k].registered, 1))
        register_api(real, base);
    _Atomic(void *) *slot = (_Atomic(void *) *)(void *)((char *)&g_py[k] + member);
    atomic_store_explicit(slot, real, memory_order_release);
    return k;
}

static void *save_entry(void *real)
{
    int k = claim(real, offsetof(python_fns, save));
    return k < 0 ? NULL : g_save_entries[k];
}

static void *restore_entry(void *real)
{
    int k = claim(real, offsetof(python_fns, restore));
    return k < 0 ? NULL : g_restore_entries[k];
}

static const dls_engine_hook g_hooks[] = {
    {"PyEval_SaveThread", NULL, save_entry, 0, 0, 0},
    {"PyEval_RestoreThread", NULL, restore_entry, 0, 0, 0},
};

const dls_engine_hook *dls_pythread_hooks(size_t *n)
{
    const dls_config *c = dls_config_get();
    *n = c->mode == DLS_MODE_CHECK && c->stack != DLS_STACK_NATIVE ? sizeof g_hooks / sizeof *g_hooks : 0;
    return g_hooks;
}
