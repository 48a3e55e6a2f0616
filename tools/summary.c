/* Text summary of a set of logs (see summary.h). */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "records.h"
#include "stacks.h"
#include "tally.h"
#include "textesc.h"

/* dlt_text_escape into one of a few rotating buffers: several values of one printf each get
 * their own. */
static const char *esc(const char *s)
{
    static char bufs[8][4096];
    static unsigned next;
    char *b = bufs[next++ % 8];
    return dlt_text_escape(s, b, sizeof bufs[0]);
}

int dlt_summary_count(const dlt_log_set *set, dlt_summary_counts *c)
{
    dlt_analysis a;
    if (dlt_analyse(set, &a) != 0)
        return -1;
    c->processes = (long long)a.pids.n;
    c->exchanges = a.exports + a.unmatched_imports;
    c->injected = a.injected;
    c->races = (long long)a.races.n;
    c->race_total = 0;
    for (size_t i = 0; i < a.races.cap; i++)
        if (a.races.slots[i].key)
            c->race_total += a.races.slots[i].count;
    c->fallbacks = a.fallback_records;
    c->suppressed = (long long)a.suppressed.n;
    c->not_checked = 0;
    c->check_processes = 0;
    dlt_tally_entry **pids = dlt_tally_sorted(&a.pids);
    for (size_t i = 0; pids && i < a.pids.n; i++) {
        char why[512];
        int state = dlt_check_state(set, &a, pids[i], why, sizeof why);
        c->check_processes += state >= 0;
        c->not_checked += state == 0;
    }
    free(pids);
    dlt_analysis_free(&a);
    return 0;
}

static void print_processes(const dlt_log_set *set, const dlt_analysis *a, dlt_tally_entry **v, FILE *out)
{
    for (size_t i = 0; i < a->pids.n; i++) {
        const dlt_log_record *r = &set->recs[v[i]->first];
        char rank[32] = "none";
        const dlt_json_value *rk = dlt_json_get(r->obj, "rank");
        if (rk && rk->type == DLT_JSON_NUMBER)
            dlt_scalar_text(r->obj, "rank", rank, sizeof rank);
        if (strcmp(r->ev, "start") == 0)
            fprintf(out, "  pid %-8s %s (mode %s, rank %s), %lld records\n", esc(v[i]->key),
                    esc(dlt_json_get_str(r->obj, "exe")), esc(dlt_json_get_str(r->obj, "mode")), rank, v[i]->count);
        else
            fprintf(out, "  pid %-8s (no start record: log begins mid-run), %lld records\n", esc(v[i]->key),
                    v[i]->count);
    }
}

/* The check-mode processes that were not checked, first: their races are not all there are. */
static void print_not_checked(const dlt_log_set *set, const dlt_analysis *a, dlt_tally_entry **v, FILE *out)
{
    long long total = 0, bad = 0;
    char why[512];
    for (size_t i = 0; i < a->pids.n; i++) {
        int state = dlt_check_state(set, a, v[i], why, sizeof why);
        total += state >= 0;
        bad += state == 0;
    }
    if (!bad)
        return;
    fprintf(out,
            "NOT CHECKED: %lld of %lld check-mode process%s could not be checked; the races below are not all "
            "there may be\n",
            bad, total, total == 1 ? "" : "es");
    for (size_t i = 0; i < a->pids.n; i++)
        if (dlt_check_state(set, a, v[i], why, sizeof why) == 0)
            fprintf(out, "  pid %s (%s): %s\n", esc(v[i]->key),
                    esc(dlt_json_get_str(set->recs[v[i]->first].obj, "exe")), esc(why));
    fputc('\n', out);
}

static void print_pairs(const dlt_analysis *a, dlt_tally_entry **v, FILE *out)
{
    fprintf(out, "  %8s  %-40s %s\n", "count", "export framework -> import framework", "device");
    for (size_t i = 0; i < a->pairs.n; i++) {
        char pair[512];
        const char *tab = strchr(v[i]->key, '\t');
        snprintf(pair, sizeof pair, "%.*s", tab ? (int)(tab - v[i]->key) : (int)strlen(v[i]->key), v[i]->key);
        fprintf(out, "  %8lld  %-40s %s\n", v[i]->count, esc(pair), esc(tab ? tab + 1 : "?"));
    }
}

