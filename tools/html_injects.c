/* The HTML report's injected orderings, grouped by the way they were made (see html_parts.h). */
#include <stdlib.h>
#include <string.h>

#include "html_parts.h"
#include "htmlesc.h"
#include "records.h"
#include "scenes.h"
#include "tally.h"

/* The exchanges with injected orderings: "pid/xid" -> aux: index in groups. */
typedef struct {
    size_t first; /* its first inject record */
    char *way;    /* the way its orderings were made (the grouping key, malloc'd) */
    size_t len;
    const char *exp, *imp;  /* the frameworks of its export and import (NULL: not seen) */
    int have_exp, have_imp; /* its export / import record was seen */
} group;

/* Appends text to g->way; -1 when memory runs out. */
static int append(group *g, const char *text)
{
    size_t n = strlen(text);
    char *more = realloc(g->way, g->len + n + 1);
    if (!more)
        return -1;
    memcpy(more + g->len, text, n + 1);
    g->way = more;
    g->len += n;
    return 0;
}

static const char *kind_of(const dlt_json_value *stream)
{
    const char *k = dlt_json_get_str(stream, "kind");
    return k ? k : stream && stream->type == DLT_JSON_OBJECT ? "?" : "host";
}

/* Groups the inject records by exchange (pid, xid), each group's way being its framework pair
 * and its orderings' kinds, streams' kinds and reasons. */
static int gather(const dlt_log_set *set, dlt_tally *by_exchange, group **groups, size_t *n)
{
    size_t cap = 0;
    char key[96], a[40], b[40], line[512];
    for (size_t i = 0; i < set->n; i++) {
        const dlt_log_record *r = &set->recs[i];
        if (strcmp(r->ev, "inject") != 0)
            continue;
        snprintf(key, sizeof key, "%s/%s", dlt_scalar_text(r->obj, "pid", a, sizeof a),
                 dlt_scalar_text(r->obj, "xid", b, sizeof b));
        int fresh;
        dlt_tally_entry *e = dlt_tally_add(by_exchange, key, &fresh);
        if (!e)
            return -1;
        if (fresh) {
            if (*n == cap) {
                group *more = realloc(*groups, (cap ? 2 * cap : 64) * sizeof *more);
                if (!more)
                    return -1;
                *groups = more;
                cap = cap ? 2 * cap : 64;
            }
            (*groups)[*n] = (group){.first = i};
            e->aux = (long long)(*n)++;
        }
        const char *what = dlt_json_get_str(r->obj, "what"), *reason = dlt_json_get_str(r->obj, "reason");
        snprintf(line, sizeof line, "; %s %s -> %s (%s)", what ? what : "?", kind_of(dlt_json_get(r->obj, "from")),
                 kind_of(dlt_json_get(r->obj, "to")), reason ? reason : "?");
        if (append(&(*groups)[e->aux], line) != 0)
            return -1;
    }
    /* the framework pair of each, from its export and import records */
    for (size_t i = 0; *n && i < set->n; i++) {
        const dlt_log_record *r = &set->recs[i];
        int exp = strcmp(r->ev, "export") == 0;
        if (!exp && strcmp(r->ev, "import") != 0)
            continue;
        snprintf(key, sizeof key, "%s/%s", dlt_scalar_text(r->obj, "pid", a, sizeof a),
                 dlt_scalar_text(r->obj, "xid", b, sizeof b));
        const dlt_tally_entry *e = dlt_tally_find(by_exchange, key);
        group *g = e ? &(*groups)[e->aux] : NULL;
        if (g && exp && !g->have_exp) {
            g->have_exp = 1;
            g->exp = dlt_json_get_str(r->obj, "framework");
        } else if (g && !exp && !g->have_imp) {
            g->have_imp = 1;
            g->imp = dlt_json_get_str(r->obj, "framework");
        }
    }
    return 0;
}

/* The framework pair of an exchange: "export -> import". */
static void pair_of(const group *g, char *buf, size_t n)
{
    snprintf(buf, n, "%s -> %s", g->have_exp ? (g->exp ? g->exp : "?") : "(not seen)",
             g->have_imp ? (g->imp ? g->imp : "?") : "(not imported)");
}

