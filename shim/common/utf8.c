/* Valid UTF-8 sequences (see utf8.h): RFC 3629's table of well-formed byte sequences. */
#include "utf8.h"

size_t dls_utf8_len(const unsigned char *s, size_t n)
{
    if (!n)
        return 0;
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range; later bytes are 80..BF */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        lo = c == 0xE0 ? 0xA0 : lo; /* shorter forms are overlong */
        hi = c == 0xED ? 0x9F : hi; /* ED A0..BF are the surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        lo = c == 0xF0 ? 0x90 : lo; /* shorter forms are overlong */
        hi = c == 0xF4 ? 0x8F : hi; /* past U+10FFFF */
    } else {
        return 0; /* a continuation byte, C0 and C1 (overlong), F5..FF */
    }
    for (size_t i = 1; i < len; i++) {
        if (i >= n || s[i] < lo || s[i] > hi)
            return 0;
        lo = 0x80;
        hi = 0xBF;
    }
    return len;
}