/* One side of a race: its operation and stream, then its stack, the Python frames first. */
static void print_side(const dlt_json_value *race, const char *name, const dlt_symbolizer *sym, FILE *out)
{
    const dlt_json_value *side = dlt_json_get(race, name);
    char st[96];
    fprintf(out, "      %-9s %s on %s\n", name, esc(dlt_json_get_str(side, "op")),
            esc(dlt_stream_text(dlt_json_get(side, "stream"), st, sizeof st)));
    dlt_shown_stack stack;
    if (dlt_stack_shown(side, sym, &stack) != 0)
        return;
    for (int python = 1; python >= 0; python--)
        for (size_t i = 0; i < stack.n; i++)
            if (stack.f[i].python == python)
                fprintf(out, "        at %s\n", esc(stack.f[i].text));
    dlt_shown_stack_free(&stack);
}

/* Groups the distinct races by fix (occurrences and distinct races per fix). -1: out of memory. */
static int group_by_fix(const dlt_log_set *set, dlt_analysis *a, dlt_tally_entry **v)
{
    for (size_t i = 0; i < a->races.n; i++) {
        dlt_tally_entry *e = dlt_tally_add(&a->fixes, dlt_race_fix_id(set->recs[v[i]->first].obj), NULL);
        if (!e)
            return -1;
        e->count += v[i]->count;
        e->aux++;
    }
    return 0;
}

static void print_race(const dlt_log_set *set, const dlt_tally_entry *v, const dlt_symbolizer *sym, FILE *out)
{
    const dlt_json_value *r = set->recs[v->first].obj;
    char xid[32], pid[32], dev[64];
    const dlt_json_value *tensor = dlt_json_get(r, "tensor");
    fprintf(out, "    %s x%lld  (key %s; first in pid %s, xid %s, %s:%ld)\n", esc(dlt_json_get_str(r, "kind")),
            v->count, esc(v->key), esc(dlt_scalar_text(r, "pid", pid, sizeof pid)),
            esc(dlt_scalar_text(r, "xid", xid, sizeof xid)), esc(set->recs[v->first].file), set->recs[v->first].line);
    fprintf(out, "      tensor    %s %s on %s\n", esc(dlt_json_get_str(tensor, "dtype")),
            esc(dlt_json_get_str(tensor, "data")),
            esc(dlt_device_text(dlt_json_get(tensor, "device"), dev, sizeof dev)));
    print_side(r, "producer", sym, out);
    print_side(r, "consumer", sym, out);
    const char *why = dlt_json_get_str(r, "why");
    if (why)
        fprintf(out, "      why       %s\n", esc(why));
    const char *fix = dlt_json_get_str(dlt_json_get(r, "fix"), "text");
    if (fix)
        fprintf(out, "      fix       %s\n", esc(fix));
}

/* The races grouped by fix, the most frequent fix first; within a group, by occurrences. */
static void print_races(const dlt_log_set *set, const dlt_analysis *a, dlt_tally_entry **races, dlt_tally_entry **fixes,
                        const dlt_symbolizer *sym, FILE *out)
{
    for (size_t f = 0; f < a->fixes.n; f++) {
        fprintf(out, "  fix %s: %s (%lld distinct, %lld occurrences)\n", esc(fixes[f]->key),
                dlt_fix_title(fixes[f]->key), fixes[f]->aux, fixes[f]->count);
        for (size_t i = 0; i < a->races.n; i++)
            if (strcmp(dlt_race_fix_id(set->recs[races[i]->first].obj), fixes[f]->key) == 0)
                print_race(set, races[i], sym, out);
    }
}

/* The suppressed races: kind, key and the rule that matched. */
static void print_suppressed(const dlt_log_set *set, const dlt_analysis *a, dlt_tally_entry **v, FILE *out)
{
    for (size_t i = 0; i < a->suppressed.n; i++) {
        const dlt_json_value *r = set->recs[v[i]->first].obj, *s = dlt_json_get(r, "suppressed");
        char line[32];
        fprintf(out, "    %s x%lld  (key %s) by %s (%s:%s)\n", esc(dlt_json_get_str(r, "kind")), v[i]->count,
                esc(v[i]->key), esc(dlt_json_get_str(s, "rule")), esc(dlt_json_get_str(s, "file")),
                dlt_scalar_text(s, "line", line, sizeof line));
    }
}

static void print_reasons(const dlt_log_set *set, const dlt_tally *t, dlt_tally_entry **v, FILE *out)
{
    for (size_t i = 0; i < t->n; i++) {
        const char *detail = dlt_json_get_str(set->recs[v[i]->first].obj, "detail");
        fprintf(out, "  %8lld  %s%s%s\n", v[i]->count, esc(v[i]->key), detail && *detail ? ": " : "",
                detail ? esc(detail) : "");
    }
}

