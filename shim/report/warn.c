/* Warn-once registry (see warn.h). */
#include "warn.h"

#include "../common/mutex.h"
#include "../common/map.h"
#include "../common/ownfd.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys already warned about: owned copies, in a map grown by doubling. */
static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_map g_keys = DLS_MAP_INIT(DLS_MAP_STRINGS, char *);

/* Doubles the set (64 slots at first); 0, or -1 when memory is short. */
static int grow(void) DLS_REQUIRES(g_lock)
{
    size_t cap = g_keys.cap ? g_keys.cap * 2 : 64;
    char **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    free(dls_map_rehash(&g_keys, slots, cap));
    return 0;
}

/* Returns 1 when key is new, and remembers it. When memory is short the key cannot be
 * remembered: it counts as new (a repeated warning is better than a lost one). */
static int first_time(const char *key)
{
    int fresh = 1;
    dls_mutex_lock(&g_lock);
    if (!dls_map_full(&g_keys) || grow() == 0) {
        size_t i = dls_map_index(&g_keys, (uintptr_t)key);
        char *copy;
        if (dls_map_key_at(&g_keys, i))
            fresh = 0;
        else if ((copy = strdup(key)) != NULL)
            dls_map_claim(&g_keys, i, (uintptr_t)copy);
    }
    dls_mutex_unlock(&g_lock);
    return fresh;
}

int dls_warn_once(const char *key, const char *fmt, ...)
{
    if (!first_time(key))
        return 0;
    char line[1024];
    int n = snprintf(line, sizeof line, "dlsync: warning: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    dls_ownfd_stderr(line, len); /* one write: lines from threads never interleave */
    return 1;
}

void dls_warn_reset_for_tests(void)
{
    dls_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_keys.cap; i++)
        free((char *)dls_map_key_at(&g_keys, i));
    free(dls_map_take(&g_keys));
    dls_mutex_unlock(&g_lock);
}
