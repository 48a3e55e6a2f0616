/* Recursive-descent JSON parser and string writer (see json.h). */
#include "json.h"
#include "grow.h"

#include "common/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s;
    size_t n, pos;
    dlt_json_error *err;
    int failed;
} parser;

static void fail(parser *p, const char *msg)
{
    if (p->failed)
        return;
    p->failed = 1;
    if (p->err) {
        p->err->offset = p->pos;
        snprintf(p->err->message, sizeof p->err->message, "%s", msg);
    }
}

static void skip_ws(parser *p)
{
    while (p->pos < p->n) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static dlt_json_value *node(parser *p, dlt_json_type t)
{
    dlt_json_value *v = calloc(1, sizeof *v);
    if (!v)
        fail(p, "out of memory");
    else
        v->type = t;
    return v;
}

/* Growable byte buffer for decoded strings. */
typedef struct {
    char *b;
    size_t len, cap;
} sbuf;

static int sbuf_put(sbuf *b, const char *data, size_t n)
{
    char *nb = dlt_grow(b->b, &b->cap, b->len + n + 1, 1, 32);
    if (!nb)
        return -1;
    b->b = nb;
    memcpy(b->b + b->len, data, n);
    b->len += n;
    b->b[b->len] = '\0';
    return 0;
}

/* Appends the n bytes of raw string text, each byte that is not valid UTF-8 as U+FFFD (the rule
 * of common/utf8.h, the one the shim's writer applies). */
static int sbuf_put_text(sbuf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, kept = 0; /* s[kept..i) is valid text not appended yet */
    while (i < n) {
        size_t len = u[i] < 0x80 ? 1 : dls_utf8_len(u + i, n - i);
        if (len) {
            i += len;
            continue;
        }
        if (sbuf_put(b, s + kept, i - kept) != 0 || sbuf_put(b, DLS_UTF8_REPLACEMENT, DLS_UTF8_REPLACEMENT_LEN) != 0)
            return -1;
        kept = ++i;
    }
    return sbuf_put(b, s + kept, n - kept);
}

static int hex4(parser *p, unsigned *out)
{
    if (p->n - p->pos < 4) {
        fail(p, "truncated \\u escape");
        return -1;
    }
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else {
            p->pos--;
            fail(p, "bad hex digit in \\u escape");
            return -1;
        }
    }
    *out = v;
    return 0;
}