/* The processes whose log reached its size limit. */
static void print_capped(const dlt_log_set *set, const dlt_analysis *a, dlt_tally_entry **v, FILE *out)
{
    if (!a->capped.n)
        return;
    fprintf(out,
            "\nLogs capped: %zu process%s stopped writing exchange records at the log's size limit (counts of "
            "exchanges above are short; the summary records have the full ones)\n",
            a->capped.n, a->capped.n == 1 ? "" : "es");
    for (size_t i = 0; i < a->capped.n; i++) {
        char limit[32], dropped[32] = "?";
        const dlt_tally_entry *s = dlt_tally_find(&a->summaries, v[i]->key);
        if (s)
            dlt_scalar_text(set->recs[s->first].obj, "dropped", dropped, sizeof dropped);
        fprintf(out, "  pid %s: limit %s bytes, %s records dropped\n", esc(v[i]->key),
                dlt_scalar_text(set->recs[v[i]->first].obj, "limit", limit, sizeof limit), dropped);
    }
}

int dlt_summary_print(const dlt_log_set *set, const dlt_symbolizer *sym, FILE *out)
{
    dlt_analysis a;
    if (dlt_analyse(set, &a) != 0)
        return -1;
    dlt_tally_entry **races = dlt_tally_sorted(&a.races);
    int rc = (a.races.n && !races) || group_by_fix(set, &a, races) != 0 ? -1 : 0;
    dlt_tally *tables[] = {&a.pids,      &a.pairs,    &a.injects,    &a.fixes,
                           &a.fallbacks, &a.warnings, &a.suppressed, &a.capped};
    enum { NT = sizeof tables / sizeof *tables };
    dlt_tally_entry **sorted[NT];
    for (size_t i = 0; i < NT; i++) {
        sorted[i] = dlt_tally_sorted(tables[i]);
        if (tables[i]->n && !sorted[i])
            rc = -1;
    }
    if (rc == 0) {
        long long race_total = 0, suppressed_total = 0;
        for (size_t i = 0; i < a.races.n; i++)
            race_total += races[i]->count;
        for (size_t i = 0; i < a.suppressed.n; i++)
            suppressed_total += sorted[6][i]->count;
        print_not_checked(set, &a, sorted[0], out);
        fprintf(out, "dlsync report: %zu records from %lld process%s\n", set->n, (long long)a.pids.n,
                a.pids.n == 1 ? "" : "es");
        print_processes(set, &a, sorted[0], out);
        fprintf(out, "\nExchanges: %lld (%lld exports, %lld imports)\n", a.exports + a.unmatched_imports, a.exports,
                a.imports);
        if (a.pairs.n)
            print_pairs(&a, sorted[1], out);
        fprintf(out, "\nInjected syncs: %lld\n", a.injected);
        print_reasons(set, &a.injects, sorted[2], out);
        fprintf(out, "\nRaces: %zu distinct, %lld occurrences\n", a.races.n, race_total);
        print_races(set, &a, races, sorted[3], sym, out);
        if (a.suppressed.n) {
            fprintf(out, "\nSuppressed races: %zu distinct, %lld occurrences\n", a.suppressed.n, suppressed_total);
            print_suppressed(set, &a, sorted[6], out);
        }
        fprintf(out, "\nFallbacks: %lld\n", a.fallback_records);
        print_reasons(set, &a.fallbacks, sorted[4], out);
        fprintf(out, "\nWarnings: %lld\n", a.warning_records);
        print_reasons(set, &a.warnings, sorted[5], out);
        fprintf(out, "\nReleases: %lld, double releases: %lld, refused inputs: %lld\n", a.releases, a.double_releases,
                a.malformed);
        print_capped(set, &a, sorted[7], out);
        if (set->damaged)
            fprintf(out, "Damaged lines skipped: %ld (see the messages above)\n", set->damaged);
    }
    for (size_t i = 0; i < NT; i++)
        free(sorted[i]);
    free(races);
    dlt_analysis_free(&a);
    return rc;
}

/* A pid key as JSON: a number when it is one, else a string. */
static void write_pid(FILE *out, const char *key)
{
    size_t n = strspn(key, "0123456789");
    if (n && !key[n] && n < 20)
        fputs(key, out);
    else
        dlt_json_write_str(out, key);
}

/* A race side as JSON: its op, stream (as logged) and shown stack. */
static void write_side_json(const dlt_json_value *race, const char *name, const dlt_symbolizer *sym, FILE *out)
{
    const dlt_json_value *side = dlt_json_get(race, name);
    fprintf(out, "\"%s\":{\"op\":", name);
    dlt_json_write_str(out, dlt_json_get_str(side, "op"));
    fputs(",\"stream\":", out);
    dlt_json_write(out, dlt_json_get(side, "stream"));
    fputs(",\"stack\":[", out);
    dlt_shown_stack stack;
    if (dlt_stack_shown(side, sym, &stack) == 0) {
        for (size_t i = 0; i < stack.n; i++) {
            fputs(i ? "," : "", out);
            dlt_json_write_str(out, stack.f[i].text);
        }
        dlt_shown_stack_free(&stack);
    }
    fputs("]}", out);
}

