/* libFuzzer harness: the JSON reader (tools/json.c) and the log reader (tools/logread.c).
 * Properties: parsing never crashes or leaks; every string and key it decodes is valid UTF-8
 * (invalid bytes are read as U+FFFD, shim/common/utf8.h); what the writer writes for a parsed
 * value parses again, and from then on writing is a fixed point (the first write may differ from
 * the input's text: spacing, escapes); the log reader reads any bytes, skipping what is damaged. */
#include "common/utf8.h"
#include "json.h"
#include "logread.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* v written as JSON text (malloc'd, *len bytes). */
static char *written(const dlt_json_value *v, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        abort();
    dlt_json_write(f, v);
    fclose(f);
    return buf;
}

/* Parses what was written for v (which must parse), frees v, and returns the new value. */
static dlt_json_value *reparse(dlt_json_value *v, char **text, size_t *len)
{
    *text = written(v, len);
    dlt_json_free(v);
    dlt_json_value *w = dlt_json_parse(*text, *len, NULL);
    if (!w)
        abort();
    return w;
}

/* Aborts unless s[0..n) is valid UTF-8. */
static void valid_text(const char *s, size_t n)
{
    for (size_t i = 0, len; i < n; i += len)
        if (!(len = dls_utf8_len((const unsigned char *)s + i, n - i)))
            abort();
}

/* Aborts unless every string and key under v is valid UTF-8. */
static void valid_strings(const dlt_json_value *v)
{
    if (v->type == DLT_JSON_STRING)
        valid_text(v->str, v->len);
    for (size_t i = 0; v->items && i < v->len; i++) {
        if (v->keys)
            valid_text(v->keys[i], strlen(v->keys[i]));
        valid_strings(v->items[i]);
    }
}

static void round_trip(const char *text, size_t n)
{
    dlt_json_value *v = dlt_json_parse(text, n, NULL);
    if (!v)
        return;
    valid_strings(v);
    char *t1, *t2, *t3;
    size_t l1, l2, l3;
    v = reparse(v, &t1, &l1);
    v = reparse(v, &t2, &l2);
    v = reparse(v, &t3, &l3);
    if (l2 != l3 || memcmp(t2, t3, l2) != 0)
        abort();
    free(t1);
    free(t2);
    free(t3);
    dlt_json_free(v);
}

static void log_lines(const uint8_t *data, size_t n)
{
    int fd = memfd_create("log", 0);
    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    dlt_log_set set = {0};
    dlt_log_read(&set, path, NULL);
    for (size_t i = 0; i < set.n; i++)
        if (!set.recs[i].ev || !set.recs[i].obj)
            abort();
    dlt_log_set_free(&set);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    round_trip((const char *)data, n);
    log_lines(data, n);
    return 0;
}
