/* Subprocess runner and path helpers for the tests (see dls_test.h). */
#include "dls_test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    char *buf;
    size_t len, cap;
} growbuf;

static int grow_append(growbuf *g, const char *data, size_t n)
{
    if (g->len + n + 1 > g->cap) {
        size_t cap = g->cap ? g->cap : 4096;
        while (cap < g->len + n + 1)
            cap *= 2;
        char *p = realloc(g->buf, cap);
        if (!p)
            return -1;
        g->buf = p;
        g->cap = cap;
    }
    memcpy(g->buf + g->len, data, n);
    g->len += n;
    g->buf[g->len] = '\0';
    return 0;
}

/* Builds the child's environment: a copy of environ with `extra` applied on top. */
static char **merged_env(const char *const extra[])
{
    size_t n = 0, m = 0;
    while (environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = calloc(n + m + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int overridden = 0;
        for (size_t j = 0; j < m; j++) {
            size_t klen = strcspn(extra[j], "=");
            if (strncmp(environ[i], extra[j], klen) == 0 && environ[i][klen] == '=')
                overridden = 1;
        }
        if (!overridden)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++) {
        const char *eq = strchr(extra[j], '=');
        if (eq && eq[1] != '\0')
            env[k++] = (char *)extra[j];
    }
    env[k] = NULL;
    return env;
}

int dls_run(const char *const argv[], const char *const env[], dls_run_result *res)
{
    int po[2], pe[2];
    memset(res, 0, sizeof *res);
    if (pipe2(po, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    char **cenv = merged_env(env);
    pid_t pid;
    int rc = cenv ? posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, cenv) : ENOMEM;
    free(cenv);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    if (rc != 0) {
        close(po[0]);
        close(pe[0]);
        return -1;
    }
    growbuf gout = {0}, gerr = {0};
    grow_append(&gout, "", 0);
    grow_append(&gerr, "", 0);
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[8192];
            ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
            if (got > 0) {
                grow_append(i == 0 ? &gout : &gerr, chunk, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    res->out = gout.buf;
    res->err = gerr.buf;
    return 0;
}

void dls_run_free(dls_run_result *res)
{
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}

const char *dls_build_path(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/%s", DLS_BUILD_DIR, rel);
    return buf;
}

const char *dls_preload_value(char *buf, size_t n, const char *lib)
{
    if (DLS_SAN_RUNTIME[0] != '\0')
        snprintf(buf, n, "%s:%s", DLS_SAN_RUNTIME, lib);
    else
        snprintf(buf, n, "%s", lib);
    return buf;
}

int dls_count(const char *hay, const char *needle)
{
    if (!hay || !needle || !*needle)
        return 0;
    int c = 0;
    size_t nl = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + nl, needle))
        c++;
    return c;
}

int dls_remove_tree(const char *dir)
{
    const char *argv[] = {"rm", "-rf", dir, NULL};
    dls_run_result r;
    if (dls_run(argv, NULL, &r) != 0)
        return -1;
    int status = r.status;
    dls_run_free(&r);
    return status == 0 && access(dir, F_OK) != 0 ? 0 : -1;
}

char *dls_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    growbuf g = {0};
    grow_append(&g, "", 0);
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        grow_append(&g, chunk, got);
    fclose(f);
    return g.buf;
}

double dls_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int dls_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dls_run_number(const char *const argv[], const char *const env[])
{
    dls_run_result r;
    if (dls_run(argv, env, &r) != 0)
        return -1;
    double v = r.status == 0 ? atof(r.out) : -1;
    dls_run_free(&r);
    return v;
}
