/* dlsync report: summary and timeline of JSON-lines logs (see commands.h). */
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chrome.h"
#include "logread.h"
#include "report_opts.h"
#include "summary.h"
#include "textesc.h"

static int usage_error(const char *what)
{
    fprintf(stderr, "dlsync report: %s\n(dlsync report --help for usage)\n", what);
    return DLS_EXIT_USAGE;
}

/* NULL when the timeline may be written to `out`, else why not: it is one of the logs, or an
 * existing file that looks like a dlsync log, or a directory. */
static const char *refuse_output(const char *out, const dls_report_opts *o)
{
    struct stat st, in;
    if (stat(out, &st) != 0)
        return NULL;
    if (S_ISDIR(st.st_mode))
        return "is a directory";
    for (size_t i = 0; i < o->ninputs; i++) {
        int same = strcmp(o->inputs[i], "-") == 0 ? fstat(0, &in) == 0 : stat(o->inputs[i], &in) == 0;
        if (same && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
            return "is also one of the logs to read";
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        char head[8] = "";
        int fd = open(out, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        ssize_t got = fd >= 0 ? read(fd, head, sizeof head) : -1;
        if (fd >= 0)
            close(fd);
        if (got >= 7 && memcmp(head, "{\"ev\":\"", 7) == 0)
            return "looks like a dlsync log; it is not overwritten (name the timeline's own file, e.g. "
                   "--chrome-trace timeline.json)";
    }
    return NULL;
}

/* Writes the timeline to path: standard output for "-"; a regular file through a new file in
 * the same directory renamed over it at the end, so a failure leaves what was there; anything
 * else (a FIFO, /dev/null) directly. Returns 0 or -1 (said on stderr). */
static int write_trace(const dls_log_set *set, const char *path, int say_where)
{
    char safe[PATH_MAX], tmp[PATH_MAX + 16] = "";
    dls_text_escape(path, safe, sizeof safe);
    if (strcmp(path, "-") == 0)
        return dls_chrome_write(set, stdout) == 0 && fflush(stdout) == 0 ? 0 : -1;
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
    int rc = dls_chrome_write(set, f);
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
    if (say_where)
        printf("\nTimeline written to %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", safe);
    return 0;
}

int dls_cmd_report(int argc, char **argv)
{
    dls_report_opts o;
    char err[512];
    if (dls_report_parse(argc, argv, &o, err, sizeof err) != 0) {
        dls_report_opts_free(&o);
        return usage_error(err);
    }
    if (o.help) {
        fputs(dls_usage_report, stdout);
        dls_report_opts_free(&o);
        return 0;
    }
    const char *why = o.trace && strcmp(o.trace, "-") != 0 ? refuse_output(o.trace, &o) : NULL;
    if (why) {
        char safe[PATH_MAX];
        snprintf(err, sizeof err, "--chrome-trace %s: %s", dls_text_escape(o.trace, safe, sizeof safe), why);
        dls_report_opts_free(&o);
        return usage_error(err);
    }
    dls_log_set set = {0};
    for (size_t i = 0; i < o.ninputs; i++)
        dls_log_read(&set, o.inputs[i], stderr);
    int rc = set.files_failed ? 1 : 0;
    /* The text goes to stderr when the timeline takes standard output. */
    FILE *text = o.trace && strcmp(o.trace, "-") == 0 ? stderr : stdout;
    if ((o.json ? dls_summary_print_json(&set, stdout) : dls_summary_print(&set, text)) != 0) {
        fprintf(stderr, "dlsync report: out of memory\n");
        rc = 1;
    }
    if (o.trace && write_trace(&set, o.trace, text == stdout && !o.json) != 0)
        rc = 1;
    dls_log_set_free(&set);
    dls_report_opts_free(&o);
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = 1;
    return rc;
}
