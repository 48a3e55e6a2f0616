/* Can dlsync enter a program (see program.h). */
#include "program.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "elfsyms.h"
#include "textesc.h"

int dls_program_find(const char *name, char *buf, size_t n)
{
    struct stat st;
    if (strchr(name, '/')) {
        snprintf(buf, n, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        size_t len = strcspn(p, ":");
        if ((size_t)snprintf(buf, n, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < n && stat(buf, &st) == 0 &&
            S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 0;
        p += len;
        if (!*p)
            return -1;
    }
}

/* The interpreter of a #! script at path into interp (n bytes): 1, or 0 when it is no script. */
static int script_interpreter(const char *path, char *interp, size_t n)
{
    char head[PATH_MAX + 3];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    ssize_t got = fd >= 0 ? read(fd, head, sizeof head - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (got < 3 || head[0] != '#' || head[1] != '!')
        return 0;
    head[got] = '\0';
    const char *p = head + 2 + strspn(head + 2, " \t");
    size_t len = strcspn(p, " \t\n");
    if (!len || len >= n)
        return 0;
    snprintf(interp, n, "%.*s", (int)len, p);
    return 1;
}

const char *dls_program_unreachable(const char *path, char *why, size_t n)
{
    char file[PATH_MAX], next[PATH_MAX], safe[PATH_MAX];
    snprintf(file, sizeof file, "%s", path);
    for (int depth = 0; depth < 4 && script_interpreter(file, next, sizeof next); depth++)
        snprintf(file, sizeof file, "%s", next);
    dls_text_escape(file, safe, sizeof safe);
    struct stat st;
    if (stat(file, &st) != 0)
        return NULL;
    if (st.st_mode & (S_ISUID | S_ISGID)) {
        snprintf(why, n, "%s is set-%s-ID: the loader ignores LD_PRELOAD there", safe,
                 st.st_mode & S_ISUID ? "user" : "group");
        return why;
    }
    if (getxattr(file, "security.capability", NULL, 0) > 0) {
        snprintf(why, n, "%s has file capabilities: the loader ignores LD_PRELOAD there", safe);
        return why;
    }
    int interp = 1;
    char err[160];
    if (dls_elf_interp(file, &interp, err, sizeof err) == 0 && !interp) {
        snprintf(why, n, "%s is statically linked: LD_PRELOAD cannot load libdlsync.so into it", safe);
        return why;
    }
    return NULL;
}
