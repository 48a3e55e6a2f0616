/* The command line of `dlsync report`, parsed apart from the command so the fuzzer can drive it.
 *
 *   dlsync report [--chrome-trace OUT.json | --chrome-trace=OUT.json] [--html OUT.html |
 *                 --html=OUT.html] [--json] [--debug-dir DIR]... [--help] LOG...
 *
 * Options may come anywhere among the logs; `--` ends them (what follows is a log even when it
 * begins with '-'); `-` is a log read from standard input (once). An OUT must be named: `-`
 * writes it to standard output; a value that looks like an option (`--chrome-trace --json`) is
 * refused, as is an option given twice (--debug-dir may be given several times: each adds a
 * directory), two outputs or --json and an output on standard output, an unknown option and a
 * command line without a log. */
#ifndef DLT_REPORT_OPTS_H
#define DLT_REPORT_OPTS_H

#include <stddef.h>

typedef struct {
    const char *trace;       /* --chrome-trace's OUT ("-": standard output), NULL when not asked */
    const char *html;        /* --html's OUT ("-": standard output), NULL when not asked */
    const char **debug_dirs; /* --debug-dir's directories in command-line order (malloc'd array) */
    size_t ndebug_dirs;
    int json;            /* --json: the summary as one JSON object */
    int help;            /* --help or -h: print the help, nothing else */
    const char **inputs; /* the logs in command-line order (pointers into argv; malloc'd array) */
    size_t ninputs;
} dlt_report_opts;

/* Parses argv[1..argc) (argv[0] is "report") into *o. Returns 0, or -1 with a one-line reason in
 * err (n bytes); -1 also when memory runs out. Free o with dlt_report_opts_free either way. */
int dlt_report_parse(int argc, char **argv, dlt_report_opts *o, char *err, size_t n);

/* Frees what dlt_report_parse allocated and zeroes *o. */
void dlt_report_opts_free(dlt_report_opts *o);

#endif
