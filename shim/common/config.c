/* Reads the DLSYNC_* environment once (see config.h). */
#include "config.h"

#include "compiler.h"

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

static void problem(dls_config *c, const char *fmt, ...) DLS_PRINTF(2, 3);

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

/* DLSYNC_<name>: 0 or 1 into *out (left alone when unset or bad). */
static void read_flag(dls_config *c, const char *name, int *out)
{
    const char *v = env_value(name);
    if (!v)
        return;
    if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0)
        *out = v[0] == '1';
    else
        problem(c, "%s=%.64s is not 0 or 1; using 0", name, v);
}

/* The run's variables that `dlsync run` sets (common/names.h): kept only when well formed. */
static void read_run(dls_config *c)
{
    const char *id = env_value(DLS_RUN_ID_VAR);
    if (id && dls_run_id_valid(id))
        c->run_id = id;
    else if (id)
        problem(c, DLS_RUN_ID_VAR "=%.64s is not 1 to 64 letters, digits, '-', '_' or '.'; making a new one", id);
    const char *manifest = env_value(DLS_RUN_MANIFEST_VAR);
    if (manifest && manifest[0] == '/')
        c->run_manifest = manifest;
    else if (manifest)
        problem(c, DLS_RUN_MANIFEST_VAR "=%.64s is not an absolute path; the run is not told of this process",
                manifest);
}

static void read_config(void)
{
    dls_config c = {.mode = DLS_MODE_FIX, .log_limit = DLS_LOG_LIMIT_DEFAULT};
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
    read_flag(&c, "DLSYNC_VERBOSE", &c.verbose);
    read_flag(&c, "DLSYNC_DEBUG_OPS", &c.debug_ops);
    read_flag(&c, "DLSYNC_QUIET", &c.quiet);
    const char *limit = env_value("DLSYNC_LOG_LIMIT");
    if (limit && dls_parse_size(limit, &c.log_limit) != 0) {
        c.log_limit = DLS_LOG_LIMIT_DEFAULT;
        problem(&c, "DLSYNC_LOG_LIMIT=%.64s is not a size (digits with an optional k, m or g; 0 for none); using 64m",
                limit);
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
    c.suppressions_path = env_value("DLSYNC_SUPPRESSIONS");
    read_run(&c);
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
