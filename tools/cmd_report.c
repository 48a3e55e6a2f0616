/* dlsync report: summary and timeline of JSON-lines logs (see commands.h). */
#include "commands.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "logread.h"
#include "outfile.h"
#include "report_opts.h"
#include "stacks.h"
#include "summary.h"
#include "symbolize.h"
#include "textesc.h"

static int usage_error(const char *what)
{
    fprintf(stderr, "dlsync report: %s\n(dlsync report --help for usage)\n", what);
    return DLS_EXIT_USAGE;
}

/* What an output file's writer is given. */
typedef struct {
    const dls_log_set *set;
    const dls_symbolizer *sym;
} output;

static int write_chrome(void *ctx, FILE *f)
{
    return dls_chrome_write(((const output *)ctx)->set, f);
}

/* Why the timeline of o cannot be written, in err (n bytes), or 0 when it can. */
static int refused(const dls_report_opts *o, char *err, size_t n)
{
    char safe[PATH_MAX];
    const char *why = o->trace && strcmp(o->trace, "-") != 0
                          ? dls_outfile_refuse(o->trace, o->inputs, o->ninputs, "--chrome-trace timeline.json")
                          : NULL;
    if (why)
        snprintf(err, n, "--chrome-trace %s: %s", dls_text_escape(o->trace, safe, sizeof safe), why);
    return why != NULL;
}

int dls_cmd_report(int argc, char **argv)
{
    dls_report_opts o;
    char err[PATH_MAX + 512];
    if (dls_report_parse(argc, argv, &o, err, sizeof err) != 0) {
        dls_report_opts_free(&o);
        return usage_error(err);
    }
    if (o.help) {
        fputs(dls_usage_report, stdout);
        dls_report_opts_free(&o);
        return 0;
    }
    if (refused(&o, err, sizeof err)) {
        dls_report_opts_free(&o);
        return usage_error(err);
    }
    dls_log_set set = {0};
    for (size_t i = 0; i < o.ninputs; i++)
        dls_log_read(&set, o.inputs[i], stderr);
    int rc = set.files_failed ? 1 : 0;
    /* Source lines for the races' native frames, found once for every output. */
    dls_symbolizer *sym = dls_sym_new(o.debug_dirs, o.ndebug_dirs);
    if (sym && dls_stacks_want(&set, sym) == 0)
        dls_sym_resolve(sym, stderr);
    /* The text goes to stderr when the timeline takes standard output. */
    FILE *text = o.trace && strcmp(o.trace, "-") == 0 ? stderr : stdout;
    if ((o.json ? dls_summary_print_json(&set, sym, stdout) : dls_summary_print(&set, sym, text)) != 0) {
        fprintf(stderr, "dlsync report: out of memory\n");
        rc = 1;
    }
    output ctx = {.set = &set, .sym = sym};
    char safe[PATH_MAX];
    int say = text == stdout && !o.json;
    if (o.trace && dls_outfile_write(o.trace, write_chrome, &ctx) != 0)
        rc = 1;
    else if (o.trace && say && strcmp(o.trace, "-") != 0)
        printf("\nTimeline written to %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
               dls_text_escape(o.trace, safe, sizeof safe));
    dls_sym_free(sym);
    dls_log_set_free(&set);
    dls_report_opts_free(&o);
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = 1;
    return rc;
}
