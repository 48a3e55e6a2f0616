/* The exec and spawn exports (see follow.h). */
#include "follow.h"

#include "../common/config.h"
#include "../common/export.h"
#include "../report/run.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);

static _Atomic(execvpe_fn) g_execvpe;
static _Atomic(spawn_fn) g_spawn, g_spawnp;

DLS_EXPORT int execve(const char *path, char *const argv[], char *const envp[]);
DLS_EXPORT int execv(const char *path, char *const argv[]);
DLS_EXPORT int execvp(const char *file, char *const argv[]);
DLS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]);
DLS_EXPORT int execl(const char *path, const char *arg, ...);
DLS_EXPORT int execlp(const char *file, const char *arg, ...);
DLS_EXPORT int execle(const char *path, const char *arg, ...);
DLS_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
DLS_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);

/* The next definition of name after this library (the C library's, at its default version): the
 * shim's dlsym passes a name it does not wrap straight on, as from this caller. */
#define REAL(cache, type, name)                                       \
    ({                                                                \
        type f_ = atomic_load_explicit(&cache, memory_order_acquire); \
        if (!f_) {                                                    \
            f_ = (type)dlsym(RTLD_NEXT, name);                        \
            atomic_store_explicit(&cache, f_, memory_order_release);  \
        }                                                             \
        f_;                                                           \
    })

void dls_follow_init(void)
{
    (void)REAL(g_execvpe, execvpe_fn, "execvpe");
    (void)REAL(g_spawn, spawn_fn, "posix_spawn");
    (void)REAL(g_spawnp, spawn_fn, "posix_spawnp");
}

