/* The HTML report's races: each distinct race drawn beside its stacks (see html_parts.h). */
#include <stdlib.h>
#include <string.h>

#include "html_parts.h"
#include "htmlesc.h"
#include "records.h"
#include "scenes.h"
#include "stacks.h"

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static void races_toc(const dlt_log_set *set, const dlt_analysis *a, FILE *out)
{
    dlt_tally_entry **v = dlt_tally_sorted(&a->races);
    if (!v)
        return;
    fputs("<ul class=\"toc\">\n", out);
    for (size_t i = 0; i < a->races.n && i < DLT_HTML_MAX_RACES; i++) {
        const dlt_json_value *r = set->recs[v[i]->first].obj;
        fprintf(out, "<li><a href=\"#race-%zu\">", i + 1);
        dlt_html_text(out, dlt_json_get_str(r, "kind"));
        fprintf(out, " &#215;%lld: ", v[i]->count);
        dlt_html_text_cut(out, dlt_json_get_str(dlt_json_get(r, "producer"), "op"), 40);
        fputs(" / ", out);
        dlt_html_text_cut(out, dlt_json_get_str(dlt_json_get(r, "consumer"), "op"), 40);
        fputs("</a></li>\n", out);
    }
    fputs("</ul>\n", out);
    free(v);
}

/* One side's stack: its operation and stream, then its frames as the text report prints them,
 * the Python frames first. */
static int side_stack(FILE *f, const dlt_json_value *race, const char *name, const dlt_symbolizer *sym)
{
    const dlt_json_value *side = dlt_json_get(race, name);
    char st[160];
    fprintf(f, "<section class=\"stack %s\">\n<h4><span class=\"key %s\">%s</span> ", name, name, name);
    dlt_html_text(f, str_or(dlt_json_get_str(side, "op"), "an unknown operation"));
    fputs(" on ", f);
    dlt_html_text(f, dlt_scene_stream_text(dlt_json_get(side, "stream"), st, sizeof st));
    fputs("</h4>\n", f);
    dlt_shown_stack stack;
    if (dlt_stack_shown(side, sym, &stack) != 0)
        return -1;
    if (!stack.n)
        fputs("<p class=\"note\">No stack in the log for this side.</p>\n", f);
    else
        fputs("<pre>", f);
    for (int python = 1; python >= 0; python--)
        for (size_t i = 0; i < stack.n; i++) {
            const dlt_shown_frame *fr = &stack.f[i];
            if (fr->python != python)
                continue;
            fprintf(f, "<span class=\"%s%s\">at ",
                    fr->python     ? "py"
                    : fr->resolved ? "src"
                                   : "native",
                    fr->inlined ? " inl" : "");
            dlt_html_text(f, fr->text);
            fputs("</span>\n", f);
        }
    if (stack.n)
        fputs("</pre>\n", f);
    fputs("</section>\n", f);
    dlt_shown_stack_free(&stack);
    return 0;
}

