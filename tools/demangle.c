/* Demangling (see demangle.h); the tool links libstdc++ for __cxa_demangle. */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

/* From the C++ ABI (cxxabi.h), declared here so this file stays C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *dls_demangle(const char *name)
{
    if (strncmp(name, "_Z", 2) == 0) {
        int status = -1;
        char *d = __cxa_demangle(name, NULL, NULL, &status);
        if (d && status == 0)
            return d;
        free(d);
    }
    return strdup(name);
}
