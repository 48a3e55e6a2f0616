/* What a set of logs holds, counted once for every output of `dlsync report` (see analysis.h). */
#include "analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

void dlt_analysis_free(dlt_analysis *a)
{
    dlt_tally *all[] = {&a->pids,      &a->pairs,    &a->injects,   &a->race_pid, &a->races,     &a->fixes,
                        &a->fallbacks, &a->warnings, &a->summaries, &a->capped,   &a->suppressed};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        dlt_tally_free(all[i]);
}

/* Adds one to the entry for key; returns -1 when memory runs out. */
static int bump(dlt_tally *t, const char *key, size_t idx)
{
    int fresh;
    dlt_tally_entry *e = dlt_tally_add(t, key, &fresh);
    if (!e)
        return -1;
    if (fresh)
        e->first = idx;
    e->count++;
    return 0;
}

static const char *or_unknown(const char *s)
{
    return s ? s : "?";
}

static int add_pair(dlt_analysis *a, const dlt_log_record *exp, const dlt_log_record *imp, size_t idx)
{
    char key[512], dev[64];
    const dlt_json_value *device = dlt_json_get(exp ? exp->obj : imp->obj, "device");
    if (!device || device->type != DLT_JSON_OBJECT)
        device = imp ? dlt_json_get(imp->obj, "device") : NULL;
    snprintf(key, sizeof key, "%s -> %s\t%s", exp ? or_unknown(dlt_json_get_str(exp->obj, "framework")) : "(not seen)",
             imp ? or_unknown(dlt_json_get_str(imp->obj, "framework")) : "(not imported)",
             dlt_device_text(device, dev, sizeof dev));
    return bump(&a->pairs, key, idx);
}

/* Sets the entry of key to the record idx (the latest wins); -1 when memory runs out. */
static int remember(dlt_tally *t, const char *key, size_t idx)
{
    dlt_tally_entry *e = dlt_tally_add(t, key, NULL);
    if (!e)
        return -1;
    e->first = idx;
    e->count++;
    return 0;
}

static int add_race(dlt_analysis *a, const dlt_log_record *r, size_t idx)
{
    char key[128], pid[32], pkey[192];
    dlt_scalar_text(r->obj, "key", key, sizeof key);
    snprintf(pkey, sizeof pkey, "%s\t%s", dlt_scalar_text(r->obj, "pid", pid, sizeof pid), key);
    int fresh;
    dlt_tally_entry *per = dlt_tally_add(&a->race_pid, pkey, &fresh);
    dlt_tally_entry *all = per ? dlt_tally_add(&a->races, key, &fresh) : NULL;
    if (!all)
        return -1;
    if (fresh)
        all->first = idx;
    /* "count" is the number of occurrences so far in that process: the latest (largest) wins;
     * records without it count one each. */
    long long count;
    per->count++;
    if (!dlt_json_get_int(r->obj, "count", &count) || count < per->count)
        count = per->count;
    if (count > per->aux) {
        all->count += count - per->aux;
        per->aux = count;
    }
    return 0;
}

