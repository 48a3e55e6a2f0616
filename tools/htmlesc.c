/* Escaping log values for the HTML report (see htmlesc.h). */
#include "htmlesc.h"

#include "common/utf8.h"

#include <string.h>

/* Writes one character (the sequence at s, n bytes) escaped. */
static void put_char(FILE *f, const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (n == 2 && c == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F) { /* a C1 control */
        fprintf(f, "\\xc2\\x%02x", s[1]);
    } else if (n == 3 && c == 0xE2 &&
               ((s[1] == 0x80 && s[2] >= 0xAA && s[2] <= 0xAE) ||
                (s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9))) { /* bidi controls */
        fprintf(f, "\\u%04x", ((unsigned)(c & 0x0F) << 12) | ((unsigned)(s[1] & 0x3F) << 6) | (s[2] & 0x3F));
    } else if (n > 1) {
        fwrite(s, 1, n, f);
    } else if (c == '&') {
        fputs("&amp;", f);
    } else if (c == '<') {
        fputs("&lt;", f);
    } else if (c == '>') {
        fputs("&gt;", f);
    } else if (c == '"') {
        fputs("&quot;", f);
    } else if (c == '\'') {
        fputs("&#39;", f);
    } else if (c == '\\') {
        fputs("\\\\", f);
    } else if (c == '\n') {
        fputs("\\n", f);
    } else if (c == '\r') {
        fputs("\\r", f);
    } else if (c == '\t') {
        fputs("\\t", f);
    } else if (c < 0x20 || c == 0x7f) {
        fprintf(f, "\\x%02x", c);
    } else {
        fputc(c, f);
    }
}

void dlt_html_text_cut(FILE *f, const char *s, size_t max)
{
    if (!s)
        s = "?";
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    size_t shown = 0;
    while (*p) {
        size_t n = dls_utf8_len(p, (size_t)(end - p));
        if (shown == max) {
            fputs("\xe2\x80\xa6", f);
            return;
        }
        if (n)
            put_char(f, p, n);
        else /* not UTF-8 (common/utf8.h) */
            fputs(DLS_UTF8_REPLACEMENT, f);
        p += n ? n : 1;
        shown++;
    }
}

void dlt_html_text(FILE *f, const char *s)
{
    dlt_html_text_cut(f, s, (size_t)-1);
}
