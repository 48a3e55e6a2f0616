/* Stub bindings and DLSYNC_PROFILES rows (see bindings.h). */
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

dls_binding dls_binding_table[DLS_STUB_COUNT];
static size_t g_used;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_profile g_file_rows[DLS_MAX_FILE_ROWS];
static size_t g_file_n;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

void *dls_stub_address(size_t i, const dls_profile *row)
{
    return (void *)((row->scalar ? dls_stubs_scalar : dls_stubs) + i * DLS_STUB_SIZE);
}

void *dls_binding_stub(const dls_profile *row, void *real)
{
    const char *lib = dls_object_path(real);
    void *stub = NULL;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_used && !stub; i++)
        if (atomic_load_explicit(&dls_binding_table[i].profile, memory_order_relaxed) == row &&
            dls_binding_table[i].real == real)
            stub = dls_stub_address(i, row);
    if (!stub && g_used < DLS_STUB_COUNT) {
        dls_binding *b = &dls_binding_table[g_used];
        b->real = real;
        b->lib = lib;
        atomic_store_explicit(&b->profile, row, memory_order_release);
        stub = dls_stub_address(g_used++, row);
    }
    pthread_mutex_unlock(&g_lock);
    if (!stub)
        dls_warn_once("stubs-full", "more than %d wrapped functions; %s in %s is not traced", DLS_STUB_COUNT,
                      dls_profile_name(row), lib);
    return stub;
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

const dls_profile *dls_profile_find(const char *name)
{
    size_t n;
    const dls_profile *rows = dls_profiles_builtin(&n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].symbol[0] == name[0] && strcmp(rows[i].symbol, name) == 0)
            return &rows[i];
    rows = dls_file_rows(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].symbol, name) == 0)
            return &rows[i];
    return NULL;
}
