/* The exec and spawn exports (see follow.h). */
#include "follow.h"

#include "../common/config.h"
#include "../common/export.h"
#include "../common/preloadable.h"
#include "../report/run.h"

#include <dlfcn.h>
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
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);

static _Atomic(void *) g_execvpe, g_spawn, g_spawnp;

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

/* The next definition of name after this library (the C library's, at its default version),
 * found once: the shim's dlsym passes a name it does not wrap straight on, as from this caller. */
static void *real(_Atomic(void *) *cache, const char *name)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f;
}

void dls_follow_init(void)
{
    real(&g_execvpe, "execvpe");
    real(&g_spawn, "posix_spawn");
    real(&g_spawnp, "posix_spawnp");
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

/* Why libdlsync.so will not be in the program at path started with environment envp, or NULL. */
static const char *unreachable(const char *path, char *const envp[])
{
    char file[PATH_MAX];
    const char *why = dls_program_unreachable(path, file, sizeof file);
    if (why)
        return why;
    const char *preload = env_of(envp, "LD_PRELOAD");
    if (!preload || !strstr(preload, "libdlsync.so"))
        return "its environment has no LD_PRELOAD naming libdlsync.so";
    if (!env_of(envp, DLS_VAR(RUN_MANIFEST)))
        return "its environment has no " DLS_VAR(RUN_MANIFEST);
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
    char path[PATH_MAX];
    int found = search ? dls_program_find(name, getenv("PATH"), path, sizeof path) == 0
                       : (snprintf(path, sizeof path, "%s", name), access(path, X_OK) == 0);
    if (!found)
        return; /* the call fails: nothing starts */
    const char *why = unreachable(path, envp);
    if (!why)
        return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    if (strlen(exe) > PATH_MAX / 2 || strlen(path) > PATH_MAX / 2)
        return;
    /* each escaped string at most 6 times its length: two half paths, the run id and the reason */
    char line[7 * PATH_MAX];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char *d = line + sprintf(line, "{\"ev\":\"exec\",\"t\":%llu,\"pid\":%d,\"tid\":%ld,\"run\":",
                             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
                             (int)getpid(), (long)syscall(SYS_gettid));
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
    execvpe_fn f = (execvpe_fn)real(&g_execvpe, "execvpe");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(file, argv, envp);
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* The execl family: the arguments after `arg` up to their NULL (for execle, then the environment)
 * become an argv on this frame, passed to execve (`search`: execvpe). */
static int exec_list(const char *file, const char *arg, va_list ap, int search, int with_env)
{
    va_list count;
    va_copy(count, ap);
    size_t n = 1;
    for (const char *a = arg; a; a = va_arg(count, const char *))
        n++;
    va_end(count);
    char *argv[n];
    argv[0] = (char *)arg;
    for (size_t i = 1; i < n; i++)
        argv[i] = va_arg(ap, char *);
    char *const *envp = with_env ? va_arg(ap, char *const *) : environ;
    return search ? execvpe(file, argv, envp) : execve(file, argv, envp);
}

int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(path, arg, ap, 0, 0);
    va_end(ap);
    return rc;
}

int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(file, arg, ap, 1, 0);
    va_end(ap);
    return rc;
}

int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(path, arg, ap, 0, 1);
    va_end(ap);
    return rc;
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                char *const argv[], char *const envp[])
{
    note(path, envp, 0, 1);
    spawn_fn f = (spawn_fn)real(&g_spawn, "posix_spawn");
    return f ? f(pid, path, fa, attr, argv, envp) : ENOSYS;
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                 char *const argv[], char *const envp[])
{
    note(file, envp, 1, 1);
    spawn_fn f = (spawn_fn)real(&g_spawnp, "posix_spawnp");
    return f ? f(pid, file, fa, attr, argv, envp) : ENOSYS;
}
