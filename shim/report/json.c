/* The JSON writer (see json.h). */
#include "json.h"

#include <emmintrin.h> /* SSE2, part of x86-64 */
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
    if (DLS_LIKELY(!t->busy)) {
        if (DLS_UNLIKELY(!t->buf))
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

/* 0: copied as is; 1: backslash and the character; 2: \u00XX. */
static const unsigned char g_escape[256] = {
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,         2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, ['"'] = 1, ['\\'] = 1,
};

static const char g_hex[] = "0123456789abcdef";

#define ONES UINT64_C(0x0101010101010101)
#define HIGH UINT64_C(0x8080808080808080)

/* 1 when none of the 8 bytes of x needs escaping (a control character, '"' or '\\'). */
static int clean8(uint64_t x)
{
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    return !((((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGH);
}

/* Writes s[i] escaped at d; returns the end. */
static char *escape1(char *d, unsigned char c)
{
    if (!g_escape[c]) {
        *d++ = (char)c;
    } else if (g_escape[c] == 1) {
        *d++ = '\\';
        *d++ = (char)c;
    } else {
        memcpy(d, "\\u00", 4);
        d[4] = g_hex[c >> 4];
        d[5] = g_hex[c & 15];
        d += 6;
    }
    return d;
}

char *dls_rec_escape(char *d, const char *s, size_t n)
{
    *d++ = '"';
    size_t i = 0;
    uint64_t x;
    while (i + 8 <= n) {
        memcpy(&x, s + i, 8);
        if (clean8(x)) {
            memcpy(d, &x, 8);
            d += 8;
            i += 8;
        } else {
            for (size_t end = i + 8; i < end; i++)
                d = escape1(d, (unsigned char)s[i]);
        }
    }
    if (i < n && n >= 8 && (memcpy(&x, s + n - 8, 8), clean8(x))) { /* the tail, as the last 8 bytes */
        memcpy(d - (i + 8 - n), &x, 8);
        d += n - i;
        i = n;
    } else if (n >= 4 && n < 8) { /* a short string: its first and last 4 bytes */
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        if (clean8(lo | (uint64_t)hi << 32)) {
            memcpy(d, &lo, 4);
            memcpy(d + n - 4, &hi, 4);
            d += n;
            i = n;
        }
    }
    for (; i < n; i++)
        d = escape1(d, (unsigned char)s[i]);
    *d++ = '"';
    return d;
}

static const char g_pairs[201] = "0001020304050607080910111213141516171819"
                                 "2021222324252627282930313233343536373839"
                                 "4041424344454647484950515253545556575859"
                                 "6061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

static const uint64_t g_pow10[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

/* Writes the 8 decimal digits of v (< 10^8, zero padded) at d. */
static DLS_ALWAYS_INLINE void digits8(uint32_t v, char *d)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(d, g_pairs + 2 * (hi / 100), 2);
    memcpy(d + 2, g_pairs + 2 * (hi % 100), 2);
    memcpy(d + 4, g_pairs + 2 * (lo / 100), 2);
    memcpy(d + 6, g_pairs + 2 * (lo % 100), 2);
}

char *dls_rec_utoa9(uint32_t v, char *d)
{
    *d = (char)('0' + v / 100000000);
    digits8(v % 100000000, d + 1);
    return d + 9;
}

/* dls_rec_utoa for v >= 10000 (apart, so that small values need no saved registers). */
static DLS_NOINLINE char *utoa_long(uint64_t v, char *d)
{
    unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12; /* ~log10 from the bit length */
    size_t n = t + (v >= g_pow10[t]);
    char *p = d + n;
    while (v >= 100000000) { /* eight digits at a time in 32-bit arithmetic */
        p -= 8;
        digits8((uint32_t)(v % 100000000), p);
        v /= 100000000;
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100) {
        p -= 2;
        memcpy(p, g_pairs + 2 * (w % 100), 2);
        w /= 100;
    }
    if (w >= 10)
        memcpy(p - 2, g_pairs + 2 * w, 2);
    else
        p[-1] = (char)('0' + w);
    return d + n;
}

char *dls_rec_utoa(uint64_t v, char *d)
{
    if (v >= 10000)
        return utoa_long(v, d);
    uint32_t hi = (uint32_t)v / 100, lo = (uint32_t)v % 100;
    size_t n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
    char four[4]; /* v as four digits, zero padded */
    memcpy(four, g_pairs + 2 * hi, 2);
    memcpy(four + 2, g_pairs + 2 * lo, 2);
    uint32_t w;
    memcpy(&w, four, 4);
    w >>= 8 * (4 - n); /* the last n digits to the front (x86-64 is little-endian) */
    memcpy(d, &w, 4);  /* in the room for 20; what lies past the n is not counted */
    return d + n;
}

char *dls_rec_xtoa(uint64_t v, size_t min, char *d)
{
    size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
    if (n < min)
        n = min < 16 ? min : 16;
    /* all 16 digits at once: the bytes in text order, each split into its two nibbles, each
     * nibble made a character ('0' + x, and 'a' - '0' - 10 more for 10..15) */
    const __m128i low = _mm_set1_epi8(0x0f);
    __m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
    __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi64(x, 4), low), _mm_and_si128(x, low));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(nib, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
    char all[16];
    _mm_storeu_si128((__m128i *)all, _mm_add_epi8(_mm_add_epi8(nib, _mm_set1_epi8('0')), letter));
    if (n > 8) { /* the last n of the 16, as two overlapping words */
        memcpy(d, all + 16 - n, 8);
        memcpy(d + n - 8, all + 8, 8);
    } else { /* the last n of the low 8, moved to the front of a word */
        uint64_t w;
        memcpy(&w, all + 8, 8);
        w >>= 8 * (8 - n);
        memcpy(d, &w, 8);
    }
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
