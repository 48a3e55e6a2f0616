/* `dlsync report` command line (see report_opts.h). */
#include "report_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textesc.h"

static int fail(char *err, size_t n, const char *fmt, const char *arg)
{
    char safe[256];
    snprintf(err, n, fmt, dlt_text_escape(arg, safe, sizeof safe));
    return -1;
}

/* When argv[*i] is an option with a value (--chrome-trace, --html, --debug-dir; the value after
 * '=' or in the next argument, which it takes), sets *name and *value (NULL when missing) and
 * returns 1; else 0. */
static int valued(int argc, char **argv, int *i, const char **name, const char **value)
{
    static const char *const names[] = {"--chrome-trace", "--html", "--debug-dir"};
    const char *a = argv[*i];
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        size_t len = strlen(names[k]);
        if (strncmp(a, names[k], len) != 0 || (a[len] != '\0' && a[len] != '='))
            continue;
        *name = names[k];
        *value = a[len] == '=' ? a + len + 1 : *i + 1 < argc ? argv[++*i] : NULL;
        return 1;
    }
    return 0;
}

int dlt_report_parse(int argc, char **argv, dlt_report_opts *o, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    err[0] = '\0';
    o->inputs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *o->inputs);
    o->debug_dirs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *o->debug_dirs);
    if (!o->inputs || !o->debug_dirs)
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
        const char *v, *name;
        int taken = options ? valued(argc, argv, &i, &name, &v) : 0;
        if (taken) {
            const char **slot = strcmp(name, "--chrome-trace") == 0 ? &o->trace
                                : strcmp(name, "--html") == 0       ? &o->html
                                                                    : NULL;
            if (slot && *slot)
                return fail(err, n, "%s given twice", name);
            if (!v || !*v)
                return fail(err, n, slot ? "%s needs a file name (or - for standard output)" : "%s needs a directory",
                            name);
            if (v[0] == '-' && (v[1] || !slot))
                return fail(err, n,
                            slot == &o->trace ? "--chrome-trace needs a file name (or - for standard output), not the "
                                                "option %s"
                            : slot            ? "--html needs a file name (or - for standard output), not the option %s"
                                              : "--debug-dir needs a directory, not the option %s",
                            v);
            if (slot)
                *slot = v;
            else
                o->debug_dirs[o->ndebug_dirs++] = v;
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
    int trace_out = o->trace && strcmp(o->trace, "-") == 0, html_out = o->html && strcmp(o->html, "-") == 0;
    if (o->json && (trace_out || html_out))
        return fail(err, n, "--json and %s - would both write to standard output",
                    trace_out ? "--chrome-trace" : "--html");
    if (trace_out && html_out)
        return fail(err, n, "%s", "--chrome-trace - and --html - would both write to standard output");
    if (!o->ninputs)
        return fail(err, n, "%s", "no LOG to read");
    return 0;
}

void dlt_report_opts_free(dlt_report_opts *o)
{
    free(o->inputs);
    free(o->debug_dirs);
    memset(o, 0, sizeof *o);
}
