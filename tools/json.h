/* A small, strict JSON reader for the dlsync command (RFC 8259, UTF-8).
 *
 * Strict in its grammar: anything RFC 8259 does not allow is an error, and so is an escaped
 * surrogate that is not part of a pair. Not an error: bytes of a string that are not valid UTF-8.
 * They follow the rule of shim/common/utf8.h, the shim's writer's own: each such byte is read as
 * U+FFFD, so a decoded string is always valid UTF-8 and a log line reads the same whether its
 * writer replaced those bytes (\ufffd) or left them raw. The writer below applies the same rule.
 *
 * Parses one text into a tree of dlt_json_value nodes. Every failure is reported with the byte offset
 * and a reason; nothing here aborts, and nesting deeper than DLT_JSON_MAX_DEPTH is refused so
 * hostile input cannot exhaust the stack. Numbers keep their exact integer value when they are
 * integers that fit in 64 bits (log timestamps are nanoseconds since the epoch). */
#ifndef DLT_JSON_H
#define DLT_JSON_H

#include <stddef.h>
#include <stdio.h>

#define DLT_JSON_MAX_DEPTH 64

typedef enum {
    DLT_JSON_NULL,
    DLT_JSON_BOOL,
    DLT_JSON_NUMBER,
    DLT_JSON_STRING,
    DLT_JSON_ARRAY,
    DLT_JSON_OBJECT,
} dlt_json_type;

typedef struct dlt_json_value dlt_json_value;
struct dlt_json_value {
    dlt_json_type type;
    int boolean;            /* BOOL */
    double num;             /* NUMBER */
    long long ival;         /* NUMBER, valid when is_int */
    int is_int;             /* NUMBER written as an integer that fits in long long */
    char *str;              /* STRING: decoded, valid UTF-8, NUL-terminated (may contain NUL when len says so) */
    size_t len;             /* STRING: byte length; ARRAY / OBJECT: number of items */
    dlt_json_value **items; /* ARRAY / OBJECT: the values */
    char **keys;            /* OBJECT: the keys, decoded, parallel to items */
};

typedef struct {
    size_t offset;    /* byte offset of the problem in the text */
    char message[96]; /* what was wrong */
} dlt_json_error;

/* Parses text[0..len) as exactly one JSON value with optional surrounding whitespace. Returns
 * the tree (free with dlt_json_free), or NULL with *err filled (err may be NULL). */
dlt_json_value *dlt_json_parse(const char *text, size_t len, dlt_json_error *err);

/* Frees a tree returned by dlt_json_parse; NULL is fine. */
void dlt_json_free(dlt_json_value *v);

/* The value of `key` in object `obj` (the last one when a key repeats), or NULL when obj is
 * NULL, not an object, or has no such key. */
const dlt_json_value *dlt_json_get(const dlt_json_value *obj, const char *key);

/* The string value of `key` in obj, or NULL when absent or not a string. */
const char *dlt_json_get_str(const dlt_json_value *obj, const char *key);

/* Stores the integer value of `key` in obj into *out and returns 1; returns 0 (and leaves *out)
 * when absent, not a number, or not an integer. */
int dlt_json_get_int(const dlt_json_value *obj, const char *key, long long *out);

/* Writes s as a JSON string literal (with quotes and escapes) to f, each byte that is not valid
 * UTF-8 as \ufffd (shim/common/utf8.h). NULL writes null. */
void dlt_json_write_str(FILE *f, const char *s);

/* Writes the tree v back as compact JSON to f (NULL writes null). */
void dlt_json_write(FILE *f, const dlt_json_value *v);

#endif