static size_t utf8_encode(unsigned cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parses a string literal at p->pos (which is at the opening quote) into a malloc'd buffer. */
static char *parse_string_raw(parser *p, size_t *len_out)
{
    sbuf b = {0};
    if (sbuf_put(&b, "", 0) != 0) {
        fail(p, "out of memory");
        return NULL;
    }
    p->pos++; /* opening quote */
    for (;;) {
        if (p->pos >= p->n) {
            fail(p, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            *len_out = b.len;
            return b.b;
        }
        if (c < 0x20) {
            fail(p, "control character in string");
            break;
        }
        if (c != '\\') {
            size_t run = p->pos;
            while (run < p->n && p->s[run] != '"' && p->s[run] != '\\' && (unsigned char)p->s[run] >= 0x20)
                run++;
            if (sbuf_put_text(&b, p->s + p->pos, run - p->pos) != 0) {
                fail(p, "out of memory");
                break;
            }
            p->pos = run;
            continue;
        }
        p->pos++;
        if (p->pos >= p->n) {
            fail(p, "unterminated escape");
            break;
        }
        char e = p->s[p->pos++], ch;
        switch (e) {
        case '"':
            ch = '"';
            break;
        case '\\':
            ch = '\\';
            break;
        case '/':
            ch = '/';
            break;
        case 'b':
            ch = '\b';
            break;
        case 'f':
            ch = '\f';
            break;
        case 'n':
            ch = '\n';
            break;
        case 'r':
            ch = '\r';
            break;
        case 't':
            ch = '\t';
            break;
        case 'u': {
            unsigned cp;
            if (hex4(p, &cp) != 0)
                goto out;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (p->n - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                    fail(p, "unpaired surrogate in \\u escape");
                    goto out;
                }
                p->pos += 2;
                if (hex4(p, &lo) != 0)
                    goto out;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    fail(p, "unpaired surrogate in \\u escape");
                    goto out;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                fail(p, "unpaired surrogate in \\u escape");
                goto out;
            }
            char u[4];
            if (sbuf_put(&b, u, utf8_encode(cp, u)) != 0) {
                fail(p, "out of memory");
                goto out;
            }
            continue;
        }
        default:
            p->pos--;
            fail(p, "bad escape in string");
            goto out;
        }
        if (sbuf_put(&b, &ch, 1) != 0) {
            fail(p, "out of memory");
            break;
        }
    }
out:
    free(b.b);
    return NULL;
}

static dlt_json_value *parse_value(parser *p, int depth);

static int push_item(parser *p, dlt_json_value *v, dlt_json_value *item, char *key)
{
    if ((v->len & (v->len - 1)) == 0) { /* grow at powers of two */
        size_t cap = v->len ? v->len * 2 : 4;
        dlt_json_value **items = realloc(v->items, cap * sizeof *items);
        if (!items) {
            fail(p, "out of memory");
            return -1;
        }
        v->items = items;
        if (v->type == DLT_JSON_OBJECT) {
            char **keys = realloc(v->keys, cap * sizeof *keys);
            if (!keys) {
                fail(p, "out of memory");
                return -1;
            }
            v->keys = keys;
        }
    }
    v->items[v->len] = item;
    if (v->type == DLT_JSON_OBJECT)
        v->keys[v->len] = key;
    v->len++;
    return 0;
}

static dlt_json_value *parse_container(parser *p, int depth, int is_object)
{
    dlt_json_value *v = node(p, is_object ? DLT_JSON_OBJECT : DLT_JSON_ARRAY);
    if (!v)
        return NULL;
    char close = is_object ? '}' : ']';
    p->pos++;
    skip_ws(p);
    if (p->pos < p->n && p->s[p->pos] == close) {
        p->pos++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(p);
        if (is_object) {
            size_t klen;
            if (p->pos >= p->n || p->s[p->pos] != '"') {
                fail(p, p->pos >= p->n ? "truncated object" : "expected a string key");
                break;
            }
            key = parse_string_raw(p, &klen);
            if (!key)
                break;
            skip_ws(p);
            if (p->pos >= p->n || p->s[p->pos] != ':') {
                fail(p, p->pos >= p->n ? "truncated object" : "expected ':' after key");
                free(key);
                break;
            }
            p->pos++;
        }
        dlt_json_value *item = parse_value(p, depth + 1);
        if (!item || push_item(p, v, item, key) != 0) {
            dlt_json_free(item);
            free(key);
            break;
        }
        skip_ws(p);
        if (p->pos >= p->n) {
            fail(p, is_object ? "truncated object" : "truncated array");
            break;
        }
        char c = p->s[p->pos++];
        if (c == close)
            return v;
        if (c != ',') {
            p->pos--;
            fail(p, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
            break;
        }
    }
    dlt_json_free(v);
    return NULL;
}

static dlt_json_value *parse_number(parser *p)
{
    size_t start = p->pos;
    int integer = 1;
    if (p->pos < p->n && p->s[p->pos] == '-')
        p->pos++;
    if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
        fail(p, "bad number");
        return NULL;
    }
    if (p->s[p->pos] == '0')
        p->pos++;
    else
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    if (p->pos < p->n && p->s[p->pos] == '.') {
        integer = 0;
        p->pos++;
        if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
            fail(p, "bad number: digits must follow '.'");
            return NULL;
        }
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    }
    if (p->pos < p->n && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integer = 0;
        p->pos++;
        if (p->pos < p->n && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
            fail(p, "bad number: digits must follow the exponent");
            return NULL;
        }
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    }
    char tmp[64];
    size_t len = p->pos - start;
    if (len >= sizeof tmp) {
        p->pos = start;
        fail(p, "number too long");
        return NULL;
    }
    memcpy(tmp, p->s + start, len);
    tmp[len] = '\0';
    double num = strtod(tmp, NULL);
    if (isinf(num)) { /* JSON cannot write it back */
        p->pos = start;
        fail(p, "number out of range");
        return NULL;
    }
    dlt_json_value *v = node(p, DLT_JSON_NUMBER);
    if (!v)
        return NULL;
    v->num = num;
    if (integer) {
        errno = 0;
        long long i = strtoll(tmp, NULL, 10);
        if (errno == 0) {
            v->ival = i;
            v->is_int = 1;
        }
    }
    return v;
}

