/* Can the loader preload into a program (see preloadable.h). */
#include "preloadable.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

int dls_program_find(const char *name, const char *path, char *buf, size_t n)
{
    if (strchr(name, '/')) {
        snprintf(buf, n, "%s", name);
        return access(buf, X_OK);
    }
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        size_t len = strcspn(p, ":");
        struct stat st;
        if ((size_t)snprintf(buf, n, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < n && stat(buf, &st) == 0 &&
            S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 0;
        p += len;
        if (!*p)
            return -1;
    }
}

/* 1 when the 64-bit ELF file at fd has no PT_INTERP (a static program); 0 otherwise or unsure. */
static int is_static(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256 ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
        return 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
            return 0;
        if (ph.p_type == PT_INTERP)
            return 0;
    }
    return 1;
}

const char *dls_program_unreachable(const char *path, char *file, size_t n)
{
    snprintf(file, n, "%s", path);
    for (int depth = 0; depth < 4; depth++) {
        char head[PATH_MAX + 3];
        struct stat st;
        int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
            return NULL;
        ssize_t got = pread(fd, head, sizeof head - 1, 0);
        int script = got >= 2 && head[0] == '#' && head[1] == '!';
        int fixed = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        int alone = fixed && !script && is_static(fd);
        close(fd);
        if (!fixed)
            return NULL;
        if (st.st_mode & (S_ISUID | S_ISGID))
            return "it is set-user-ID or set-group-ID: the loader ignores LD_PRELOAD there";
        if (getxattr(file, "security.capability", NULL, 0) > 0)
            return "it has file capabilities: the loader ignores LD_PRELOAD there";
        if (alone)
            return "it is statically linked: LD_PRELOAD cannot load libdlsync.so into it";
        if (!script)
            return NULL;
        head[got] = '\0';
        const char *p = head + 2 + strspn(head + 2, " \t");
        size_t len = strcspn(p, " \t\n");
        if (!len || len >= n)
            return NULL;
        snprintf(file, n, "%.*s", (int)len, p);
    }
    return NULL;
}