static int race_article(FILE *f, const dlt_log_set *set, const dlt_tally_entry *v, size_t n, const dlt_symbolizer *sym)
{
    const dlt_log_record *rec = &set->recs[v->first];
    const dlt_json_value *r = rec->obj, *tensor = dlt_json_get(r, "tensor"), *shape = dlt_json_get(tensor, "shape");
    char id[32], xid[32], pid[32], dev[64], title[512];
    snprintf(id, sizeof id, "race-%zu", n);
    fprintf(f, "<article class=\"race\" id=\"%s\" aria-labelledby=\"%s-h\">\n<h3 id=\"%s-h\"><span class=\"kind\">", id,
            id, id);
    dlt_html_text(f, dlt_json_get_str(r, "kind"));
    fprintf(f, "</span> on exchange %s &#215;%lld <span class=\"meta\">key <code>",
            dlt_scalar_text(r, "xid", xid, sizeof xid), v->count);
    dlt_html_text(f, v->key);
    fputs("</code>, first in pid ", f);
    dlt_html_text(f, dlt_scalar_text(r, "pid", pid, sizeof pid));
    fputs(", ", f);
    dlt_html_text(f, rec->file);
    fprintf(f, ":%ld</span></h3>\n<p class=\"sub\">tensor ", rec->line);
    dlt_html_text(f, dlt_json_get_str(tensor, "dtype"));
    fputc('[', f);
    for (size_t i = 0; shape && shape->type == DLT_JSON_ARRAY && i < shape->len && i < 16; i++)
        fprintf(f, "%s%lld", i ? ", " : "", shape->items[i]->is_int ? shape->items[i]->ival : 0);
    fputs("] at ", f);
    dlt_html_text(f, dlt_json_get_str(tensor, "data"));
    fputs(" on ", f);
    dlt_html_text(f, dlt_device_text(dlt_json_get(tensor, "device"), dev, sizeof dev));
    fputs(", exported by ", f);
    dlt_html_text(f, dlt_json_get_str(r, "framework"));
    fputc(' ', f);
    dlt_html_text(f, dlt_json_get_str(r, "symbol"));
    fputs("</p>\n<div class=\"body\">\n<div class=\"drawing\">\n", f);
    dlt_scene *scene = malloc(sizeof *scene);
    if (!scene)
        return -1;
    dlt_scene_race(set, v->first, scene);
    char fig[40];
    snprintf(fig, sizeof fig, "%s-fig", id);
    snprintf(title, sizeof title, "%s race on exchange %s: the producer's and the consumer's accesses on their lanes",
             str_or(dlt_json_get_str(r, "kind"), "?"), xid);
    dlt_scene_draw(f, scene, fig, title);
    free(scene);
    fputs("</div>\n<div class=\"stacks\">\n", f);
    if (side_stack(f, r, "producer", sym) != 0 || side_stack(f, r, "consumer", sym) != 0)
        return -1;
    fputs("</div>\n</div>\n", f);
    const char *why = dlt_json_get_str(r, "why"), *fix = dlt_json_get_str(dlt_json_get(r, "fix"), "text");
    const char *fix_id = dlt_race_fix_id(r);
    if (why) {
        fputs("<p class=\"why\"><b>why:</b> ", f);
        dlt_html_text(f, why);
        fputs("</p>\n", f);
    }
    fputs("<p class=\"fix\"><b>fix:</b> ", f);
    dlt_html_text(f, fix ? fix : "(none in the log)");
    fputs(" <span class=\"meta\">(fix <code>", f);
    dlt_html_text(f, fix_id);
    fputs("</code>: ", f);
    dlt_html_text(f, dlt_fix_title(fix_id));
    fputs(")</span></p>\n</article>\n", f);
    return 0;
}

int dlt_html_races(const dlt_log_set *set, const dlt_analysis *a, const dlt_symbolizer *sym, FILE *out)
{
    fputs("<section id=\"races\" aria-labelledby=\"races-h\" tabindex=\"-1\">\n<h2 id=\"races-h\">Races</h2>\n", out);
    if (!a->races.n) {
        fputs("<p>No race was reported.", out);
        int check = 0;
        for (size_t i = 0; i < set->n && !check; i++)
            check = strcmp(set->recs[i].ev, "start") == 0 && dlt_json_get_str(set->recs[i].obj, "mode") &&
                    strcmp(dlt_json_get_str(set->recs[i].obj, "mode"), "check") == 0;
        if (!check)
            fputs(" No process ran in check mode: races are looked for under <code>--mode check</code> only.", out);
        fputs("</p>\n</section>\n", out);
        return 0;
    }
    dlt_tally_entry **v = dlt_tally_sorted(&a->races);
    if (!v)
        return -1;
    fputs("<p class=\"sub\">Each distinct race (repeats counted), the most frequent first: its streams and the host "
          "threads as lanes, the two accesses in the order they were enqueued, the ordering that is missing (dashed) "
          "and the fix (an event recorded after the first access and waited for before the second), beside both "
          "stacks, the Python frames first.</p>\n",
          out);
    races_toc(set, a, out);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < a->races.n && i < DLT_HTML_MAX_RACES; i++)
        rc = race_article(out, set, v[i], i + 1, sym);
    if (rc == 0 && a->races.n > DLT_HTML_MAX_RACES) {
        fprintf(out,
                "<table><caption>%zu more races, not drawn</caption>\n<tr><th scope=\"col\">count</th><th "
                "scope=\"col\">kind</th><th scope=\"col\">producer</th><th scope=\"col\">consumer</th><th "
                "scope=\"col\">key</th></tr>\n",
                a->races.n - DLT_HTML_MAX_RACES);
        for (size_t i = DLT_HTML_MAX_RACES; i < a->races.n; i++) {
            const dlt_json_value *r = set->recs[v[i]->first].obj;
            fprintf(out, "<tr><td class=\"n\">%lld</td><td>", v[i]->count);
            dlt_html_text(out, dlt_json_get_str(r, "kind"));
            fputs("</td><td>", out);
            dlt_html_text(out, dlt_json_get_str(dlt_json_get(r, "producer"), "op"));
            fputs("</td><td>", out);
            dlt_html_text(out, dlt_json_get_str(dlt_json_get(r, "consumer"), "op"));
            fputs("</td><td><code>", out);
            dlt_html_text(out, v[i]->key);
            fputs("</code></td></tr>\n", out);
        }
        fputs("</table>\n", out);
    }
    fputs("</section>\n", out);
    free(v);
    return rc;
}
