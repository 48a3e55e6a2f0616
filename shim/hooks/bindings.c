/* Stub bindings, lazy resolution and DLSYNC_PROFILES rows (see bindings.h). */
#include "bindings.h"

#include "../common/config.h"
#include "../report/warn.h"
#include "resolve.h"
#include "trampoline.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
#define DLS_PROFILE(sym, ...) DLS_ROW_##sym,
#include "profiles.def"
#undef DLS_PROFILE
    BUILTIN_COUNT
};

struct dls_binding {
    _Atomic(const dls_profile *) profile;
    _Atomic(void *) real;
    const char *lib;               /* written before `real` is published */
    unsigned long long adds;       /* loader counter at the last failed search */
};

static dls_binding g_bind[BUILTIN_COUNT + DLS_POOL_SLOTS];
static size_t g_pool_used;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_profile g_file_rows[DLS_MAX_FILE_ROWS];
static size_t g_file_n;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

void *dls_stub_address(size_t i)
{
    return (void *)(dls_stubs + i * DLS_STUB_SIZE);
}

dls_binding *dls_binding_at(size_t i)
{
    if (i >= BUILTIN_COUNT + DLS_POOL_SLOTS)
        return NULL;
    if (i < BUILTIN_COUNT) {
        if (!atomic_load_explicit(&g_bind[i].profile, memory_order_acquire)) {
            size_t n;
            atomic_store_explicit(&g_bind[i].profile, &dls_profiles_builtin(&n)[i], memory_order_release);
        }
        return &g_bind[i];
    }
    return atomic_load_explicit(&g_bind[i].profile, memory_order_acquire) ? &g_bind[i] : NULL;
}

const dls_profile *dls_binding_profile(const dls_binding *b)
{
    return atomic_load_explicit(&b->profile, memory_order_acquire);
}

void *dls_binding_real(dls_binding *b, const char **lib)
{
    void *f = atomic_load_explicit(&b->real, memory_order_acquire);
    if (!f) {
        pthread_mutex_lock(&g_lock);
        f = atomic_load_explicit(&b->real, memory_order_relaxed);
        if (!f) {
            const char *path = "";
            f = dls_resolve(dls_binding_profile(b)->symbol, &path, &b->adds);
            if (f) {
                b->lib = path;
                atomic_store_explicit(&b->real, f, memory_order_release);
            }
        }
        pthread_mutex_unlock(&g_lock);
    }
    *lib = f ? b->lib : "";
    return f;
}

static void read_profiles_file(void)
{
    const char *path = dls_config_get()->profiles_path;
    if (!path)
        return;
    FILE *fp = fopen(path, "re");
    if (!fp) {
        dls_warn_once("profiles-open", "cannot read DLSYNC_PROFILES=%s; using the built-in profiles only", path);
        return;
    }
    size_t nb;
    const dls_profile *builtin = dls_profiles_builtin(&nb);
    char *line = NULL; /* getline: a line of any length is one line */
    size_t cap = 0;
    int lineno = 0;
    while (getline(&line, &cap, fp) >= 0) {
        char err[160], key[64];
        dls_profile row;
        lineno++;
        int rc = dls_profile_parse_line(line, &row, err, sizeof err);
        snprintf(key, sizeof key, "profiles-line-%d", lineno);
        if (rc < 0) {
            dls_warn_once(key, "%s:%d: %s; line skipped", path, lineno, err);
            continue;
        }
        if (rc == 0)
            continue;
        int dup = 0;
        for (size_t i = 0; i < nb && !dup; i++)
            dup = strcmp(builtin[i].symbol, row.symbol) == 0;
        if (dup) {
            dls_warn_once(key, "%s:%d: %s is a built-in profile; line skipped", path, lineno, row.symbol);
            continue;
        }
        if (g_file_n == DLS_MAX_FILE_ROWS) {
            dls_warn_once("profiles-full", "%s: more than %d rows; the rest are ignored", path, DLS_MAX_FILE_ROWS);
            break;
        }
        g_file_rows[g_file_n++] = row;
    }
    free(line);
    fclose(fp);
}

void dls_bindings_init(void)
{
    pthread_once(&g_once, read_profiles_file);
}

const dls_profile *dls_file_rows(size_t *n)
{
    dls_bindings_init();
    *n = g_file_n;
    return g_file_rows;
}

/* The row named `name` (built-in index in *builtin, or -1 for a file row), or NULL. */
static const dls_profile *find_row(const char *name, long *builtin)
{
    size_t n;
    const dls_profile *rows = dls_profiles_builtin(&n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].symbol[0] == name[0] && strcmp(rows[i].symbol, name) == 0) {
            *builtin = (long)i;
            return &rows[i];
        }
    *builtin = -1;
    rows = dls_file_rows(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].symbol, name) == 0)
            return &rows[i];
    return NULL;
}

void *dls_binding_wrap(const char *name, void *real)
{
    long bi;
    const dls_profile *row = find_row(name, &bi);
    if (!row || dls_addr_in_shim(real))
        return real;
    if (bi >= 0 && atomic_load_explicit(&g_bind[bi].real, memory_order_acquire) == real)
        return dls_stub_address((size_t)bi);
    void *stub = NULL;
    pthread_mutex_lock(&g_lock);
    for (size_t i = BUILTIN_COUNT; i < BUILTIN_COUNT + g_pool_used && !stub; i++)
        if (atomic_load_explicit(&g_bind[i].profile, memory_order_relaxed) == row &&
            atomic_load_explicit(&g_bind[i].real, memory_order_relaxed) == real)
            stub = dls_stub_address(i);
    if (!stub && g_pool_used < DLS_POOL_SLOTS) {
        dls_binding *b = &g_bind[BUILTIN_COUNT + g_pool_used];
        b->lib = dls_object_path(real);
        atomic_store_explicit(&b->real, real, memory_order_release);
        atomic_store_explicit(&b->profile, row, memory_order_release);
        stub = dls_stub_address(BUILTIN_COUNT + g_pool_used++);
    }
    pthread_mutex_unlock(&g_lock);
    if (!stub) {
        dls_warn_once("pool-full", "more than %d functions looked up by dlsym need wrapping; %s is not traced",
                      DLS_POOL_SLOTS, name);
        return real;
    }
    return stub;
}
