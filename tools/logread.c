/* JSON-lines log reader (see logread.h). */
#include "logread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int append(dls_log_set *set, dls_log_record r)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 256;
        dls_log_record *nr = realloc(set->recs, cap * sizeof *nr);
        if (!nr)
            return -1;
        set->recs = nr;
        set->cap = cap;
    }
    set->recs[set->n++] = r;
    return 0;
}

static void damaged(dls_log_set *set, FILE *errs, const char *path, long line, const char *what)
{
    set->damaged++;
    if (errs)
        fprintf(errs, "dlsync: %s:%ld: %s; line skipped\n", path, line, what);
}

int dls_log_read(dls_log_set *set, const char *path, FILE *errs)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        set->files_failed++;
        if (errs)
            fprintf(errs, "dlsync: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    long line = 0;
    while ((got = getline(&buf, &cap, f)) >= 0) {
        line++;
        size_t len = (size_t)got;
        int complete = len > 0 && buf[len - 1] == '\n';
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            len--;
        size_t start = 0;
        while (start < len && (buf[start] == ' ' || buf[start] == '\t'))
            start++;
        if (start == len)
            continue;
        dls_json_error err;
        dls_json *obj = dls_json_parse(buf + start, len - start, &err);
        char what[192];
        if (!obj) {
            if (!complete)
                snprintf(what, sizeof what, "last line cut short at column %zu (%s; was the process killed mid-write?)",
                         start + err.offset + 1, err.message);
            else
                snprintf(what, sizeof what, "malformed JSON at column %zu: %s", start + err.offset + 1, err.message);
            damaged(set, errs, path, line, what);
            continue;
        }
        const char *ev = dls_json_get_str(obj, "ev");
        if (obj->type != DLS_JSON_OBJECT || !ev) {
            damaged(set, errs, path, line,
                    obj->type != DLS_JSON_OBJECT ? "not a JSON object" : "record without a string \"ev\" key");
            dls_json_free(obj);
            continue;
        }
        dls_log_record r = {.file = path, .line = line, .obj = obj, .ev = ev};
        if (append(set, r) != 0) {
            dls_json_free(obj);
            damaged(set, errs, path, line, "out of memory");
            break;
        }
    }
    int rc = 0;
    if (ferror(f)) {
        set->files_failed++;
        rc = -1;
        if (errs)
            fprintf(errs, "dlsync: %s: read error after line %ld\n", path, line);
    }
    free(buf);
    fclose(f);
    return rc;
}

void dls_log_set_free(dls_log_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        dls_json_free(set->recs[i].obj);
    free(set->recs);
    memset(set, 0, sizeof *set);
}