static void draw_group(FILE *f, const dlt_log_set *set, const dlt_tally_entry *way, const group *g, size_t n)
{
    dlt_exchange_recs x;
    size_t first = g->first;
    dlt_exchange_find(set, set->recs[first].obj, &x);
    char id[32], pair[256], xid[32], pid[32], title[400];
    snprintf(id, sizeof id, "inject-%zu", n);
    pair_of(g, pair, sizeof pair);
    dlt_scalar_text(set->recs[first].obj, "xid", xid, sizeof xid);
    dlt_scalar_text(set->recs[first].obj, "pid", pid, sizeof pid);
    fprintf(f, "<article class=\"inject\" id=\"%s\" aria-labelledby=\"%s-h\">\n<h3 id=\"%s-h\"><span class=\"kind\">",
            id, id, id);
    dlt_html_text(f, pair);
    fprintf(f, "</span>: %lld exchange%s made safe this way <span class=\"meta\">(drawn: exchange ", way->count,
            way->count == 1 ? "" : "s");
    dlt_html_text(f, xid);
    fputs(" of pid ", f);
    dlt_html_text(f, pid);
    fputs(")</span></h3>\n", f);
    dlt_scene *scene = malloc(sizeof *scene);
    if (scene) {
        char fig[40];
        snprintf(fig, sizeof fig, "%s-fig", id);
        dlt_scene_injects(set, &x, scene);
        snprintf(title, sizeof title, "orderings dlsync injected into exchange %s (%s)", xid, pair);
        dlt_scene_draw(f, scene, fig, title);
        free(scene);
    }
    fputs("</article>\n", f);
}

int dlt_html_injects(const dlt_log_set *set, FILE *out)
{
    dlt_tally by_exchange = {0}, ways = {0};
    group *groups = NULL;
    size_t n = 0;
    int rc = gather(set, &by_exchange, &groups, &n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char pair[256];
        pair_of(&groups[i], pair, sizeof pair);
        size_t klen = strlen(pair) + groups[i].len + 1;
        char *key = malloc(klen);
        dlt_tally_entry *e = NULL;
        int fresh = 0;
        if (key) {
            snprintf(key, klen, "%s%s", pair, groups[i].way ? groups[i].way : "");
            e = dlt_tally_add(&ways, key, &fresh);
        }
        free(key);
        if (!e) {
            rc = -1;
            break;
        }
        if (fresh)
            e->first = i; /* its first group */
        e->count++;
    }
    fputs("<section id=\"injected\" aria-labelledby=\"injected-h\">\n<h2 id=\"injected-h\">Injected waits</h2>\n", out);
    dlt_tally_entry **v = rc == 0 ? dlt_tally_sorted(&ways) : NULL;
    if (rc == 0 && !ways.n)
        fputs("<p>dlsync injected no ordering (only fix mode injects: it makes exchanged tensors safe on the "
              "consumer's stream).</p>\n",
              out);
    else if (rc == 0 && !v)
        rc = -1;
    if (v) {
        fprintf(
            out,
            "<p class=\"sub\">%zu exchange%s got orderings from dlsync, in %zu distinct way%s; one exchange of each "
            "way is drawn: the event recorded on the stream waited for, and the wait on the stream (or the "
            "host) made to wait.</p>\n",
            n, n == 1 ? "" : "s", ways.n, ways.n == 1 ? "" : "s");
        for (size_t i = 0; i < ways.n && i < DLT_HTML_MAX_INJECTS; i++)
            draw_group(out, set, v[i], &groups[v[i]->first], i + 1);
        if (ways.n > DLT_HTML_MAX_INJECTS)
            fprintf(out, "<p class=\"note\">%zu more ways, not drawn.</p>\n", ways.n - DLT_HTML_MAX_INJECTS);
    }
    fputs("</section>\n", out);
    free(v);
    for (size_t i = 0; i < n; i++)
        free(groups[i].way);
    free(groups);
    dlt_tally_free(&by_exchange);
    dlt_tally_free(&ways);
    return rc;
}
