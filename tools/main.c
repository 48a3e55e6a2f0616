/* The dlsync command: dispatches to run, scan and report (see commands.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common/names.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(dlt_usage_text, stderr);
        return DLS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0)
        return dlt_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "scan") == 0)
        return dlt_cmd_scan(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return dlt_cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "--version") == 0) {
        puts("dlsync " DLS_VERSION);
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(dlt_usage_text, stdout);
        fputc('\n', stdout);
        dlt_usage_variables(stdout);
        return 0;
    }
    fprintf(stderr, "dlsync: unknown command '%s' (expected run, scan or report; dlsync --help for usage)\n", cmd);
    return DLS_EXIT_USAGE;
}
