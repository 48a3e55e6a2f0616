/* `dlsync report` command line (see report_opts.h). */
#include "report_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textesc.h"

static int fail(char *err, size_t n, const char *fmt, const char *arg)
{
    char safe[256];
    snprintf(err, n, fmt, dls_text_escape(arg, safe, sizeof safe));
    return -1;
}

int dls_report_parse(int argc, char **argv, dls_report_opts *o, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    err[0] = '\0';
    o->inputs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *o->inputs);
    if (!o->inputs)
        return fail(err, n, "%s", "out of memory");
    int options = 1, stdin_seen = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0) {
            options = 0;
            continue;
        }
        if (options && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            o->help = 1;
            continue;
        }
        if (options && strcmp(a, "--json") == 0) {
            if (o->json)
                return fail(err, n, "%s given twice", a);
            o->json = 1;
            continue;
        }
        if (options && strncmp(a, "--chrome-trace", 14) == 0 && (a[14] == '\0' || a[14] == '=')) {
            const char *v = a[14] == '=' ? a + 15 : i + 1 < argc ? argv[++i] : NULL;
            if (o->trace)
                return fail(err, n, "%s given twice", "--chrome-trace");
            if (!v || !*v)
                return fail(err, n, "%s needs a file name (or - for standard output)", "--chrome-trace");
            if (v[0] == '-' && v[1])
                return fail(err, n, "--chrome-trace needs a file name (or - for standard output), not the option %s",
                            v);
            o->trace = v;
            continue;
        }
        if (options && a[0] == '-' && a[1])
            return fail(err, n, "unknown option %s", a);
        if (strcmp(a, "-") == 0 && stdin_seen++)
            return fail(err, n, "%s (standard input) given twice", a);
        o->inputs[o->ninputs++] = a;
    }
    if (o->help)
        return 0;
    if (o->json && o->trace && strcmp(o->trace, "-") == 0)
        return fail(err, n, "%s", "--json and --chrome-trace - would both write to standard output");
    if (!o->ninputs)
        return fail(err, n, "%s", "no LOG to read");
    return 0;
}

void dls_report_opts_free(dls_report_opts *o)
{
    free(o->inputs);
    memset(o, 0, sizeof *o);
}