static dlt_json_value *parse_literal(parser *p, const char *word, dlt_json_type t, int b)
{
    size_t wl = strlen(word);
    if (p->n - p->pos < wl || memcmp(p->s + p->pos, word, wl) != 0) {
        fail(p, p->n - p->pos < wl && memcmp(p->s + p->pos, word, p->n - p->pos) == 0 ? "truncated literal"
                                                                                      : "unexpected character");
        return NULL;
    }
    p->pos += wl;
    dlt_json_value *v = node(p, t);
    if (v)
        v->boolean = b;
    return v;
}

static dlt_json_value *parse_value(parser *p, int depth)
{
    if (depth > DLT_JSON_MAX_DEPTH) {
        fail(p, "nested too deeply");
        return NULL;
    }
    skip_ws(p);
    if (p->pos >= p->n) {
        fail(p, "unexpected end of input");
        return NULL;
    }
    switch (p->s[p->pos]) {
    case '{':
        return parse_container(p, depth, 1);
    case '[':
        return parse_container(p, depth, 0);
    case '"': {
        dlt_json_value *v = node(p, DLT_JSON_STRING);
        if (!v)
            return NULL;
        v->str = parse_string_raw(p, &v->len);
        if (!v->str) {
            free(v);
            return NULL;
        }
        return v;
    }
    case 't':
        return parse_literal(p, "true", DLT_JSON_BOOL, 1);
    case 'f':
        return parse_literal(p, "false", DLT_JSON_BOOL, 0);
    case 'n':
        return parse_literal(p, "null", DLT_JSON_NULL, 0);
    default:
        return parse_number(p);
    }
}

dlt_json_value *dlt_json_parse(const char *text, size_t len, dlt_json_error *err)
{
    parser p = {.s = text, .n = len, .err = err};
    dlt_json_value *v = parse_value(&p, 0);
    if (v) {
        skip_ws(&p);
        if (p.pos != p.n) {
            fail(&p, "unexpected text after the value");
            dlt_json_free(v);
            v = NULL;
        }
    }
    return v;
}

void dlt_json_free(dlt_json_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->len && v->items; i++) {
        dlt_json_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

const dlt_json_value *dlt_json_get(const dlt_json_value *obj, const char *key)
{
    if (!obj || obj->type != DLT_JSON_OBJECT)
        return NULL;
    for (size_t i = obj->len; i-- > 0;)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

const char *dlt_json_get_str(const dlt_json_value *obj, const char *key)
{
    const dlt_json_value *v = dlt_json_get(obj, key);
    return v && v->type == DLT_JSON_STRING ? v->str : NULL;
}

int dlt_json_get_int(const dlt_json_value *obj, const char *key, long long *out)
{
    const dlt_json_value *v = dlt_json_get(obj, key);
    if (!v || v->type != DLT_JSON_NUMBER || !v->is_int)
        return 0;
    *out = v->ival;
    return 1;
}

void dlt_json_write_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    putc('"', f);
    const unsigned char *end = (const unsigned char *)s + strlen(s);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c >= 0x80) {
            size_t n = dls_utf8_len(c, (size_t)(end - c));
            if (n == 0) {
                fputs(DLS_UTF8_REPLACEMENT_JSON, f); /* not UTF-8: keep the output valid JSON */
            } else {
                fwrite(c, 1, n, f);
                c += n - 1;
            }
            continue;
        }
        switch (*c) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*c < 0x20)
                fprintf(f, "\\u%04x", *c);
            else
                putc(*c, f);
        }
    }
    putc('"', f);
}

void dlt_json_write(FILE *f, const dlt_json_value *v)
{
    if (!v) {
        fputs("null", f);
        return;
    }
    switch (v->type) {
    case DLT_JSON_NULL:
        fputs("null", f);
        break;
    case DLT_JSON_BOOL:
        fputs(v->boolean ? "true" : "false", f);
        break;
    case DLT_JSON_NUMBER:
        if (v->is_int)
            fprintf(f, "%lld", v->ival);
        else
            fprintf(f, "%.17g", v->num);
        break;
    case DLT_JSON_STRING:
        dlt_json_write_str(f, v->str);
        break;
    case DLT_JSON_ARRAY:
    case DLT_JSON_OBJECT:
        putc(v->type == DLT_JSON_ARRAY ? '[' : '{', f);
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                putc(',', f);
            if (v->type == DLT_JSON_OBJECT) {
                dlt_json_write_str(f, v->keys[i]);
                putc(':', f);
            }
            dlt_json_write(f, v->items[i]);
        }
        putc(v->type == DLT_JSON_ARRAY ? ']' : '}', f);
        break;
    }
}
