/* Profile rows of capsule and exchange-table exchanges (see capsule_rows.h). */
#include "capsule_rows.h"

#include "../common/mutex.h"
#include "../report/warn.h"
#include "resolve.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
static dls_mutex g_rows_lock = PTHREAD_MUTEX_INITIALIZER;
static caller_info g_info[CACHE_SLOTS * 2];
static atomic_size_t g_info_n;
/* Not a dls_map: read without a lock (each slot one atomic pointer), and a cache that may drop. */
static _Atomic(const caller_info *) g_cache[CACHE_SLOTS];

const dls_profile *dls_capsule_row(const char *lib, const char *display, dls_role role, dls_where where, int versioned,
                                   dls_xpath path)
{
    char fw[DLS_PROFILE_FRAMEWORK_MAX];
    dls_capsule_framework(lib, fw, sizeof fw);
    const dls_profile *r = NULL;
    dls_mutex_lock(&g_rows_lock);
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
    dls_mutex_unlock(&g_rows_lock);
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

/* Up to 512 call sites are remembered; one beyond them is looked up each time. */
const dls_profile *dls_capsule_row_of_caller(const void *caller, dls_role role, int versioned, const char **lib)
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
        dls_mutex_lock(&g_rows_lock);
        c = known_caller(caller, role, versioned);
        size_t n = atomic_load_explicit(&g_info_n, memory_order_relaxed);
        if (!c && n < sizeof g_info / sizeof *g_info) {
            g_info[n] = (caller_info){caller, r, path};
            atomic_store_explicit(&g_info_n, n + 1, memory_order_release);
            c = &g_info[n];
        }
        dls_mutex_unlock(&g_rows_lock);
        if (!c)
            return r; /* every call site remembered is another one: this one is looked up each time */
    }
    atomic_store_explicit(&g_cache[h], c, memory_order_release);
    *lib = c->lib;
    return c->row;
}
