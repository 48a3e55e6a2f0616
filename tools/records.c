/* Record helpers shared by the summary and the timeline (see records.h). */
#include "records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

size_t *dls_match_exchanges(const dls_log_set *set)
{
    if (!set->n)
        return NULL;
    size_t *match = malloc(set->n * sizeof *match);
    if (!match)
        return NULL;
    dls_tally exports = {0};
    char key[96], a[40], b[40];
    int ok = 1;
    for (size_t i = 0; i < set->n; i++) {
        match[i] = DLS_NO_RECORD;
        const dls_log_record *r = &set->recs[i];
        if (strcmp(r->ev, "export") != 0)
            continue;
        snprintf(key, sizeof key, "%s/%s", dls_scalar_text(r->obj, "pid", a, sizeof a),
                 dls_scalar_text(r->obj, "xid", b, sizeof b));
        int fresh;
        dls_tally_entry *e = dls_tally_add(&exports, key, &fresh);
        if (!e) {
            ok = 0;
            break;
        }
        if (fresh)
            e->first = i;
    }
    for (size_t i = 0; ok && i < set->n; i++) {
        const dls_log_record *r = &set->recs[i];
        if (strcmp(r->ev, "import") != 0 || !dls_json_get(r->obj, "xid"))
            continue;
        snprintf(key, sizeof key, "%s/%s", dls_scalar_text(r->obj, "pid", a, sizeof a),
                 dls_scalar_text(r->obj, "xid", b, sizeof b));
        dls_tally_entry *e = dls_tally_find(&exports, key);
        if (e)
            match[i] = e->first;
    }
    dls_tally_free(&exports);
    if (!ok) {
        free(match);
        return NULL;
    }
    return match;
}

const char *dls_scalar_text(const dlt_json_value *obj, const char *key, char *buf, size_t n)
{
    const dlt_json_value *v = dls_json_get(obj, key);
    if (!v)
        snprintf(buf, n, "?");
    else if (v->type == DLS_JSON_STRING)
        snprintf(buf, n, "%s", v->str);
    else if (v->type == DLS_JSON_NUMBER && v->is_int)
        snprintf(buf, n, "%lld", v->ival);
    else if (v->type == DLS_JSON_NUMBER)
        snprintf(buf, n, "%g", v->num);
    else if (v->type == DLS_JSON_BOOL)
        snprintf(buf, n, "%s", v->boolean ? "true" : "false");
    else
        snprintf(buf, n, "?");
    return buf;
}

const char *dls_device_text(const dlt_json_value *device, char *buf, size_t n)
{
    char t[48], id[24];
    if (!device || device->type != DLS_JSON_OBJECT)
        snprintf(buf, n, "?");
    else
        snprintf(buf, n, "%s:%s", dls_scalar_text(device, "type", t, sizeof t),
                 dls_scalar_text(device, "id", id, sizeof id));
    return buf;
}

const char *dls_stream_text(const dlt_json_value *stream, char *buf, size_t n)
{
    char id[24], kind[32], dev[24];
    if (!stream || stream->type != DLS_JSON_OBJECT)
        snprintf(buf, n, "host");
    else
        snprintf(buf, n, "stream %s (%s, dev %s)", dls_scalar_text(stream, "id", id, sizeof id),
                 dls_scalar_text(stream, "kind", kind, sizeof kind),
                 dls_scalar_text(stream, "device", dev, sizeof dev));
    return buf;
}
