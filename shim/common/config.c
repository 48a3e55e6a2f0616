/* Reads the DLSYNC_* environment once (see config.h). */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dls_config g_config;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_inert;
const dls_config *_Atomic dls_config_read;

const char *dls_mode_name(dls_mode m)
{
    return dls_mode_text((int)m);
}

static void problem(dls_config *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Remembers one bad value for the start-up to print. */
static void problem(dls_config *c, const char *fmt, ...)
{
    if (c->nproblems == DLS_CONFIG_PROBLEMS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->problems[c->nproblems++], sizeof c->problems[0], fmt, ap);
    va_end(ap);
}

/* Empty values count as unset. */
static const char *env_value(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}

static void read_config(void)
{
    dls_config c = {.mode = DLS_MODE_FIX};
    if (g_inert) {
        c.mode = DLS_MODE_OFF;
        c.inert = 1;
        g_config = c;
        return;
    }
    const char *mode = env_value("DLSYNC_MODE");
    if (mode) {
        int m = dls_mode_from_name(mode);
        if (m >= 0)
            c.mode = (dls_mode)m;
        else
            problem(&c, "DLSYNC_MODE=%.64s is not one of off, trace, check, fix; using fix", mode);
    }
    const char *verbose = env_value("DLSYNC_VERBOSE");
    if (verbose) {
        if (strcmp(verbose, "1") == 0)
            c.verbose = 1;
        else if (strcmp(verbose, "0") != 0)
            problem(&c, "DLSYNC_VERBOSE=%.64s is not 0 or 1; using 0", verbose);
    }
    const char *debug_ops = env_value("DLSYNC_DEBUG_OPS");
    if (debug_ops) {
        if (strcmp(debug_ops, "1") == 0)
            c.debug_ops = 1;
        else if (strcmp(debug_ops, "0") != 0)
            problem(&c, "DLSYNC_DEBUG_OPS=%.64s is not 0 or 1; using 0", debug_ops);
    }
    const char *stack = env_value("DLSYNC_STACK");
    if (stack) {
        if (strcmp(stack, "native") == 0)
            c.stack = DLS_STACK_NATIVE;
        else if (strcmp(stack, "python") == 0)
            c.stack = DLS_STACK_PYTHON;
        else if (strcmp(stack, "both") != 0)
            problem(&c, "DLSYNC_STACK=%.64s is not native, python or both; using both", stack);
    }
    c.log_path = env_value("DLSYNC_LOG");
    c.cupti_path = env_value("DLSYNC_CUPTI");
    c.profiles_path = env_value("DLSYNC_PROFILES");
    g_config = c;
}

const dls_config *dls_config_get_first(void)
{
    pthread_once(&g_once, read_config);
    atomic_store_explicit(&dls_config_read, &g_config, memory_order_release);
    return &g_config;
}

void dls_config_make_inert(void)
{
    g_inert = 1;
    g_config.mode = DLS_MODE_OFF; /* in case the configuration was read already */
    g_config.inert = 1;
}

void dls_config_reset_for_tests(void)
{
    g_inert = 0;
    atomic_store(&dls_config_read, NULL);
    g_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    memset(&g_config, 0, sizeof g_config);
}
