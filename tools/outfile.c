/* Writing a report's output file safely (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "textesc.h"

const char *dlt_outfile_refuse(const char *out, const char *const *inputs, size_t ninputs, const char *example)
{
    static char why[256];
    struct stat st, in;
    if (stat(out, &st) != 0)
        return NULL;
    if (S_ISDIR(st.st_mode))
        return "is a directory";
    for (size_t i = 0; i < ninputs; i++) {
        int same = strcmp(inputs[i], "-") == 0 ? fstat(0, &in) == 0 : stat(inputs[i], &in) == 0;
        if (same && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
            return "is also one of the logs to read";
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        char head[8] = "";
        int fd = open(out, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        ssize_t got = fd >= 0 ? read(fd, head, sizeof head) : -1;
        if (fd >= 0)
            close(fd);
        if (got >= 7 && memcmp(head, "{\"ev\":\"", 7) == 0) {
            snprintf(why, sizeof why,
                     "looks like a dlsync log; it is not overwritten (name the output's own file, e.g. %s)", example);
            return why;
        }
    }
    return NULL;
}

int dlt_outfile_same(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0)
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int dlt_outfile_write(const char *path, dlt_outfile_writer write, void *ctx)
{
    char safe[PATH_MAX], tmp[PATH_MAX + 16] = "";
    dlt_text_escape(path, safe, sizeof safe);
    if (strcmp(path, "-") == 0) {
        if (write(ctx, stdout) == 0 && fflush(stdout) == 0)
            return 0;
        fprintf(stderr, "dlsync report: writing to standard output failed\n");
        return -1;
    }
    struct stat st;
    FILE *f = NULL;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) {
        if ((size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) < sizeof tmp) {
            int fd = mkstemp(tmp);
            mode_t mask = umask(0);
            umask(mask);
            if (fd >= 0)
                fchmod(fd, 0666 & ~mask); /* as a file fopen made */
            f = fd >= 0 ? fdopen(fd, "w") : NULL;
            if (fd >= 0 && !f)
                close(fd);
        }
    } else {
        f = fopen(path, "w");
    }
    if (!f) {
        fprintf(stderr, "dlsync report: cannot write %s: %s\n", safe, strerror(errno));
        if (tmp[0])
            unlink(tmp);
        return -1;
    }
    int rc = write(ctx, f);
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && tmp[0] && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        fprintf(stderr, "dlsync report: writing %s failed\n", safe);
        if (tmp[0])
            unlink(tmp);
        return -1;
    }
    return 0;
}
