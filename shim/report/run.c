/* The run's identity and manifest (see run.h). */
#include "run.h"

#include "../common/config.h"
#include "log_head.h"
#include "warn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char g_made_id[24]; /* the identity dls_run_adopt made */

/* The start time of the process whose pid is in g_start_pid (a forked child reads its own). */
static _Atomic uint64_t g_start;
static atomic_int g_start_pid;

void dls_run_adopt(void)
{
    if (dls_config_get()->run_id || g_made_id[0])
        return;
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (dls_log_now_ns() * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)&r;
    snprintf(g_made_id, sizeof g_made_id, "%016llx", (unsigned long long)r);
    setenv(DLS_VAR(RUN_ID), g_made_id, 1);
}

const char *dls_run_id(void)
{
    const char *id = dls_config_get()->run_id;
    return id ? id : g_made_id;
}

/* Field 22 of /proc/self/stat (after the command name, which may hold spaces and parentheses). */
static uint64_t read_start(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

uint64_t dls_run_proc_start(void)
{
    int pid = (int)getpid();
    if (atomic_load_explicit(&g_start_pid, memory_order_acquire) != pid) {
        atomic_store_explicit(&g_start, read_start(), memory_order_relaxed);
        atomic_store_explicit(&g_start_pid, pid, memory_order_release);
    }
    return atomic_load_explicit(&g_start, memory_order_relaxed);
}

void dls_run_identity(dls_rec *j)
{
    dls_rec_str(j, "run", dls_run_id());
    dls_rec_u64(j, "proc_start", dls_run_proc_start());
    dls_rec_i64(j, "ppid", (int64_t)getppid());
}

int dls_run_has_manifest(void)
{
    return dls_config_get()->run_manifest != NULL;
}

void dls_run_begin(dls_rec *j, const char *ev)
{
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    dls_log_begin_n(j, ev, strlen(ev));
    dls_run_identity(j);
    dls_rec_str(j, "exe", exe);
}

/* Appends the line to the manifest; an errno value when it could not be. */
static int append(const char *path, const char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno;
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
    if (!err) {
        ssize_t w = write(fd, buf, len);
        err = w == (ssize_t)len ? 0 : w < 0 ? errno : EIO;
    }
    close(fd);
    return err;
}

void dls_run_append(dls_rec *j)
{
    const char *path = dls_config_get()->run_manifest;
    dls_rec_bytes(j, "}\n", 2);
    int err = path && !j->failed ? append(path, j->buf, j->len) : 0;
    if (err)
        dls_warn_once("run-manifest", "cannot tell the run about this process (%s=%s: %s); it counts as not checked",
                      DLS_VAR(RUN_MANIFEST), path, err == EINVAL ? "not a regular file" : strerror(err));
    dls_rec_done(j);
}
