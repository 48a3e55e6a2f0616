/* The HTML report's page and its "at a glance" section (see html.h). */
#include "html.h"

#include <stdlib.h>
#include <string.h>

#include "common/names.h"
#include "html_parts.h"
#include "htmlesc.h"
#include "records.h"

/* The tables of the analysis the page lists, sorted (NULL when empty). */
typedef struct {
    dlt_tally_entry **pids, **pairs, **injects, **races, **suppressed, **fallbacks, **warnings, **capped;
} sorted;

static void stat_box(FILE *f, const char *name, long long value, const char *more)
{
    fprintf(f, "<div><dt>%s</dt><dd>%lld%s%s%s</dd></div>\n", name, value, more ? " <span class=\"meta\">" : "",
            more ? more : "", more ? "</span>" : "");
}

/* The check-mode processes that could not be checked, first and loud (as the text report). */
static void not_checked(FILE *f, const dlt_log_set *set, const dlt_analysis *a, const sorted *v, long long races)
{
    long long total = 0, bad = 0;
    char why[512];
    for (size_t i = 0; i < a->pids.n; i++) {
        int state = dlt_check_state(set, a, v->pids[i], why, sizeof why);
        total += state >= 0;
        bad += state == 0;
    }
    if (bad) {
        fprintf(f,
                "<div class=\"banner bad\" role=\"alert\">NOT CHECKED: %lld of %lld check-mode process%s could not be "
                "checked; the races below are not all there may be\n<ul>\n",
                bad, total, total == 1 ? "" : "es");
        for (size_t i = 0; i < a->pids.n; i++) {
            if (dlt_check_state(set, a, v->pids[i], why, sizeof why) != 0)
                continue;
            fputs("<li>pid ", f);
            dlt_html_text(f, v->pids[i]->key);
            fputs(" (<code>", f);
            dlt_html_text(f, dlt_json_get_str(set->recs[v->pids[i]->first].obj, "exe"));
            fputs("</code>): ", f);
            dlt_html_text(f, why);
            fputs("</li>\n", f);
        }
        fputs("</ul></div>\n", f);
    } else if (races) {
        fprintf(f, "<div class=\"banner bad\">%lld distinct race%s reported: see <a href=\"#races\">Races</a></div>\n",
                races, races == 1 ? "" : "s");
    } else if (total) {
        fprintf(f, "<div class=\"banner ok\">Checked: %lld check-mode process%s, no race reported</div>\n", total,
                total == 1 ? "" : "es");
    }
}

static void processes(FILE *f, const dlt_log_set *set, const dlt_analysis *a, const sorted *v)
{
    fputs("<table><caption>Processes</caption>\n<tr><th scope=\"col\">pid</th><th scope=\"col\">program</th>"
          "<th scope=\"col\">mode</th><th scope=\"col\">rank</th><th scope=\"col\">records</th></tr>\n",
          f);
    for (size_t i = 0; i < a->pids.n; i++) {
        const dlt_log_record *r = &set->recs[v->pids[i]->first];
        int start = strcmp(r->ev, "start") == 0;
        char rank[32] = "none";
        const dlt_json_value *rk = dlt_json_get(r->obj, "rank");
        if (rk && rk->type == DLT_JSON_NUMBER)
            dlt_scalar_text(r->obj, "rank", rank, sizeof rank);
        fputs("<tr><td class=\"n\">", f);
        dlt_html_text(f, v->pids[i]->key);
        fputs("</td><td class=\"mono\">", f);
        dlt_html_text(f, start ? dlt_json_get_str(r->obj, "exe") : "(no start record: log begins mid-run)");
        fputs("</td><td>", f);
        dlt_html_text(f, start ? dlt_json_get_str(r->obj, "mode") : "?");
        fprintf(f, "</td><td>%s</td><td class=\"n\">%lld</td></tr>\n", rank, v->pids[i]->count);
    }
    fputs("</table>\n", f);
}

