/* InitializeInjection, self-registration and the inert-child test (see inject.h). */
#include "inject.h"

#include "../common/config.h"
#include "../common/export.h"
#include "../common/names.h"
#include "../report/warn.h"
#include "observer.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Called by the CUDA driver during cuInit (CUDA_INJECTION64_PATH). Returns 1. */
DLS_EXPORT int InitializeInjection(void);

/* The shim's own absolute path in self (PATH_MAX bytes); 0, or -1 when unknown. The address asked
 * about is a static function's: an exported one (InitializeInjection) may resolve to another
 * library's definition loaded earlier in the global scope (an injection tool). */
static int self_path(char *self) DLS_UNLOCKED
{
    Dl_info info;
    return dladdr((void *)self_path, &info) && info.dli_fname && realpath(info.dli_fname, self) ? 0 : -1;
}

/* 1 when `path` names the same file as `self`. */
static int same_file(const char *path, const char *self)
{
    char a[PATH_MAX];
    return realpath(path, a) && strcmp(a, self) == 0;
}

/* Loads the injection library the shim took the place of and runs its InitializeInjection, as
 * the driver would have; says once when that fails (an inert shim says nothing). */
static void initialize_chained(void)
{
    const char *tool = dls_config_passed(DLS_PASSED_CHAINED_INJECTION);
    char self[PATH_MAX];
    if (!tool || self_path(self) != 0 || same_file(tool, self))
        return;
    void *lib = dlopen(tool, RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
    if (!init) {
        const char *err = dlerror();
        if (dls_config_get()->mode != DLS_MODE_OFF)
            dls_warn_once("cuda-chained-injection", "could not initialize the CUDA injection library %s (%s)", tool,
                          err ? err : "no InitializeInjection");
        return;
    }
    init();
}

int InitializeInjection(void)
{
    initialize_chained();
    dls_cuda_observer_start();
    return 1;
}

/* 1 when LD_PRELOAD (entries separated by ':' or blanks) names the shim: by path, or by its file
 * name alone (found through the library path). */
static int preloaded(const char *self)
{
    const char *v = getenv("LD_PRELOAD");
    const char *base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
    while (v && *v) {
        size_t n = strcspn(v, ": \t");
        char entry[PATH_MAX];
        if (n > 0 && n < sizeof entry) {
            memcpy(entry, v, n);
            entry[n] = '\0';
            if (strchr(entry, '/') ? same_file(entry, self) : strcmp(entry, base) == 0)
                return 1;
        }
        v += n + (v[n] != '\0');
    }
    return 0;
}

int dls_inject_unrequested(void)
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    const char *mark = dls_config_passed(DLS_PASSED_AUTO_INJECTION);
    char self[PATH_MAX];
    if (!inj || !mark || strcmp(inj, mark) != 0 || self_path(self) != 0 || !same_file(inj, self) || preloaded(self))
        return 0;
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!cuda)
        return 0; /* loaded before CUDA: linked or opened by the program itself */
    dlclose(cuda);
    return 1;
}

void dls_inject_register(void)
{
    char self[PATH_MAX];
    if (self_path(self) != 0) {
        dls_warn_once("cuda-self-path",
                      "cannot find the path of libdlsync.so; CUDA observation needs CUDA_INJECTION64_PATH");
        dls_cuda_observer_set_reason("the shim could not find its own path to register with the CUDA driver");
        return;
    }
    const char *current = getenv("CUDA_INJECTION64_PATH");
    if (current && *current && same_file(current, self))
        return;
    if (current && *current)
        setenv(DLS_VAR(CHAINED_INJECTION), current, 1);
    setenv("CUDA_INJECTION64_PATH", self, 1);
    setenv(DLS_VAR(AUTO_INJECTION), self, 1);
}
