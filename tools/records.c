/* Record helpers shared by the summary and the timeline (see records.h). */
#include "records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

size_t *dlt_match_exchanges(const dlt_log_set *set)
{
    if (!set->n)
        return NULL;
    size_t *match = malloc(set->n * sizeof *match);
    if (!match)
        return NULL;
    dlt_tally exports = {0};
    char key[96], a[40], b[40];
    int ok = 1;
    for (size_t i = 0; i < set->n; i++) {
        match[i] = DLT_NO_RECORD;
        const dlt_log_record *r = &set->recs[i];
        if (strcmp(r->ev, "export") != 0)
            continue;
        snprintf(key, sizeof key, "%s/%s", dlt_scalar_text(r->obj, "pid", a, sizeof a),
                 dlt_scalar_text(r->obj, "xid", b, sizeof b));
        int fresh;
        dlt_tally_entry *e = dlt_tally_add(&exports, key, &fresh);
        if (!e) {
            ok = 0;
            break;
        }
        if (fresh)
            e->first = i;
    }
    for (size_t i = 0; ok && i < set->n; i++) {
        const dlt_log_record *r = &set->recs[i];
        if (strcmp(r->ev, "import") != 0 || !dlt_json_get(r->obj, "xid"))
            continue;
        snprintf(key, sizeof key, "%s/%s", dlt_scalar_text(r->obj, "pid", a, sizeof a),
                 dlt_scalar_text(r->obj, "xid", b, sizeof b));
        dlt_tally_entry *e = dlt_tally_find(&exports, key);
        if (e)
            match[i] = e->first;
    }
    dlt_tally_free(&exports);
    if (!ok) {
        free(match);
        return NULL;
    }
    return match;
}

const char *dlt_scalar_text(const dlt_json_value *obj, const char *key, char *buf, size_t n)
{
    const dlt_json_value *v = dlt_json_get(obj, key);
    if (!v)
        snprintf(buf, n, "?");
    else if (v->type == DLT_JSON_STRING)
        snprintf(buf, n, "%s", v->str);
    else if (v->type == DLT_JSON_NUMBER && v->is_int)
        snprintf(buf, n, "%lld", v->ival);
    else if (v->type == DLT_JSON_NUMBER)
        snprintf(buf, n, "%g", v->num);
    else if (v->type == DLT_JSON_BOOL)
        snprintf(buf, n, "%s", v->boolean ? "true" : "false");
    else
        snprintf(buf, n, "?");
    return buf;
}

const char *dlt_device_text(const dlt_json_value *device, char *buf, size_t n)
{
    char t[48], id[24];
    if (!device || device->type != DLT_JSON_OBJECT)
        snprintf(buf, n, "?");
    else
        snprintf(buf, n, "%s:%s", dlt_scalar_text(device, "type", t, sizeof t),
                 dlt_scalar_text(device, "id", id, sizeof id));
    return buf;
}

const char *dlt_stream_text(const dlt_json_value *stream, char *buf, size_t n)
{
    char id[24], kind[32], dev[24];
    if (!stream || stream->type != DLT_JSON_OBJECT)
        snprintf(buf, n, "host");
    else
        snprintf(buf, n, "stream %s (%s, dev %s)", dlt_scalar_text(stream, "id", id, sizeof id),
                 dlt_scalar_text(stream, "kind", kind, sizeof kind),
                 dlt_scalar_text(stream, "device", dev, sizeof dev));
    return buf;
}