/* A table of a tally whose keys are the rows' text (a tab in the key splits two columns). */
static void counts(FILE *f, const char *caption, const char *head, const char *head2, const dlt_tally *t,
                   dlt_tally_entry **v)
{
    if (!t->n)
        return;
    fprintf(f, "<table><caption>%s</caption>\n<tr><th scope=\"col\">count</th><th scope=\"col\">%s</th>%s%s%s</tr>\n",
            caption, head, head2 ? "<th scope=\"col\">" : "", head2 ? head2 : "", head2 ? "</th>" : "");
    for (size_t i = 0; i < t->n; i++) {
        const char *tab = head2 ? strchr(v[i]->key, '\t') : NULL;
        char first[512];
        snprintf(first, sizeof first, "%.*s", tab ? (int)(tab - v[i]->key) : (int)strlen(v[i]->key), v[i]->key);
        fprintf(f, "<tr><td class=\"n\">%lld</td><td>", v[i]->count);
        dlt_html_text(f, first);
        if (head2) {
            fputs("</td><td>", f);
            dlt_html_text(f, tab ? tab + 1 : "?");
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Races by kind: distinct races and occurrences of each. */
static int race_kinds(FILE *f, const dlt_log_set *set, const dlt_analysis *a, const sorted *v)
{
    dlt_tally kinds = {0};
    for (size_t i = 0; i < a->races.n; i++) {
        const char *kind = dlt_json_get_str(set->recs[v->races[i]->first].obj, "kind");
        dlt_tally_entry *e = dlt_tally_add(&kinds, kind ? kind : "?", NULL);
        if (!e) {
            dlt_tally_free(&kinds);
            return -1;
        }
        e->count += v->races[i]->count;
        e->aux++;
    }
    dlt_tally_entry **k = dlt_tally_sorted(&kinds);
    if (k) {
        fputs("<table><caption>Races by kind</caption>\n<tr><th scope=\"col\">kind</th><th scope=\"col\">distinct</th>"
              "<th scope=\"col\">occurrences</th></tr>\n",
              f);
        for (size_t i = 0; i < kinds.n; i++) {
            fputs("<tr><td>", f);
            dlt_html_text(f, k[i]->key);
            fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td></tr>\n", k[i]->aux, k[i]->count);
        }
        fputs("</table>\n", f);
    }
    int rc = kinds.n && !k ? -1 : 0;
    free(k);
    dlt_tally_free(&kinds);
    return rc;
}

/* What was not checked or not complete: suppressed races, fallbacks, warnings, capped logs,
 * damaged lines, unreadable logs, frames left without source lines. */
static void caveats(FILE *f, const dlt_log_set *set, const dlt_analysis *a, const sorted *v, const dlt_symbolizer *sym)
{
    fputs("<h3 id=\"caveats\">What was not checked, or not in full</h3>\n<ul>\n", f);
    int any = 0;
    for (size_t i = 0; i < a->pids.n; i++) {
        char why[512];
        if (dlt_check_state(set, a, v->pids[i], why, sizeof why) != 0)
            continue;
        fputs("<li>pid ", f);
        dlt_html_text(f, v->pids[i]->key);
        fputs(" was not checked: ", f);
        dlt_html_text(f, why);
        fputs("</li>\n", f);
        any = 1;
    }
    for (size_t i = 0; i < a->suppressed.n; i++) {
        const dlt_json_value *r = set->recs[v->suppressed[i]->first].obj, *s = dlt_json_get(r, "suppressed");
        char line[32];
        fprintf(f, "<li>suppressed race (%lld): ", v->suppressed[i]->count);
        dlt_html_text(f, dlt_json_get_str(r, "kind"));
        fputs(", key <code>", f);
        dlt_html_text(f, v->suppressed[i]->key);
        fputs("</code>, by rule <code>", f);
        dlt_html_text(f, dlt_json_get_str(s, "rule"));
        fputs("</code> (", f);
        dlt_html_text(f, dlt_json_get_str(s, "file"));
        fprintf(f, ":%s)</li>\n", dlt_scalar_text(s, "line", line, sizeof line));
        any = 1;
    }
    const dlt_tally *lists[] = {&a->fallbacks, &a->warnings};
    dlt_tally_entry **sorted_lists[] = {v->fallbacks, v->warnings};
    const char *words[] = {"fallback", "warning"};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < lists[k]->n; i++) {
            const char *detail = dlt_json_get_str(set->recs[sorted_lists[k][i]->first].obj, "detail");
            fprintf(f, "<li>%s (%lld): ", words[k], sorted_lists[k][i]->count);
            dlt_html_text(f, sorted_lists[k][i]->key);
            if (detail && *detail) {
                fputs(": ", f);
                dlt_html_text(f, detail);
            }
            fputs("</li>\n", f);
            any = 1;
        }
    for (size_t i = 0; i < a->capped.n; i++) {
        char limit[32];
        fputs("<li>the log of pid ", f);
        dlt_html_text(f, v->capped[i]->key);
        fprintf(f, " reached its size limit (%s bytes): exchange records after it were not written</li>\n",
                dlt_scalar_text(set->recs[v->capped[i]->first].obj, "limit", limit, sizeof limit));
        any = 1;
    }
    if (set->damaged) {
        fprintf(f, "<li>%ld damaged log line%s skipped</li>\n", set->damaged, set->damaged == 1 ? "" : "s");
        any = 1;
    }
    if (set->files_failed) {
        fprintf(f, "<li>%d log%s could not be read, or %s no dlsync log</li>\n", set->files_failed,
                set->files_failed == 1 ? "" : "s", set->files_failed == 1 ? "was" : "were");
        any = 1;
    }
    if (dlt_sym_missing(sym)) {
        fputs("<li>no llvm-symbolizer or addr2line was on the PATH: native frames with debug information show "
              "<code>function+0xOFF (library)</code>, without file:line</li>\n",
              f);
        any = 1;
    }
    if (!any)
        fputs("<li>nothing: every process was checked (or ran in a mode that does not check), and every log was "
              "read whole</li>\n",
              f);
    fputs("</ul>\n", f);
}

static void glance(FILE *f, const dlt_log_set *set, const dlt_analysis *a, const sorted *v, const dlt_symbolizer *sym,
                   long long race_total)
{
    long long suppressed_total = 0;
    for (size_t i = 0; i < a->suppressed.n; i++)
        suppressed_total += v->suppressed[i]->count;
    char more[64];
    fputs("<section id=\"glance\" aria-labelledby=\"glance-h\">\n<h2 id=\"glance-h\">At a glance</h2>\n", f);
    not_checked(f, set, a, v, (long long)a->races.n);
    fputs("<dl class=\"stats\">\n", f);
    stat_box(f, "processes", (long long)a->pids.n, NULL);
    snprintf(more, sizeof more, "%lld exports, %lld imports", a->exports, a->imports);
    stat_box(f, "exchanges", a->exports + a->unmatched_imports, more);
    snprintf(more, sizeof more, "distinct, %lld occurrences", race_total);
    stat_box(f, "races", (long long)a->races.n, more);
    snprintf(more, sizeof more, "distinct, %lld occurrences", suppressed_total);
    stat_box(f, "suppressed races", (long long)a->suppressed.n, more);
    stat_box(f, "injected waits", a->injected, NULL);
    stat_box(f, "fallbacks", a->fallback_records, NULL);
    stat_box(f, "warnings", a->warning_records, NULL);
    fputs("</dl>\n<div class=\"tables\">\n<div>\n", f);
    processes(f, set, a, v);
    counts(f, "Exchanges per framework pair", "export framework &#8594; import framework", "device", &a->pairs,
           v->pairs);
    fputs("</div>\n<div>\n", f);
    race_kinds(f, set, a, v);
    counts(f, "Injected waits", "what", NULL, &a->injects, v->injects);
    fprintf(f,
            "<table><caption>Exchange records</caption>\n<tr><th scope=\"col\">releases</th><th scope=\"col\">double "
            "releases</th><th scope=\"col\">refused inputs</th></tr>\n<tr><td class=\"n\">%lld</td><td "
            "class=\"n\">%lld</td><td class=\"n\">%lld</td></tr>\n</table>\n",
            a->releases, a->double_releases, a->malformed);
    fputs("</div>\n</div>\n", f);
    caveats(f, set, a, v, sym);
    fputs("</section>\n", f);
}

/* The names of the logs read, as the page's subtitle. */
static void sources(FILE *f, const dlt_log_set *set)
{
    const char *last = NULL;
    size_t shown = 0, files = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (last && strcmp(last, set->recs[i].file) == 0)
            continue;
        last = set->recs[i].file;
        files++;
        if (shown++ < 8) {
            fputs(shown > 1 ? ", <code>" : " from <code>", f);
            dlt_html_text(f, strcmp(last, "-") == 0 ? "standard input" : last);
            fputs("</code>", f);
        }
    }
    if (shown > 8)
        fprintf(f, " and %zu more", files - 8);
}

int dlt_html_write(const dlt_log_set *set, const dlt_symbolizer *sym, FILE *f)
{
    dlt_analysis a;
    if (dlt_analyse(set, &a) != 0)
        return -1;
    sorted v = {
        .pids = dlt_tally_sorted(&a.pids),
        .pairs = dlt_tally_sorted(&a.pairs),
        .injects = dlt_tally_sorted(&a.injects),
        .races = dlt_tally_sorted(&a.races),
        .suppressed = dlt_tally_sorted(&a.suppressed),
        .fallbacks = dlt_tally_sorted(&a.fallbacks),
        .warnings = dlt_tally_sorted(&a.warnings),
        .capped = dlt_tally_sorted(&a.capped),
    };
    int rc = (a.pids.n && !v.pids) || (a.pairs.n && !v.pairs) || (a.injects.n && !v.injects) ||
                     (a.races.n && !v.races) || (a.suppressed.n && !v.suppressed) || (a.fallbacks.n && !v.fallbacks) ||
                     (a.warnings.n && !v.warnings) || (a.capped.n && !v.capped)
                 ? -1
                 : 0;
    long long race_total = 0;
    for (size_t i = 0; rc == 0 && i < a.races.n; i++)
        race_total += v.races[i]->count;
    if (rc == 0) {
        fprintf(f,
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
                "base-uri 'none'; form-action 'none'\">\n"
                "<meta name=\"referrer\" content=\"no-referrer\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                "<meta name=\"generator\" content=\"dlsync report %s\">\n"
                "<title>dlsync report: %zu race%s, %lld exchange%s</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                "<a class=\"skip\" href=\"#races\">Skip to the races</a>\n<div class=\"wrap\">\n<header>\n"
                "<h1>dlsync report</h1>\n<p class=\"sub\">%zu records of %zu process%s",
                DLS_VERSION, a.races.n, a.races.n == 1 ? "" : "s", a.exports + a.unmatched_imports,
                a.exports + a.unmatched_imports == 1 ? "" : "s", dlt_html_style, set->n, a.pids.n,
                a.pids.n == 1 ? "" : "es");
        sources(f, set);
        fputs("</p>\n</header>\n<nav aria-label=\"Contents\">\n<ul>\n<li><a href=\"#glance\">At a glance</a></li>\n"
              "<li><a href=\"#caveats\">What was not checked</a></li>\n",
              f);
        fprintf(f, "<li><a href=\"#races\">Races (%zu)</a>", a.races.n);
        fprintf(f, "</li>\n<li><a href=\"#injected\">Injected waits (%lld)</a></li>\n</ul>\n</nav>\n<main>\n",
                a.injected);
        glance(f, set, &a, &v, sym, race_total);
        if (dlt_html_races(set, &a, sym, f) != 0 || dlt_html_injects(set, f) != 0)
            rc = -1;
        fprintf(f,
                "</main>\n<footer>Written by dlsync report %s. One self-contained file: no script, and nothing is "
                "loaded from anywhere.</footer>\n</div>\n</body>\n</html>\n",
                DLS_VERSION);
    }
    dlt_tally_entry **all[] = {v.pids, v.pairs, v.injects, v.races, v.suppressed, v.fallbacks, v.warnings, v.capped};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    dlt_analysis_free(&a);
    return rc != 0 || ferror(f) ? -1 : 0;
}
