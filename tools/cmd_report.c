/* dlsync report: summary, timeline and HTML page of JSON-lines logs (see commands.h). */
#include "commands.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "html.h"
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
    const dlt_log_set *set;
    const dlt_symbolizer *sym;
} output;

static int write_chrome(void *ctx, FILE *f)
{
    return dlt_chrome_write(((const output *)ctx)->set, f);
}

static int write_html(void *ctx, FILE *f)
{
    const output *o = ctx;
    return dlt_html_write(o->set, o->sym, f);
}

/* Why the outputs of o cannot be written, in err (n bytes), or 0 when they can. */
static int refused(const dlt_report_opts *o, char *err, size_t n)
{
    const char *outs[] = {o->trace, o->html}, *names[] = {"--chrome-trace", "--html"},
               *examples[] = {"--chrome-trace timeline.json", "--html report.html"};
    char safe[PATH_MAX];
    for (size_t i = 0; i < 2; i++) {
        const char *why = outs[i] && strcmp(outs[i], "-") != 0
                              ? dlt_outfile_refuse(outs[i], o->inputs, o->ninputs, examples[i])
                              : NULL;
        if (why) {
            snprintf(err, n, "%s %s: %s", names[i], dlt_text_escape(outs[i], safe, sizeof safe), why);
            return 1;
        }
    }
    if (o->trace && o->html && strcmp(o->trace, "-") != 0 && strcmp(o->html, "-") != 0 &&
        dlt_outfile_same(o->trace, o->html)) {
        snprintf(err, n, "--chrome-trace and --html name the same file %s",
                 dlt_text_escape(o->html, safe, sizeof safe));
        return 1;
    }
    return 0;
}

int dlt_cmd_report(int argc, char **argv)
{
    dlt_report_opts o;
    char err[PATH_MAX + 512];
    if (dlt_report_parse(argc, argv, &o, err, sizeof err) != 0) {
        dlt_report_opts_free(&o);
        return usage_error(err);
    }
    if (o.help) {
        fputs(dlt_usage_report, stdout);
        dlt_report_opts_free(&o);
        return 0;
    }
    if (refused(&o, err, sizeof err)) {
        dlt_report_opts_free(&o);
        return usage_error(err);
    }
    dlt_log_set set = {0};
    for (size_t i = 0; i < o.ninputs; i++)
        dlt_log_read(&set, o.inputs[i], stderr);
    int rc = set.files_failed ? 1 : 0;
    /* Source lines for the races' native frames, found once for every output. */
    dlt_symbolizer *sym = dlt_sym_new(o.debug_dirs, o.ndebug_dirs);
    if (sym && dlt_stacks_want(&set, sym) == 0)
        dlt_sym_resolve(sym, stderr);
    /* The text goes to stderr when an output takes standard output. */
    int out_taken = (o.trace && strcmp(o.trace, "-") == 0) || (o.html && strcmp(o.html, "-") == 0);
    FILE *text = out_taken ? stderr : stdout;
    if ((o.json ? dlt_summary_print_json(&set, sym, stdout) : dlt_summary_print(&set, sym, text)) != 0) {
        fprintf(stderr, "dlsync report: out of memory\n");
        rc = 1;
    }
    output ctx = {.set = &set, .sym = sym};
    char safe[PATH_MAX];
    int say = text == stdout && !o.json;
    if (o.trace && dlt_outfile_write(o.trace, write_chrome, &ctx) != 0)
        rc = 1;
    else if (o.trace && say && strcmp(o.trace, "-") != 0)
        printf("\nTimeline written to %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
               dlt_text_escape(o.trace, safe, sizeof safe));
    if (o.html && dlt_outfile_write(o.html, write_html, &ctx) != 0)
        rc = 1;
    else if (o.html && say && strcmp(o.html, "-") != 0)
        printf("\nHTML report written to %s (one self-contained file: open it in any browser, offline)\n",
               dlt_text_escape(o.html, safe, sizeof safe));
    dlt_sym_free(sym);
    dlt_log_set_free(&set);
    dlt_report_opts_free(&o);
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = 1;
    return rc;
}
