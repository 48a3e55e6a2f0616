/* Warn-once registry (see warn.h). */
#include "warn.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_KEYS 256
#define KEY_LEN 64

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_keys[MAX_KEYS][KEY_LEN];
static int g_nkeys;

/* Returns 1 when key is new (and remembers it while there is room). */
static int first_time(const char *key)
{
    int fresh = 1;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nkeys; i++)
        if (strncmp(g_keys[i], key, KEY_LEN - 1) == 0) {
            fresh = 0;
            break;
        }
    if (fresh && g_nkeys < MAX_KEYS)
        snprintf(g_keys[g_nkeys++], KEY_LEN, "%s", key);
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
    ssize_t w = write(2, line, len); /* one write: lines from threads never interleave */
    (void)w;
    return 1;
}

void dls_warn_reset_for_tests(void)
{
    pthread_mutex_lock(&g_lock);
    g_nkeys = 0;
    pthread_mutex_unlock(&g_lock);
}
