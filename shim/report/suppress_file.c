/* The process's suppressions (see suppress_file.h). */
#include "suppress_file.h"

#include "../common/config.h"
#include "warn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (4u << 20) /* a larger file is not a suppressions file */

static dls_suppress_set g_set;
static char g_path[PATH_MAX];

static void bad_line(unsigned line, const char *reason, void *ctx)
{
    (void)ctx;
    char key[48];
    snprintf(key, sizeof key, "suppressions-line-%u", line);
    dls_warn_once(key, "DLSYNC_SUPPRESSIONS=%s:%u: %s; line ignored", g_path, line, reason);
}

/* Reads the whole regular file at path (malloc'd, *len bytes); NULL with *err set. */
static char *read_all(const char *path, size_t *len, int *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    *err = fd < 0 || fstat(fd, &st) != 0   ? errno
           : !S_ISREG(st.st_mode)          ? EINVAL
           : (size_t)st.st_size > MAX_FILE ? EFBIG
                                           : 0;
    char *buf = *err ? NULL : malloc((size_t)st.st_size + 1);
    if (!*err && !buf)
        *err = ENOMEM;
    size_t got = 0;
    for (ssize_t r = 1; buf && got < (size_t)st.st_size && r > 0;) {
        r = read(fd, buf + got, (size_t)st.st_size - got);
        got += r > 0 ? (size_t)r : 0;
    }
    if (fd >= 0)
        close(fd);
    *len = got;
    return buf;
}

void dls_suppress_load(void)
{
    const char *path = dls_config_get()->suppressions_path;
    if (!path)
        return;
    if (!realpath(path, g_path))
        snprintf(g_path, sizeof g_path, "%s", path);
    size_t len = 0;
    int err = 0;
    char *text = read_all(g_path, &len, &err);
    if (!text) {
        dls_warn_once("suppressions-open", "cannot read DLSYNC_SUPPRESSIONS=%s (%s); no race is suppressed", g_path,
                      err == EINVAL  ? "not a regular file"
                      : err == EFBIG ? "larger than 4 MiB"
                                     : strerror(err));
        return;
    }
    if (dls_suppress_parse(text, len, &g_set, bad_line, NULL) < 0)
        dls_warn_once("suppressions-memory", "out of memory reading DLSYNC_SUPPRESSIONS=%s; some rules are missing",
                      g_path);
    free(text);
}

const dls_suppress_rule *dls_suppress_lookup(int kind, const char *const *texts, size_t n)
{
    return g_set.n ? dls_suppress_first(&g_set, kind, texts, n) : NULL;
}

const char *dls_suppress_path(void)
{
    return g_path;
}
