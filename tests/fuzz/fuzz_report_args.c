/* libFuzzer harness: the command line of `dlsync report` (tools/report_opts.c). The input's
 * NUL-separated parts are the arguments after "report". Properties: no crash or leak; a refused
 * line always says why; an accepted one (unless --help) has at least one log, every log and every
 * debug directory is one of the arguments, standard input at most once, a named timeline and page
 * that are each "-" or no option, debug directories that are no option, and never two of --json,
 * the timeline and the page on standard output. */
#include "report_opts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    char *text = malloc(n + 1);
    if (!text)
        return 0;
    memcpy(text, data, n);
    text[n] = '\0';
    char *argv[65] = {"report"};
    int argc = 1;
    for (size_t at = 0; at <= n && argc < 64;) {
        argv[argc++] = text + at;
        at += strlen(text + at) + 1;
    }
    argv[argc] = NULL;
    dlt_report_opts o;
    char err[256];
    int rc = dlt_report_parse(argc, argv, &o, err, sizeof err);
    if (rc != 0 && !err[0])
        abort();
    if (rc == 0 && !o.help) {
        int stdin_n = 0;
        if (!o.ninputs)
            abort();
        for (size_t i = 0; i < o.ninputs; i++) {
            int found = 0;
            for (int a = 1; a < argc; a++)
                found |= o.inputs[i] == argv[a];
            if (!found)
                abort();
            stdin_n += strcmp(o.inputs[i], "-") == 0;
        }
        if (stdin_n > 1)
            abort();
        const char *outs[] = {o.trace, o.html};
        int on_stdout = o.json;
        for (size_t k = 0; k < 2; k++) {
            if (outs[k] && (!outs[k][0] || (outs[k][0] == '-' && outs[k][1])))
                abort();
            on_stdout += outs[k] && strcmp(outs[k], "-") == 0;
        }
        if (on_stdout > 1)
            abort();
        for (size_t i = 0; i < o.ndebug_dirs; i++) {
            int found = 0;
            for (int a = 1; a < argc; a++)
                found |= o.debug_dirs[i] == argv[a] ||
                         (strncmp(argv[a], "--debug-dir=", 12) == 0 && o.debug_dirs[i] == argv[a] + 12);
            if (!found || !o.debug_dirs[i][0] || o.debug_dirs[i][0] == '-')
                abort();
        }
    }
    dlt_report_opts_free(&o);
    free(text);
    return 0;
}
