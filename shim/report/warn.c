/* Warn-once registry (see warn.h). */
#include "warn.h"

#include "../common/ownfd.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys already warned about: an open-addressing set of owned copies, at most half full. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char **g_keys;
static size_t g_cap, g_n;

static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

/* The slot holding key, or the empty slot where it belongs. g_cap > 0. */
static size_t slot_of(char **keys, size_t cap, const char *key)
{
    size_t i = hash(key) & (cap - 1);
    while (keys[i] && strcmp(keys[i], key) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

/* Doubles the set (64 slots at first); 0, or -1 when memory is short. */
static int grow(void)
{
    size_t cap = g_cap ? g_cap * 2 : 64;
    char **keys = calloc(cap, sizeof *keys);
    if (!keys)
        return -1;
    for (size_t i = 0; i < g_cap; i++)
        if (g_keys[i])
            keys[slot_of(keys, cap, g_keys[i])] = g_keys[i];
    free(g_keys);
    g_keys = keys;
    g_cap = cap;
    return 0;
}

/* Returns 1 when key is new, and remembers it. When memory is short the key cannot be
 * remembered: it counts as new (a repeated warning is better than a lost one). */
static int first_time(const char *key)
{
    int fresh = 1;
    pthread_mutex_lock(&g_lock);
    if ((g_n + 1) * 2 <= g_cap || grow() == 0) {
        size_t i = slot_of(g_keys, g_cap, key);
        if (g_keys[i])
            fresh = 0;
        else if ((g_keys[i] = strdup(key)) != NULL)
            g_n++;
    }
    pthread_mutex_unlock(&g_lock);
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
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_cap; i++)
        free(g_keys[i]);
    free(g_keys);
    g_keys = NULL;
    g_cap = g_n = 0;
    pthread_mutex_unlock(&g_lock);
}
