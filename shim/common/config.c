/* Reads the DLSYNC_* environment once (see config.h). */
#include "config.h"

#include "../report/warn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static dls_config g_config;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static const char *const mode_names[] = {"off", "trace", "check", "fix"};

const char *dls_mode_name(dls_mode m)
{
    return (unsigned)m < sizeof mode_names / sizeof *mode_names ? mode_names[m] : "?";
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
    const char *mode = env_value("DLSYNC_MODE");
    if (mode) {
        size_t i;
        for (i = 0; i < sizeof mode_names / sizeof *mode_names; i++)
            if (strcmp(mode, mode_names[i]) == 0)
                break;
        if (i < sizeof mode_names / sizeof *mode_names)
            c.mode = (dls_mode)i;
        else
            dls_warn_once("config-mode", "DLSYNC_MODE=%s is not one of off, trace, check, fix; using fix", mode);
    }
    const char *verbose = env_value("DLSYNC_VERBOSE");
    if (verbose) {
        if (strcmp(verbose, "1") == 0)
            c.verbose = 1;
        else if (strcmp(verbose, "0") != 0)
            dls_warn_once("config-verbose", "DLSYNC_VERBOSE=%s is not 0 or 1; using 0", verbose);
    }
    const char *debug_ops = env_value("DLSYNC_DEBUG_OPS");
    if (debug_ops) {
        if (strcmp(debug_ops, "1") == 0)
            c.debug_ops = 1;
        else if (strcmp(debug_ops, "0") != 0)
            dls_warn_once("config-debug-ops", "DLSYNC_DEBUG_OPS=%s is not 0 or 1; using 0", debug_ops);
    }
    c.log_path = env_value("DLSYNC_LOG");
    c.cupti_path = env_value("DLSYNC_CUPTI");
    c.profiles_path = env_value("DLSYNC_PROFILES");
    g_config = c;
}

const dls_config *dls_config_get(void)
{
    pthread_once(&g_once, read_config);
    return &g_config;
}

void dls_config_reset_for_tests(void)
{
    g_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    memset(&g_config, 0, sizeof g_config);
}
