/* The JSON writer (see json.h). */
#include "json.h"

#include "../common/utf8.h"

#include <pthread.h>
#include <stdlib.h>

#define FIRST_CAP 4096

/* The holder of a thread's record buffer; the calling thread's is t_home (freed when the thread
 * exits). A record keeps a pointer to it, so that finishing the record needs no second look-up
 * of thread-local storage. */
struct dls_rec_thread {
    char *buf;
    size_t cap;
    int busy;
};

static __thread struct dls_rec_thread t_home;

static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static int g_key_ok;

static void free_thread_buffer(void *buf)
{
    free(buf);
}

static void make_key(void)
{
    g_key_ok = pthread_key_create(&g_key, free_thread_buffer) == 0;
}

/* Gives the thread t its buffer (FIRST_CAP bytes, none when memory is short). */
static void first_buffer(struct dls_rec_thread *t)
{
    t->buf = malloc(FIRST_CAP);
    t->cap = t->buf ? FIRST_CAP : 0;
    pthread_once(&g_key_once, make_key);
    if (g_key_ok)
        pthread_setspecific(g_key, t->buf);
}

void dls_rec_start(dls_rec *j)
{
    struct dls_rec_thread *t = &t_home;
    j->len = 0;
    j->failed = 0;
    if (!t->busy) {
        if (!t->buf)
            first_buffer(t);
        t->busy = 1;
        j->buf = t->buf;
        j->cap = t->cap;
        j->home = t;
    } else { /* a record built while another is being built on this thread */
        j->buf = NULL;
        j->cap = 0;
        j->home = NULL;
    }
}

void dls_rec_done(dls_rec *j)
{
    struct dls_rec_thread *t = j->home;
    if (!t) {
        free(j->buf);
    } else {
        if (j->buf != t->buf) { /* grown: the bigger block becomes the thread's buffer */
            t->buf = j->buf;
            t->cap = j->cap;
            if (g_key_ok)
                pthread_setspecific(g_key, t->buf);
        }
        t->busy = 0;
    }
    j->buf = NULL;
    j->len = j->cap = 0;
}

char *dls_rec_grow(dls_rec *j, size_t n)
{
    if (j->failed)
        return NULL;
    if (j->len + n > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (cap < j->len + n)
            cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb) {
            j->failed = 1;
            return NULL;
        }
        j->buf = nb;
        j->cap = cap;
    }
    return j->buf + j->len;
}

/* 0: copied as is; 1: backslash and the character; 2: \u00XX; 3: the start of a UTF-8 sequence
 * or a byte that stands for U+FFFD (common/utf8.h). */
static const unsigned char g_escape[256] = {
    2, 2, 2, 2, 2,         2,          2,
    2, 2, 2, 2, 2,         2,          2,
    2, 2, 2, 2, 2,         2,          2,
    2, 2, 2, 2, 2,         2,          2,
    2, 2, 2, 2, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xFF] = 3,
};

static const char g_hex[] = "0123456789abcdef";

char *dls_rec_escape(char *d, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    *d++ = '"';
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        unsigned char how = g_escape[c];
        if (!how) {
            *d++ = (char)c;
            i++;
        } else if (how == 1) {
            *d++ = '\\';
            *d++ = (char)c;
            i++;
        } else if (how == 2) {
            memcpy(d, "\\u00", 4);
            d[4] = g_hex[c >> 4];
            d[5] = g_hex[c & 15];
            d += 6;
            i++;
        } else {
            size_t len = dls_utf8_len(u + i, n - i);
            if (len) {
                memcpy(d, u + i, len);
                d += len;
                i += len;
            } else { /* not UTF-8: one U+FFFD per byte keeps the line valid JSON */
                memcpy(d, DLS_UTF8_REPLACEMENT_JSON, DLS_UTF8_REPLACEMENT_JSON_LEN);
                d += DLS_UTF8_REPLACEMENT_JSON_LEN;
                i++;
            }
        }
    }
    *d++ = '"';
    return d;
}

/* "00" to "99": decimal numbers are written two digits per division. */
static const char g_pairs[201] = "0001020304050607080910111213141516171819"
                                 "2021222324252627282930313233343536373839"
                                 "4041424344454647484950515253545556575859"
                                 "6061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

char *dls_rec_utoa(uint64_t v, char *d)
{
    char tmp[20];
    char *p = tmp + sizeof tmp;
    while (v >= 100) {
        p -= 2;
        memcpy(p, g_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, g_pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - p);
    memcpy(d, p, n);
    return d + n;
}

char *dls_rec_utoa9(uint32_t v, char *d)
{
    d[0] = (char)('0' + v / 100000000);
    v %= 100000000;
    for (int i = 7; i > 0; i -= 2) {
        memcpy(d + i, g_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    return d + 9;
}

char *dls_rec_xtoa(uint64_t v, size_t min, char *d)
{
    size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1; /* the hex digits of v */
    if (n < min)
        n = min < 16 ? min : 16;
    for (size_t i = n; i-- > 0; v >>= 4)
        d[i] = "0123456789abcdef"[v & 0xf];
    return d + n;
}

void dls_rec_i64s_n(dls_rec *j, const char *key, size_t klen, const int64_t *v, size_t n)
{
    if (!v) {
        dls_rec_raw(j, key, "null");
        return;
    }
    dls_rec_open_n(j, key, klen, '[');
    for (size_t i = 0; i < n; i++)
        dls_rec_i64(j, NULL, v[i]);
    dls_rec_close(j, ']');
}

void dls_rec_open_n(dls_rec *j, const char *key, size_t klen, char bracket)
{
    char *d = dls_rec_k(j, key, klen, 1);
    if (d) {
        *d++ = bracket;
        j->len = (size_t)(d - j->buf);
    }
}

void dls_rec_close(dls_rec *j, char bracket)
{
    dls_rec_bytes(j, &bracket, 1);
}
