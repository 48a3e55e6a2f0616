/* dlsync's own descriptors (see ownfd.h). */
#include "ownfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* What fd 2 was at start-up: 0 = not recorded yet, 1 = a file (g_err_dev/ino), 2 = closed. */
static atomic_int g_err_state;
static dev_t g_err_dev;
static ino_t g_err_ino;

void dls_ownfd_init_stderr(void)
{
    struct stat st;
    if (fstat(2, &st) != 0) {
        atomic_store(&g_err_state, 2);
        return;
    }
    g_err_dev = st.st_dev;
    g_err_ino = st.st_ino;
    atomic_store(&g_err_state, 1);
}

/* 1 when fd is open on the file (dev, ino); its size in *size when size is not NULL. */
static int same_file(int fd, dev_t dev, ino_t ino, off_t *size)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino)
        return 0;
    if (size)
        *size = st.st_size;
    return 1;
}

int dls_ownfd_stderr(const char *buf, size_t len)
{
    int state = atomic_load(&g_err_state);
    if (state == 2 || (state == 1 && !same_file(2, g_err_dev, g_err_ino, NULL)))
        return -1;
    return write(2, buf, len) == (ssize_t)len ? 0 : -1;
}

/* The lowest descriptor number for dlsync's files under the process's descriptor limit. */
static int floor_fd(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 2 * DLS_OWNFD_FLOOR)
        return DLS_OWNFD_FLOOR;
    return rl.rlim_cur > 20 ? (int)(rl.rlim_cur / 2) : 3;
}

static int open_own(const char *path, int extra, dls_ownfd *f)
{
    f->fd = -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra, 0644);
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    int high = fcntl(fd, F_DUPFD_CLOEXEC, floor_fd());
    if (high >= 0) {
        close(fd);
        fd = high;
    } /* else keep the low descriptor: still close-on-exec and checked before each write */
    f->fd = fd;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->opened_size = st.st_size;
    f->regular = S_ISREG(st.st_mode);
    return 0;
}

int dls_ownfd_open_append(const char *path, dls_ownfd *f)
{
    return open_own(path, 0, f);
}

int dls_ownfd_create(const char *path, dls_ownfd *f)
{
    return open_own(path, O_EXCL, f);
}

int dls_ownfd_write(const dls_ownfd *f, const char *buf, size_t len, uint64_t limit)
{
    off_t size = 0;
    if (!same_file(f->fd, f->dev, f->ino, &size))
        return ESTALE;
    if (limit && f->regular && (uint64_t)size + len > limit)
        return EFBIG;
    ssize_t w = write(f->fd, buf, len);
    if (w == (ssize_t)len)
        return 0;
    return w < 0 ? errno : EIO;
}

void dls_ownfd_close(dls_ownfd *f)
{
    if (same_file(f->fd, f->dev, f->ino, NULL))
        close(f->fd);
    f->fd = -1;
}
