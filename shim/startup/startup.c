/* The shim's start-up and exit, in one place and in this order.
 *
 * At load (preloaded, linked, opened by the program, or by the CUDA driver as its injection
 * library):
 *   1. remember what fd 2 is, before anything may be written to it, and find the C library's
 *      exec and spawn calls the exports pass on (follow.h);
 *   2. stay inert when the process did not ask for dlsync (a child that dropped LD_PRELOAD but
 *      inherited CUDA_INJECTION64_PATH), or when another copy of libdlsync.so comes first in the
 *      process (claim.h: one warning naming both, and the run is told): the configuration
 *      becomes DLSYNC_MODE=off, so nothing is hooked, subscribed or written;
 *   3. read the configuration and warn about its bad values; with DLSYNC_MODE=off, stop here
 *      (the loader hooks stay off: every dlsym/dlopen goes straight to the C library);
 *   4. take the run's identity (report/run.h), read DLSYNC_PROFILES and DLSYNC_SUPPRESSIONS, open
 *      the log (its `start` record, and the run's manifest line);
 *   5. arrange to be the CUDA injection library (CUDA_INJECTION64_PATH);
 *   6. install the policy for check and fix;
 *   7. turn the loader hooks on and patch the loaded objects (hooks/engine.h): from here on,
 *      wrapped calls reach the policy.
 * Nothing here initializes CUDA or starts a thread: the CUPTI observer starts when the program's
 * own cuInit calls InitializeInjection.
 * At exit (the destructor): the operations still queued are applied, then the repeat counts of
 * race reports, then the summary (the log's last record, the run's `end` line, the summary line).
 * A process that ends through _exit (a forked worker, as Python's multiprocessing ends them)
 * reaches the _exit below, which this library exports: it writes the summary only (queued
 * operations and repeat counts are left, as no lock may be taken there) and ends the process. A
 * vfork or posix_spawn child, which shares its parent's memory and was never started here,
 * writes nothing. */
#include "../common/config.h"
#include "../common/export.h"
#include "../common/ownfd.h"
#include "../cuda/cupti_host.h"
#include "../cuda/inject.h"
#include "../cuda/observer.h"
#include "../hooks/capsule.h"
#include "../hooks/engine.h"
#include "../hooks/loader.h"
#include "../hooks/profile_file.h"
#include "../hooks/pythread.h"
#include "../policy/policy.h"
#include "../report/log.h"
#include "../report/race.h"
#include "../report/run.h"
#include "../report/summary.h"
#include "../report/suppress_file.h"
#include "../report/warn.h"
#include "claim.h"
#include "follow.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

DLS_EXPORT void _exit(int status);
DLS_EXPORT void _Exit(int status);

/* The process whose shim this is: set at start-up and in a forked child (atfork), so a child
 * that shares the parent's memory without either (vfork, posix_spawn, clone) is told apart. */
static atomic_int g_own_pid;

/* Another copy comes first: this one says so once, tells the run, and stays inert. */
static void stay_second(const char *active, const char *self)
{
    dls_warn_once("second-shim",
                  "a second libdlsync.so (%s) is loaded in this process beside %s, which does the work; this copy "
                  "stays inert",
                  self[0] ? self : "?", active);
    if (dls_run_has_manifest()) {
        dls_rec j;
        dls_run_begin(&j, "inert");
        dls_rec_str(&j, "self", self);
        dls_rec_str(&j, "active", active);
        dls_run_append(&j);
    }
    dls_config_make_inert();
}

static void after_fork_child(void)
{
    atomic_store(&g_own_pid, (int)getpid());
    dls_summary_fork_child();
}

/* Hands the binding engine its hook providers (the engine calls none of them by name): the
 * Python capsule layer, the GIL hooks, the loader's dlvsym and the CUPTI host, in that order. */
static void register_hooks(void)
{
    size_t n;
    const dls_engine_hook *h = dls_capsule_hooks(&n);
    dls_engine_add_hooks(h, n);
    h = dls_pythread_hooks(&n);
    dls_engine_add_hooks(h, n);
    h = dls_loader_hooks(&n);
    dls_engine_add_hooks(h, n);
    h = dls_cupti_host_hooks(&n);
    dls_engine_add_hooks(h, n);
}

__attribute__((constructor)) static void dls_start(void)
{
    dls_ownfd_init_stderr();
    dls_follow_init();
    if (dls_inject_unrequested()) {
        dls_config_make_inert();
        return;
    }
    const dls_config *c = dls_config_get();
    char active[PATH_MAX], self[PATH_MAX];
    if (c->mode != DLS_MODE_OFF && !dls_claim_first(active, self, sizeof active)) {
        stay_second(active, self);
        return;
    }
    for (unsigned i = 0; i < c->nproblems; i++) {
        char key[32];
        snprintf(key, sizeof key, "config-%u", i);
        dls_warn_once(key, "%s", c->problems[i]);
    }
    if (c->mode == DLS_MODE_OFF)
        return;
    atomic_store(&g_own_pid, (int)getpid());
    pthread_atfork(NULL, NULL, after_fork_child);
    dls_run_adopt();
    dls_profile_file_read();
    dls_suppress_load();
    dls_log_enabled();
    dls_inject_register();
    dls_policy_start();
    register_hooks();
    dls_loader_hooks_enable();
    dls_engine_scan(0);
}

/* 1 when a loaded object is the CUDA driver library. */
static int find_cuda(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    base = base ? base + 1 : info->dlpi_name;
    return base && strncmp(base, "libcuda.so", 10) == 0;
}

/* 1 when CUDA_INJECTION64_PATH still names this library (the driver would start its observer). */
static int injection_is_mine(void) DLS_UNLOCKED
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    Dl_info info;
    char a[PATH_MAX], b[PATH_MAX];
    return inj && dladdr((void *)injection_is_mine, &info) && info.dli_fname && realpath(inj, a) &&
           realpath(info.dli_fname, b) && strcmp(a, b) == 0;
}

/* How the process was observed (summary.h): in check, a process is not checked when the observer
 * could not start, or when the CUDA driver is loaded but can no longer start it. */
static void coverage(dls_summary_coverage *cov, char *why, size_t n) DLS_UNLOCKED
{
    cov->unchecked = NULL;
    cov->observer = dls_cuda_observer_active() ? "active" : dls_cuda_observer_warned() ? "failed" : "unused";
    if (dls_config_get()->mode != DLS_MODE_CHECK || strcmp(cov->observer, "active") == 0)
        return;
    if (strcmp(cov->observer, "failed") == 0)
        snprintf(why, n, "no CUDA observer (%s)", dls_cuda_observer_reason());
    else if (dl_iterate_phdr(find_cuda, NULL) && !injection_is_mine())
        snprintf(why, n,
                 "the CUDA driver is loaded but CUDA_INJECTION64_PATH no longer names libdlsync.so, so no "
                 "CUDA work was observed");
    else
        return;
    cov->unchecked = why;
}

static void emit_summary(void)
{
    dls_summary_coverage cov;
    char why[1024];
    coverage(&cov, why, sizeof why);
    dls_summary_emit(&cov);
}

__attribute__((destructor)) static void dls_stop(void)
{
    if (dls_config_get()->mode == DLS_MODE_OFF)
        return;
    dls_policy_stop();
    dls_race_emit_repeats();
    emit_summary();
}

void _exit(int status)
{
    const dls_config *c = atomic_load_explicit(&dls_config_read, memory_order_acquire);
    if (c && c->mode != DLS_MODE_OFF && atomic_load(&g_own_pid) == (int)getpid())
        emit_summary();
    for (;;)
        syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
    _exit(status);
}
