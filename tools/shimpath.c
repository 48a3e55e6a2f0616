/* Locating libdlsync.so relative to the dlsync executable (see shimpath.h). */
#include "shimpath.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dlt_find_shim(char *buf, size_t n)
{
    char exe[PATH_MAX];
    if (n)
        buf[0] = '\0';
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "%s/../lib/libdlsync.so", exe);
    char real[PATH_MAX];
    if (!realpath(want, real) || access(real, R_OK) != 0) {
        snprintf(buf, n, "%s", want);
        return -1;
    }
    if (strlen(real) >= n)
        return -1;
    snprintf(buf, n, "%s", real);
    return 0;
}
