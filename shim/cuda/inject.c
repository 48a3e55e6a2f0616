/* How the driver finds the shim: InitializeInjection, and self-registration when preloaded.
 *
 * The driver loads the library named by CUDA_INJECTION64_PATH at cuInit and calls its
 * InitializeInjection; that is where the observer subscribes to CUPTI. A preloaded shim makes
 * this happen by itself: its constructor sets CUDA_INJECTION64_PATH to the shim's own absolute
 * path when the variable is unset, long before any cuInit. Nothing here loads or initializes
 * CUDA, and a process that never calls cuInit never loads CUPTI. When the variable already names
 * another library, that tool is left alone and the shim runs without an observer. */
#include "../common/config.h"
#include "../common/export.h"
#include "../report/warn.h"
#include "observer.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Called by the CUDA driver during cuInit (CUDA_INJECTION64_PATH). Returns 1. */
DLS_EXPORT int InitializeInjection(void);

int InitializeInjection(void)
{
    dls_cuda_observer_start();
    return 1;
}

/* 1 when `path` names the same file as `self`. */
static int same_file(const char *path, const char *self)
{
    char a[PATH_MAX];
    return realpath(path, a) && strcmp(a, self) == 0;
}

__attribute__((constructor)) static void self_register(void)
{
    if (dls_config_get()->mode == DLS_MODE_OFF)
        return;
    Dl_info info;
    char self[PATH_MAX];
    if (!dladdr((void *)InitializeInjection, &info) || !info.dli_fname || !realpath(info.dli_fname, self)) {
        dls_warn_once("cuda-self-path", "cannot find the path of libdlsync.so; CUDA observation needs CUDA_INJECTION64_PATH");
        dls_cuda_observer_set_reason("the shim could not find its own path to register with the CUDA driver");
        return;
    }
    const char *current = getenv("CUDA_INJECTION64_PATH");
    if (!current || !*current) {
        setenv("CUDA_INJECTION64_PATH", self, 1);
        return;
    }
    if (same_file(current, self))
        return;
    char why[PATH_MAX + 64];
    snprintf(why, sizeof why, "CUDA_INJECTION64_PATH names another tool (%s)", current);
    dls_warn_once("cuda-injection-taken", "%s; running without CUDA observation", why);
    dls_cuda_observer_set_reason(why);
}