int dlt_analyse(const dlt_log_set *set, dlt_analysis *a)
{
    memset(a, 0, sizeof *a);
    size_t *match = dlt_match_exchanges(set);
    char *imported = calloc(set->n ? set->n : 1, 1);
    int rc = (set->n && !match) || !imported ? -1 : 0;
    char pid[32];
    for (size_t i = 0; rc == 0 && i < set->n; i++) {
        const dlt_log_record *r = &set->recs[i];
        int fresh;
        dlt_tally_entry *p = dlt_tally_add(&a->pids, dlt_scalar_text(r->obj, "pid", pid, sizeof pid), &fresh);
        if (!p) {
            rc = -1;
            break;
        }
        if (fresh || (strcmp(r->ev, "start") == 0 && strcmp(set->recs[p->first].ev, "start") != 0))
            p->first = i;
        p->count++;
        if (strcmp(r->ev, "export") == 0) {
            a->exports++;
        } else if (strcmp(r->ev, "import") == 0) {
            a->imports++;
            if (match[i] != DLT_NO_RECORD) {
                imported[match[i]] = 1;
                rc = add_pair(a, &set->recs[match[i]], r, i);
            } else {
                a->unmatched_imports++;
                rc = add_pair(a, NULL, r, i);
            }
        } else if (strcmp(r->ev, "release") == 0) {
            a->releases++;
        } else if (strcmp(r->ev, "double_release") == 0) {
            a->double_releases++;
        } else if (strcmp(r->ev, "malformed") == 0) {
            a->malformed++;
        } else if (strcmp(r->ev, "inject") == 0) {
            a->injected++;
            rc = bump(&a->injects, or_unknown(dlt_json_get_str(r->obj, "what")), i);
        } else if (strcmp(r->ev, "race") == 0 && dlt_json_get(r->obj, "suppressed")) {
            char key[128];
            rc = bump(&a->suppressed, dlt_scalar_text(r->obj, "key", key, sizeof key), i);
        } else if (strcmp(r->ev, "race") == 0) {
            rc = add_race(a, r, i);
        } else if (strcmp(r->ev, "summary") == 0) {
            rc = remember(&a->summaries, pid, i);
        } else if (strcmp(r->ev, "log_capped") == 0) {
            rc = remember(&a->capped, pid, i);
        } else if (strcmp(r->ev, "fallback") == 0) {
            a->fallback_records++;
            rc = bump(&a->fallbacks, or_unknown(dlt_json_get_str(r->obj, "reason")), i);
        } else if (strcmp(r->ev, "warning") == 0) {
            a->warning_records++;
            rc = bump(&a->warnings, or_unknown(dlt_json_get_str(r->obj, "reason")), i);
        }
    }
    for (size_t i = 0; rc == 0 && i < set->n; i++)
        if (strcmp(set->recs[i].ev, "export") == 0 && !imported[i])
            rc = add_pair(a, &set->recs[i], NULL, i);
    free(match);
    free(imported);
    if (rc != 0)
        dlt_analysis_free(a);
    return rc;
}

int dlt_check_state(const dlt_log_set *set, const dlt_analysis *a, const dlt_tally_entry *p, char *why, size_t n)
{
    const dlt_log_record *start = &set->recs[p->first];
    const char *mode = dlt_json_get_str(start->obj, "mode");
    if (strcmp(start->ev, "start") != 0 || !mode || strcmp(mode, "check") != 0)
        return -1;
    const dlt_tally_entry *s = dlt_tally_find(&a->summaries, p->key);
    if (!s) {
        snprintf(why, n, "no summary record: the process was killed, ended through exec, or was still running");
        return 0;
    }
    const dlt_json_value *sum = set->recs[s->first].obj, *checked = dlt_json_get(sum, "checked");
    if (checked && checked->type == DLT_JSON_BOOL) {
        const char *w = dlt_json_get_str(sum, "why");
        snprintf(why, n, "%s", w ? w : "not checked");
        return checked->boolean;
    }
    /* A log of an older dlsync: no observer, yet exchanges to check. */
    long long exchanges = 0;
    const char *cupti = dlt_json_get_str(sum, "cupti");
    if (cupti && strcmp(cupti, "none") == 0 && dlt_json_get_int(sum, "exchanges", &exchanges) && exchanges > 0) {
        snprintf(why, n, "no CUDA observer (cupti=none)");
        return 0;
    }
    return 1;
}

const char *dlt_race_fix_id(const dlt_json_value *race)
{
    const char *id = dlt_json_get_str(dlt_json_get(race, "fix"), "id");
    return id ? id : "(none)";
}

const char *dlt_fix_title(const char *id)
{
    static const struct {
        const char *id, *title;
    } titles[] = {
#define DLS_ADVICE_PATH(way, fix, title, text) {fix, title},
#define DLS_ADVICE_KIND(kind, fix, title, text) {fix, title},
#include "report/advice.def"
#undef DLS_ADVICE_PATH
#undef DLS_ADVICE_KIND
    };
    for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
        if (strcmp(titles[i].id, id) == 0)
            return titles[i].title;
    return strcmp(id, "(none)") == 0 ? "no fix recorded (a log of an older dlsync)" : "a fix this dlsync does not know";
}
