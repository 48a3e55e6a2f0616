/* The shim's start-up and exit, in one place and in this order.
 *
 * At load (preloaded, linked, opened by the program, or by the CUDA driver as its injection
 * library):
 *   1. remember what fd 2 is, before anything may be written to it;
 *   2. stay inert when the process did not ask for dlsync (a child that dropped LD_PRELOAD but
 *      inherited CUDA_INJECTION64_PATH): the configuration becomes DLSYNC_MODE=off, so nothing is
 *      hooked, subscribed or written;
 *   3. read the configuration and warn about its bad values; with DLSYNC_MODE=off, stop here
 *      (the loader hooks stay off: every dlsym/dlopen goes straight to the C library);
 *   4. read DLSYNC_PROFILES, open the log (its `start` record);
 *   5. arrange to be the CUDA injection library (CUDA_INJECTION64_PATH);
 *   6. install the policy for check and fix;
 *   7. turn the loader hooks on and patch the loaded objects (hooks/engine.h): from here on,
 *      wrapped calls reach the policy.
 * Nothing here initializes CUDA or starts a thread: the CUPTI observer starts when the program's
 * own cuInit calls InitializeInjection.
 * At exit: the operations still queued are applied, then the repeat counts of race reports, then
 * the summary (the log's last record). */
#include "../common/config.h"
#include "../common/ownfd.h"
#include "../cuda/inject.h"
#include "../hooks/bindings.h"
#include "../hooks/engine.h"
#include "../hooks/loader.h"
#include "../policy/policy.h"
#include "../report/log.h"
#include "../report/race.h"
#include "../report/summary.h"
#include "../report/warn.h"

#include <stdio.h>

__attribute__((constructor)) static void dls_start(void)
{
    dls_ownfd_init_stderr();
    if (dls_inject_unrequested()) {
        dls_config_make_inert();
        return;
    }
    const dls_config *c = dls_config_get();
    for (unsigned i = 0; i < c->nproblems; i++) {
        char key[32];
        snprintf(key, sizeof key, "config-%u", i);
        dls_warn_once(key, "%s", c->problems[i]);
    }
    if (c->mode == DLS_MODE_OFF)
        return;
    dls_bindings_init();
    dls_log_enabled();
    dls_inject_register();
    dls_policy_start();
    dls_loader_hooks_enable();
    dls_engine_scan(0);
}

__attribute__((destructor)) static void dls_stop(void)
{
    if (dls_config_get()->mode == DLS_MODE_OFF)
        return;
    dls_policy_stop();
    dls_race_emit_repeats();
    dls_summary_emit();
}
