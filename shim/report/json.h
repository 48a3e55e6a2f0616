/* The one JSON writer of the shim: every log record (shim/report/log.h) is built with it.
 *
 * A record is built into the calling thread's own buffer (allocated on its first record, grown
 * when a record does not fit, kept for the next one), so building needs no lock and, after a
 * thread's first records, no allocation. No printf-family function is used: integers are
 * converted two digits at a time, strings are escaped byte by byte from a 256-entry table, and
 * bytes that are not valid UTF-8 become \ufffd, the rule of common/utf8.h.
 * Keys are C string literals (inline wrappers below take their length at compile time);
 * commas are put where they belong, so values follow one another as written.
 *
 * Every function takes a `key`: the member name inside an object, or NULL for an array element
 * (or a top-level value). Nothing here fails the caller: when memory for a long record cannot be
 * found the record is marked failed and the log writer drops it. Not async-signal-safe. */
#ifndef DLS_JSON_H
#define DLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The holder of a thread's record buffer (json.c's own). */
struct dls_rec_thread;

/* One record under construction. Fill only through the functions below. */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;                  /* out of memory: the record is dropped */
    struct dls_rec_thread *home; /* the thread whose buffer buf is; NULL: buf is the record's own
                                     heap block (a record built while another is) */
} dls_rec;

/* Starts an empty text in the calling thread's buffer (a heap block when that buffer is taken
 * by a record still being built on this thread). Pair with dls_rec_done. */
void dls_rec_start(dls_rec *j);

/* Releases the buffer of j (the thread's buffer stays for the next record). */
void dls_rec_done(dls_rec *j);

/* dls_rec_room when the n bytes do not fit: grows the buffer. */
char *dls_rec_grow(dls_rec *j, size_t n);

/* Makes room for n more bytes; returns the write position or NULL (then j is failed). */
static inline char *dls_rec_room(dls_rec *j, size_t n)
{
    return j->len + n <= j->cap ? j->buf + j->len : dls_rec_grow(j, n);
}

/* Appends the n bytes of s as they are. */
static inline void dls_rec_bytes(dls_rec *j, const char *s, size_t n)
{
    char *d = dls_rec_room(j, n);
    if (d) {
        memcpy(d, s, n);
        j->len += n;
    }
}

/* Writes v in decimal at d (room for 20 bytes); returns the end. No NUL. */
char *dls_rec_utoa(uint64_t v, char *d);

/* Writes v < 10^9 as exactly 9 decimal digits, zero padded, at d; returns the end. No NUL. */
char *dls_rec_utoa9(uint32_t v, char *d);

/* Writes v in lower-case hex at d (room for 16 bytes), at least `min` digits (zero padded);
 * returns the end. No NUL. */
char *dls_rec_xtoa(uint64_t v, size_t min, char *d);

/* Writes the n bytes of s at d as a quoted JSON string, escaped (room for 6 * n + 2 bytes);
 * returns the end. A byte that is not valid UTF-8 is written \ufffd (common/utf8.h). */
char *dls_rec_escape(char *d, const char *s, size_t n);

/* Opens an object or array value ('{' or '['); close it with dls_rec_close. */
void dls_rec_open_n(dls_rec *j, const char *key, size_t klen, char bracket);

/* Closes the innermost open object ('}') or array (']'). */
void dls_rec_close(dls_rec *j, char bracket);

/* Appends an array of n integers (null for NULL v). */
void dls_rec_i64s_n(dls_rec *j, const char *key, size_t klen, const int64_t *v, size_t n);

/* The building blocks of the values below: reserves room for the key and `more` bytes, writes
 * the comma the position needs and `"key":` (nothing for a NULL key), and returns where the
 * value goes (NULL when memory is short); the value's writer then sets j->len. Inline, so that
 * a literal key is copied with its length known at compile time. */
static inline char *dls_rec_k(dls_rec *j, const char *key, size_t klen, size_t more)
{
    char *d = dls_rec_room(j, klen + 4 + more);
    if (!d)
        return NULL;
    if (j->len && d[-1] != '{' && d[-1] != '[')
        *d++ = ',';
    if (key) {
        *d++ = '"';
        memcpy(d, key, klen);
        d += klen;
        *d++ = '"';
        *d++ = ':';
    }
    return d;
}

#define DLS_JSON_KLEN(key) ((key) ? __builtin_strlen(key) : 0)

/* The values: `key` is the member name, NULL for an array element. */

/* A string, escaped; NULL writes null. */
static inline void dls_rec_str(dls_rec *j, const char *key, const char *v)
{
    size_t n = v ? strlen(v) : 0;
    char *d = dls_rec_k(j, key, DLS_JSON_KLEN(key), v ? 6 * n + 2 : 4);
    if (d && v) {
        j->len = (size_t)(dls_rec_escape(d, v, n) - j->buf);
    } else if (d) {
        memcpy(d, "null", 4);
        j->len = (size_t)(d + 4 - j->buf);
    }
}

static inline void dls_rec_u64(dls_rec *j, const char *key, uint64_t v)
{
    char *d = dls_rec_k(j, key, DLS_JSON_KLEN(key), 20);
    if (!d)
        return;
    if (v < 10) /* flags, versions, counters: a single digit, without a call */
        *d++ = (char)('0' + v);
    else
        d = dls_rec_utoa(v, d);
    j->len = (size_t)(d - j->buf);
}

static inline void dls_rec_i64(dls_rec *j, const char *key, int64_t v)
{
    char *d = dls_rec_k(j, key, DLS_JSON_KLEN(key), 21);
    if (!d)
        return;
    if (v < 0)
        *d++ = '-';
    j->len = (size_t)(dls_rec_utoa(v < 0 ? -(uint64_t)v : (uint64_t)v, d) - j->buf);
}

/* "0x..." for any value, 0x0 included. */
static inline void dls_rec_hex(dls_rec *j, const char *key, uint64_t v)
{
    char *d = dls_rec_k(j, key, DLS_JSON_KLEN(key), 20);
    if (!d)
        return;
    memcpy(d, "\"0x", 3);
    d = dls_rec_xtoa(v, 1, d + 3);
    *d++ = '"';
    j->len = (size_t)(d - j->buf);
}

/* An already-formatted JSON value. */
static inline void dls_rec_raw(dls_rec *j, const char *key, const char *json)
{
    size_t n = strlen(json);
    char *d = dls_rec_k(j, key, DLS_JSON_KLEN(key), n);
    if (d) {
        memcpy(d, json, n);
        j->len = (size_t)(d + n - j->buf);
    }
}

/* "0x...", or null for NULL. */
static inline void dls_rec_ptr(dls_rec *j, const char *key, const void *p)
{
    if (p)
        dls_rec_hex(j, key, (uint64_t)(uintptr_t)p);
    else
        dls_rec_raw(j, key, "null");
}

/* An array of n integers; null when v is NULL. */
static inline void dls_rec_i64s(dls_rec *j, const char *key, const int64_t *v, size_t n)
{
    dls_rec_i64s_n(j, key, DLS_JSON_KLEN(key), v, n);
}

/* Opens an object / array member or element; close with dls_rec_close(j, '}' or ']'). */
static inline void dls_rec_object(dls_rec *j, const char *key)
{
    dls_rec_open_n(j, key, DLS_JSON_KLEN(key), '{');
}

static inline void dls_rec_array(dls_rec *j, const char *key)
{
    dls_rec_open_n(j, key, DLS_JSON_KLEN(key), '[');
}

#endif
