/* Running scenario programs for the tests (see scen_run.h). */
#include "scen_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const scen_names[] = {
    "side_stream",
    "legacy_stream",
    "per_thread",
    "host_copy",
    "host_read_sync",
    "release_reuse",
    "round_trip",
    "two_streams",
    "overlap_views",
    "threads",
    "dlsym",
    "opaque",
    "graph_capture",
    "devices_legacy",
    "devices_stream",
    "devices_peer",
    "devices_threads",
    "device_reset",
    "host_signal",
    "concurrent_sync",
    "exchange_api",
    "exchange_api_view",
    "release_later",
    "legacy_overlap",
    /* two-way hazards */
    "write_after_use",
    "in_place_write",
    "release_early",
    "release_early_threads",
    "release_early_round",
    "write_after_use_devices",
    "kernel_pair",
    "write_after_use_capture",
    "read_only",
    NULL,
};

int scen_run(const char *name, const char *variant, const char *mode, const char *const *extra, scen_outcome *o)
{
    static unsigned seq;
    char prog[1024], rel[128], shim[1024], preload[2048], preload_env[2100], mode_env[64], log[256], log_env[300];
    snprintf(rel, sizeof rel, "scenarios/scen_%s", name);
    dls_build_path(prog, sizeof prog, rel);
    snprintf(log, sizeof log, "/tmp/dlsync-scen-%d-%u.json", (int)getpid(), seq++);
    unlink(log);
    const char *env[24];
    int n = 0;
    env[n++] = "CUDA_INJECTION64_PATH=";
    env[n++] = "DLSYNC_VERBOSE=";
    if (mode) {
        dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
        dls_preload_value(preload, sizeof preload, shim);
        snprintf(preload_env, sizeof preload_env, "LD_PRELOAD=%s", preload);
        snprintf(mode_env, sizeof mode_env, "DLSYNC_MODE=%s", mode);
        snprintf(log_env, sizeof log_env, "DLSYNC_LOG=%s", log);
        env[n++] = preload_env;
        env[n++] = mode_env;
        env[n++] = log_env;
    } else {
        env[n++] = "LD_PRELOAD=";
        env[n++] = "DLSYNC_LOG=";
    }
    for (; extra && *extra && n < 23; extra++)
        env[n++] = *extra;
    env[n] = NULL;
    const char *argv[] = {prog, variant, NULL};
    if (dls_run(argv, env, &o->r) != 0)
        return -1;
    o->log = dls_read_file(log);
    if (!o->log)
        o->log = calloc(1, 1);
    unlink(log);
    return 0;
}

void scen_run_free(scen_outcome *o)
{
    dls_run_free(&o->r);
    free(o->log);
    o->log = NULL;
}

int scen_records(const scen_outcome *o, const char *ev)
{
    char needle[64];
    snprintf(needle, sizeof needle, "{\"ev\":\"%s\"", ev);
    return dls_count(o->log, needle);
}
