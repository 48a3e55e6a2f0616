/* dlsync report: summary and timeline of JSON-lines logs (see commands.h). */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "chrome.h"
#include "logread.h"
#include "summary.h"

static int usage_error(const char *what)
{
    fprintf(stderr, "dlsync report: %s\n(dlsync --help for usage)\n", what);
    return DLS_EXIT_USAGE;
}

static int write_trace(const dls_log_set *set, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dlsync report: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = dls_chrome_write(set, f);
    if (fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "dlsync report: writing %s failed\n", path);
    else
        printf("\nTimeline written to %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", path);
    return rc;
}

int dls_cmd_report(int argc, char **argv)
{
    const char *trace = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(dls_usage_text, stdout);
            return 0;
        }
        if (strncmp(argv[i], "--chrome-trace=", 15) == 0) {
            trace = argv[i] + 15;
        } else if (strcmp(argv[i], "--chrome-trace") == 0) {
            if (i + 1 >= argc)
                return usage_error("--chrome-trace needs a file name");
            trace = argv[++i];
        } else {
            fprintf(stderr, "dlsync report: unknown option %s\n", argv[i]);
            return DLS_EXIT_USAGE;
        }
    }
    if (trace && !*trace)
        return usage_error("--chrome-trace needs a file name");
    if (i >= argc)
        return usage_error("no LOG to read");
    dls_log_set set = {0};
    for (; i < argc; i++)
        dls_log_read(&set, argv[i], stderr);
    int rc = set.files_failed ? 1 : 0;
    if (dls_summary_print(&set, stdout) != 0) {
        fprintf(stderr, "dlsync report: out of memory\n");
        rc = 1;
    }
    if (trace && write_trace(&set, trace) != 0)
        rc = 1;
    dls_log_set_free(&set);
    if (fflush(stdout) != 0)
        rc = 1;
    return rc;
}
