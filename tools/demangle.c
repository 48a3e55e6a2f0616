/* Demangling (see demangle.h). __cxa_demangle is looked up at run time in the C++ runtime
 * (libstdc++.so.6, else LLVM's libc++abi.so.1), so building the command needs no C++ library. */
#include "demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The C++ ABI's demangler (cxxabi.h). */
typedef char *cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn *g_demangle;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
    static const char *const runtimes[] = {"libstdc++.so.6", "libc++abi.so.1"};
    for (size_t i = 0; i < sizeof runtimes / sizeof *runtimes && !g_demangle; i++) {
        void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_LOCAL);
        if (h)
            g_demangle = (cxa_demangle_fn *)dlsym(h, "__cxa_demangle");
    }
}

int dlt_demangle_available(void)
{
    pthread_once(&g_once, find_demangler);
    return g_demangle != NULL;
}

char *dlt_demangle(const char *name)
{
    if (strncmp(name, "_Z", 2) == 0 && dlt_demangle_available()) {
        int status = -1;
        char *d = g_demangle(name, NULL, NULL, &status);
        if (d && status == 0)
            return d;
        free(d);
    }
    return strdup(name);
}
