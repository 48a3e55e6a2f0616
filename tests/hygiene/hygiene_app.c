/* Hygiene fixture: a program that treats descriptors and children the way daemons, launchers and
 * C API users do, to check that dlsync stays out of its files and its children. Every mode makes
 * one exchange through the MXNet-style fixture (libfw_capi.so) and prints its sum. Usage:
 *   hygiene_app run                 the exchange only
 *   hygiene_app daemon LOG DATA     finds dlsync's descriptor of LOG, prints "logfd=N cloexec=C",
 *                                   closes every descriptor from 3 up, opens DATA, moves it onto
 *                                   descriptor N, exchanges, writes "data\n" to DATA
 *   hygiene_app closed-stderr DIR   closes every descriptor (0-2 included), opens DIR/0, DIR/1,
 *                                   DIR/2 (they become 0-2), exchanges, writes "program\n" to 2
 *   hygiene_app spawn PROG ARGS...  runs PROG without LD_PRELOAD (the rest of the environment
 *                                   inherited), waits, exits with its status
 *   hygiene_app dlclose SHIM        dlopens SHIM, gets a tensor from dlsync_to_dlpack("mxnet"),
 *                                   dlcloses SHIM, then calls the tensor's deleter */
#include "../fixtures/fixture.h"
#include "dlsync.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static float g_data[6] = {1, 2, 3, 4, 5, 6};

/* One export + import through the PLT (wrapped when dlsync is preloaded); the sum, -1 on error. */
static double exchange(void)
{
    fw_array a = {g_data, 2, 3};
    DLManagedTensor *t = NULL;
    double s = -1;
    if (MXNDArrayToDLPack(&a, &t) != 0 || MXNDArrayFromDLPack(t, (void **)&s) != 0)
        return -1;
    return s;
}

static void close_from(int lo)
{
    for (int fd = lo; fd < 4096; fd++)
        close(fd);
}

/* The descriptor open on `path` (by /proc/self/fd), or -1. */
static int fd_of(const char *path)
{
    char want[PATH_MAX];
    if (!realpath(path, want))
        return -1;
    for (int fd = 0; fd < 4096; fd++) {
        char link[64], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, want) == 0)
            return fd;
    }
    return -1;
}

static int daemon_mode(const char *log, const char *data)
{
    int logfd = fd_of(log);
    printf("logfd=%d cloexec=%d\n", logfd, logfd >= 0 ? (fcntl(logfd, F_GETFD) & FD_CLOEXEC) != 0 : -1);
    fflush(stdout);
    close_from(3);
    int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    if (logfd >= 0 && logfd != fd && dup2(fd, logfd) == logfd) {
        close(fd);
        fd = logfd;
    }
    printf("sum %.1f\n", exchange());
    fflush(stdout);
    return write(fd, "data\n", 5) == 5 ? 0 : 1;
}

static int closed_stderr_mode(const char *dir)
{
    close_from(0);
    for (int i = 0; i < 3; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d", dir, i);
        if (open(path, O_RDWR | O_CREAT | O_TRUNC, 0644) != i)
            return 1;
    }
    double s = exchange();
    char line[64];
    int n = snprintf(line, sizeof line, "program %.1f\n", s);
    return write(2, line, (size_t)n) == n ? 0 : 1;
}

static int spawn_mode(char **argv)
{
    unsetenv("LD_PRELOAD");
    pid_t pid;
    int st;
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int dlclose_mode(const char *shim)
{
    void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", shim, dlerror());
        return 1;
    }
    int (*to)(const char *, void *, intptr_t, DLManagedTensorVersioned **) =
        (int (*)(const char *, void *, intptr_t, DLManagedTensorVersioned **))dlsym(h, "dlsync_to_dlpack");
    fw_array a = {g_data, 2, 3};
    DLManagedTensorVersioned *t = NULL;
    int rc = to ? to("mxnet", &a, DLSYNC_STREAM_NO_SYNC, &t) : -1;
    if (rc != DLSYNC_OK || !t) {
        fprintf(stderr, "dlsync_to_dlpack: %d\n", rc);
        return 1;
    }
    dlclose(h);
    t->deleter(t); /* code of the library just closed */
    printf("released\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "run") == 0) {
        printf("sum %.1f\n", exchange());
        return 0;
    }
    if (strcmp(mode, "daemon") == 0 && argc == 4)
        return daemon_mode(argv[2], argv[3]);
    if (strcmp(mode, "closed-stderr") == 0 && argc == 3)
        return closed_stderr_mode(argv[2]);
    if (strcmp(mode, "spawn") == 0 && argc >= 3)
        return spawn_mode(argv + 2);
    if (strcmp(mode, "dlclose") == 0 && argc == 3)
        return dlclose_mode(argv[2]);
    fprintf(stderr, "usage: hygiene_app run|daemon LOG DATA|closed-stderr DIR|spawn PROG...|dlclose SHIM\n");
    return 2;
}