/* The value of NAME in envp, or NULL. */
static const char *env_of(char *const envp[], const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* Finds file as execvp does (PATH of the calling process) into buf; 0, or -1 when absent. */
static int find(const char *file, char *buf, size_t n)
{
    if (strchr(file, '/')) {
        snprintf(buf, n, "%s", file);
        return access(buf, X_OK);
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        size_t len = strcspn(p, ":");
        struct stat st;
        if ((size_t)snprintf(buf, n, "%.*s%s%s", (int)len, p, len ? "/" : "", file) < n && stat(buf, &st) == 0 &&
            S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 0;
        p += len;
        if (!*p)
            return -1;
    }
}

/* 1 when the ELF file at fd has no PT_INTERP (a static program), 0 otherwise or when unsure. */
static int is_static(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
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

/* Why libdlsync.so will not enter the program at path (its #! interpreter for a script) with
 * environment envp, or NULL. */
static const char *unreachable(const char *path, char *const envp[], char *file, size_t n)
{
    snprintf(file, n, "%s", path);
    for (int depth = 0; depth < 4; depth++) {
        char head[PATH_MAX + 3];
        int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
            return NULL;
        struct stat st;
        ssize_t got = pread(fd, head, sizeof head - 1, 0);
        int fst = fstat(fd, &st);
        int stat_ = got > 0 && !(got >= 2 && head[0] == '#' && head[1] == '!') ? is_static(fd) : 0;
        close(fd);
        if (fst != 0)
            return NULL;
        if (st.st_mode & (S_ISUID | S_ISGID))
            return "it is set-user-ID or set-group-ID: the loader ignores LD_PRELOAD there";
        if (getxattr(file, "security.capability", NULL, 0) > 0)
            return "it has file capabilities: the loader ignores LD_PRELOAD there";
        if (stat_)
            return "it is statically linked: LD_PRELOAD cannot load libdlsync.so into it";
        if (got < 3 || head[0] != '#' || head[1] != '!')
            break;
        head[got] = '\0';
        const char *p = head + 2 + strspn(head + 2, " \t");
        size_t len = strcspn(p, " \t\n");
        if (!len || len >= n)
            break;
        snprintf(file, n, "%.*s", (int)len, p);
    }
    const char *preload = env_of(envp, "LD_PRELOAD");
    if (!preload || !strstr(preload, "libdlsync.so"))
        return "its environment has no LD_PRELOAD naming libdlsync.so";
    if (!env_of(envp, DLS_RUN_MANIFEST_VAR))
        return "its environment has no " DLS_RUN_MANIFEST_VAR;
    return NULL;
}

/* Writes s as a JSON string at d (room for 6 * strlen + 3); returns the end. */
static char *json_string(char *d, const char *s)
{
    *d++ = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            *d++ = '\\';
            *d++ = (char)c;
        } else if (c < 0x20) {
            d += sprintf(d, "\\u%04x", c);
        } else {
            *d++ = (char)c;
        }
    }
    *d++ = '"';
    return d;
}

/* Before starting `name` (searched in PATH when `search`) with envp: in a process of a run, the
 * manifest's `exec` line when dlsync will not be in it. Allocates nothing, takes no lock. */
static void note(const char *name, char *const envp[], int search, int spawn)
{
    const dls_config *c = atomic_load_explicit(&dls_config_read, memory_order_acquire);
    if (!c || c->mode == DLS_MODE_OFF || !c->run_manifest || !name)
        return;
    char path[PATH_MAX], file[PATH_MAX];
    if ((search ? find(name, path, sizeof path) : (snprintf(path, sizeof path, "%s", name), access(path, X_OK))) != 0)
        return; /* the call fails: nothing starts */
    const char *why = unreachable(path, envp, file, sizeof file);
    if (!why)
        return;
    char exe[PATH_MAX], line[4 * PATH_MAX * 6 / 4 + 512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char *d = line + sprintf(line, "{\"ev\":\"exec\",\"t\":%llu,\"pid\":%d,\"tid\":%ld,\"run\":",
                             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
                             (int)getpid(), (long)syscall(SYS_gettid));
    if (strlen(exe) > PATH_MAX / 2 || strlen(path) > PATH_MAX / 2)
        return;
    d = json_string(d, dls_run_id());
    d += sprintf(d, ",\"proc_start\":%llu,\"ppid\":%d,\"exe\":", (unsigned long long)dls_run_proc_start(),
                 (int)getppid());
    d = json_string(d, exe);
    d += sprintf(d, ",\"path\":");
    d = json_string(d, path);
    d += sprintf(d, ",\"why\":");
    d = json_string(d, why);
    d += sprintf(d, ",\"spawn\":%s}\n", spawn ? "true" : "false");
    int fd = open(c->run_manifest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        (void)!write(fd, line, (size_t)(d - line));
    if (fd >= 0)
        close(fd);
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    note(path, envp, 0, 0);
    return (int)syscall(SYS_execve, path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    note(file, envp, 1, 0);
    execvpe_fn real = REAL(g_execvpe, execvpe_fn, "execvpe");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(file, argv, envp);
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* The number of arguments of an execl-family call, its closing NULL included. */
static size_t count_args(const char *arg, va_list ap)
{
    size_t n = 1;
    for (const char *a = arg; a; a = va_arg(ap, const char *))
        n++;
    return n;
}

/* Fills argv (n entries) from an execl-family call's arguments; returns the va_list position
 * after the NULL in *ap. */
#define FILL_ARGS(argv, n, arg, ap)         \
    do {                                    \
        argv[0] = (char *)(arg);            \
        for (size_t i_ = 1; i_ < (n); i_++) \
            argv[i_] = va_arg(ap, char *);  \
    } while (0)

int execl(const char *path, const char *arg, ...)
{
    va_list ap, cp;
    va_start(ap, arg);
    va_copy(cp, ap);
    size_t n = count_args(arg, cp);
    va_end(cp);
    char *argv[n];
    FILL_ARGS(argv, n, arg, ap);
    va_end(ap);
    return execve(path, argv, environ);
}

int execlp(const char *file, const char *arg, ...)
{
    va_list ap, cp;
    va_start(ap, arg);
    va_copy(cp, ap);
    size_t n = count_args(arg, cp);
    va_end(cp);
    char *argv[n];
    FILL_ARGS(argv, n, arg, ap);
    va_end(ap);
    return execvpe(file, argv, environ);
}

int execle(const char *path, const char *arg, ...)
{
    va_list ap, cp;
    va_start(ap, arg);
    va_copy(cp, ap);
    size_t n = count_args(arg, cp);
    va_end(cp);
    char *argv[n];
    FILL_ARGS(argv, n, arg, ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                char *const argv[], char *const envp[])
{
    note(path, envp, 0, 1);
    spawn_fn real = REAL(g_spawn, spawn_fn, "posix_spawn");
    return real ? real(pid, path, fa, attr, argv, envp) : ENOSYS;
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                 char *const argv[], char *const envp[])
{
    note(file, envp, 1, 1);
    spawn_fn real = REAL(g_spawnp, spawn_fn, "posix_spawnp");
    return real ? real(pid, file, fa, attr, argv, envp) : ENOSYS;
}
