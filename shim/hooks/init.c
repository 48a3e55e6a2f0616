/* Start-up of the hooks layer: reads the configuration and DLSYNC_PROFILES, and opens the log
 * (its `start` record) when one is configured. Nothing else is initialized: no CUDA, no threads. */
#include "../common/config.h"
#include "../report/log.h"
#include "bindings.h"
#include "dlsym_hook.h"

__attribute__((constructor)) static void hooks_init(void)
{
    dls_dlsym_hook_enable();
    if (dls_config_get()->mode == DLS_MODE_OFF)
        return;
    dls_bindings_init();
    dls_log_enabled();
}
