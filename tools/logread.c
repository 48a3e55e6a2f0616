/* JSON-lines log reader (see logread.h). */
#include "logread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filekind.h"
#include "grow.h"
#include "textesc.h"

/* Opens path as the options allow; NULL with a reason in why. */
static FILE *open_log(const char *path, const dlt_log_scan_opts *o, char *why, size_t n)
{
    int stdin_ = strcmp(path, "-") == 0 && o->pipes;
    int fd = stdin_ ? dup(0) : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, n, "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) && !(o->pipes && S_ISFIFO(st.st_mode))) {
        snprintf(why, n, "refused: %s", dlt_file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    /* Reads wait for a pipe's writer from here on; a FIFO without one reads as empty. */
    if (!stdin_)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(why, n, "cannot read: %s", strerror(errno));
        close(fd);
    }
    return f;
}

/* Reads one line of at most `max` bytes (its newline not counted) into *buf. Returns its length
 * (*nl set when it ended with a newline), -1 at the end of the file, -2 when it is longer than
 * max (the rest of the line is left unread), -3 when memory runs out. */
static long read_line(FILE *f, char **buf, size_t *cap, size_t max, int *nl)
{
    size_t len = 0;
    *nl = 0;
    int c = 0;
    for (;;) {
        char *nb = dlt_grow(*buf, cap, len + 2, 1, 4096); /* this byte and the terminating NUL */
        if (!nb)
            return -3;
        *buf = nb;
        if ((c = getc_unlocked(f)) == EOF || c == '\n')
            break;
        if (len >= max)
            return -2;
        (*buf)[len++] = (char)c;
    }
    *nl = c == '\n';
    if (c == EOF && len == 0)
        return -1;
    (*buf)[len] = '\0';
    return (long)len;
}

/* 1 when the line begins as the shim writes a record of one of the wanted kinds. */
static int wanted(const char *line, size_t len, const char *const *kinds)
{
    if (!kinds)
        return 1;
    if (len < 8 || memcmp(line, "{\"ev\":\"", 7) != 0)
        return 0;
    for (; *kinds; kinds++) {
        size_t k = strlen(*kinds);
        if (len > 7 + k && memcmp(line + 7, *kinds, k) == 0 && line[7 + k] == '"')
            return 1;
    }
    return 0;
}

int dlt_log_scan(const char *path, const dlt_log_scan_opts *o, dlt_log_visit visit, void *ctx, long *damaged)
{
    char why[160], name[512];
    dlt_text_escape(path, name, sizeof name);
    FILE *f = open_log(path, o, why, sizeof why);
    if (!f) {
        if (o->errs)
            fprintf(o->errs, "dlsync: %s: %s\n", name, why);
        return -1;
    }
    char *buf = NULL;
    size_t cap = 0;
    long line = 0, bad = 0, good = 0;
    int rc = 0, nl;
    long got;
    while ((got = read_line(f, &buf, &cap, DLT_LOG_MAX_LINE, &nl)) >= -2) {
        if (got == -1)
            break;
        line++;
        if (got == -2) {
            if (o->errs)
                fprintf(o->errs, "dlsync: %s:%ld: line longer than %u bytes: not a dlsync log; not read further\n",
                        name, line, DLT_LOG_MAX_LINE);
            rc = -1;
            break;
        }
        size_t len = (size_t)got, start = 0;
        while (len > 0 && buf[len - 1] == '\r')
            len--;
        while (start < len && (buf[start] == ' ' || buf[start] == '\t'))
            start++;
        if (start == len)
            continue;
        if (good && !wanted(buf + start, len - start, o->kinds))
            continue;
        dlt_json_error err;
        dlt_json_value *obj = dlt_json_parse(buf + start, len - start, &err);
        const char *ev = obj ? dlt_json_get_str(obj, "ev") : NULL;
        if (!ev) {
            char what[192];
            if (!obj && !nl)
                snprintf(what, sizeof what, "last line cut short at column %zu (%s; was the process killed mid-write?)",
                         start + err.offset + 1, err.message);
            else if (!obj)
                snprintf(what, sizeof what, "malformed JSON at column %zu: %s", start + err.offset + 1, err.message);
            else
                snprintf(what, sizeof what, "%s",
                         obj->type != DLT_JSON_OBJECT ? "not a JSON object" : "record without a string \"ev\" key");
            dlt_json_free(obj);
            if (!good || ++bad > DLT_LOG_MAX_DAMAGED) {
                if (o->errs)
                    fprintf(o->errs, "dlsync: %s:%ld: %s: not a dlsync log%s; not read further\n", name, line, what,
                            good ? " (too many damaged lines)" : "");
                rc = -1;
                break;
            }
            (*damaged)++;
            if (o->errs)
                fprintf(o->errs, "dlsync: %s:%ld: %s; line skipped\n", name, line, what);
            continue;
        }
        good++; /* a record: the first proves the file is a log; unwanted later ones were skipped above */
        if (!wanted(buf + start, len - start, o->kinds)) {
            dlt_json_free(obj);
            continue;
        }
        dlt_log_record r = {.file = path, .line = line, .obj = obj, .ev = ev};
        int stop = visit(&r, ctx);
        dlt_json_free(r.obj);
        if (stop) {
            if (o->errs)
                fprintf(o->errs, "dlsync: %s:%ld: out of memory\n", name, line);
            rc = -1;
            break;
        }
    }
    if (got == -3) {
        if (o->errs)
            fprintf(o->errs, "dlsync: %s:%ld: out of memory\n", name, line);
        rc = -1;
    }
    if (rc == 0 && ferror(f)) {
        rc = -1;
        if (o->errs)
            fprintf(o->errs, "dlsync: %s: read error after line %ld\n", name, line);
    }
    free(buf);
    fclose(f);
    return rc;
}

static int append(dlt_log_record *r, void *ctx)
{
    dlt_log_set *set = ctx;
    dlt_log_record *nr = dlt_grow(set->recs, &set->cap, set->n + 1, sizeof *nr, 256);
    if (!nr)
        return -1;
    set->recs = nr;
    set->recs[set->n++] = *r;
    r->obj = NULL; /* the set owns it now */
    return 0;
}

int dlt_log_read(dlt_log_set *set, const char *path, FILE *errs)
{
    dlt_log_scan_opts o = {.pipes = 1, .errs = errs};
    int rc = dlt_log_scan(path, &o, append, set, &set->damaged);
    if (rc != 0)
        set->files_failed++;
    return rc;
}

void dlt_log_set_free(dlt_log_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        dlt_json_free(set->recs[i].obj);
    free(set->recs);
    memset(set, 0, sizeof *set);
}