/* The distinct races, the most frequent first, with their stacks as shown. */
static void write_races_json(const dlt_log_set *set, const dlt_analysis *a, const dlt_symbolizer *sym, FILE *out)
{
    dlt_tally_entry **races = dlt_tally_sorted(&a->races);
    fputs(",\"race_reports\":[", out);
    for (size_t i = 0; races && i < a->races.n; i++) {
        const dlt_json_value *r = set->recs[races[i]->first].obj, *fix = dlt_json_get(r, "fix");
        fputs(i ? ",{\"key\":" : "{\"key\":", out);
        dlt_json_write_str(out, races[i]->key);
        fputs(",\"kind\":", out);
        dlt_json_write_str(out, dlt_json_get_str(r, "kind"));
        fprintf(out, ",\"count\":%lld,\"pid\":", races[i]->count);
        dlt_json_write(out, dlt_json_get(r, "pid"));
        fputs(",\"xid\":", out);
        dlt_json_write(out, dlt_json_get(r, "xid"));
        fputs(",\"framework\":", out);
        dlt_json_write_str(out, dlt_json_get_str(r, "framework"));
        fputs(",\"symbol\":", out);
        dlt_json_write_str(out, dlt_json_get_str(r, "symbol"));
        fputc(',', out);
        write_side_json(r, "producer", sym, out);
        fputc(',', out);
        write_side_json(r, "consumer", sym, out);
        fputs(",\"why\":", out);
        dlt_json_write_str(out, dlt_json_get_str(r, "why"));
        fputs(",\"fix\":{\"id\":", out);
        dlt_json_write_str(out, dlt_race_fix_id(r));
        fputs(",\"text\":", out);
        dlt_json_write_str(out, dlt_json_get_str(fix, "text"));
        fputs("}}", out);
    }
    fputc(']', out);
    free(races);
}

int dlt_summary_print_json(const dlt_log_set *set, const dlt_symbolizer *sym, FILE *out)
{
    dlt_summary_counts c;
    dlt_analysis a;
    if (dlt_summary_count(set, &c) != 0 || dlt_analyse(set, &a) != 0)
        return -1;
    dlt_tally_entry **pids = dlt_tally_sorted(&a.pids), **capped = dlt_tally_sorted(&a.capped);
    int rc = (a.pids.n && !pids) || (a.capped.n && !capped) ? -1 : 0;
    if (rc == 0) {
        fprintf(out,
                "{\"records\":%zu,\"processes\":%lld,\"exchanges\":%lld,\"exports\":%lld,\"imports\":%lld,"
                "\"injected\":%lld,\"races\":%lld,\"race_occurrences\":%lld,\"suppressed\":%lld,\"fallbacks\":%lld,"
                "\"warnings\":%lld,\"releases\":%lld,\"double_releases\":%lld,\"malformed\":%lld,"
                "\"damaged_lines\":%ld,\"files_failed\":%d,\"checked\":%s,\"not_checked\":[",
                set->n, c.processes, c.exchanges, a.exports, a.imports, c.injected, c.races, c.race_total, c.suppressed,
                c.fallbacks, a.warning_records, a.releases, a.double_releases, a.malformed, set->damaged,
                set->files_failed,
                c.check_processes == 0 ? "null"
                : c.not_checked        ? "false"
                                       : "true");
        int first = 1;
        char why[512];
        for (size_t i = 0; i < a.pids.n; i++) {
            if (dlt_check_state(set, &a, pids[i], why, sizeof why) != 0)
                continue;
            fprintf(out, "%s{\"pid\":", first ? "" : ",");
            write_pid(out, pids[i]->key);
            fputs(",\"exe\":", out);
            dlt_json_write_str(out, dlt_json_get_str(set->recs[pids[i]->first].obj, "exe"));
            fputs(",\"why\":", out);
            dlt_json_write_str(out, why);
            fputc('}', out);
            first = 0;
        }
        fputs("],\"capped\":[", out);
        for (size_t i = 0; i < a.capped.n; i++) {
            long long limit = 0;
            dlt_json_get_int(set->recs[capped[i]->first].obj, "limit", &limit);
            fprintf(out, "%s{\"pid\":", i ? "," : "");
            write_pid(out, capped[i]->key);
            fprintf(out, ",\"limit\":%lld}", limit);
        }
        fputc(']', out);
        write_races_json(set, &a, sym, out);
        fputs("}\n", out);
    }
    free(pids);
    free(capped);
    dlt_analysis_free(&a);
    return rc;
}
