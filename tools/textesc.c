/* Escaping for the terminal (see textesc.h). */
#include "textesc.h"

#include "common/utf8.h"

#include <stdio.h>
#include <string.h>

const char *dlt_text_escape(const char *s, char *buf, size_t n)
{
    if (!n)
        return buf;
    if (!s)
        s = "?";
    size_t k = 0;
    const unsigned char *end = (const unsigned char *)s + strlen(s);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char tmp[12];
        size_t add;
        if (*c == 0xC2 && c[1] >= 0x80 && c[1] <= 0x9F) { /* a C1 control in UTF-8 */
            add = (size_t)snprintf(tmp, sizeof tmp, "\\xc2\\x%02x", c[1]);
            c++;
        } else if (*c < 0x20 || *c == 0x7f || *c == '\\') {
            const char *named = *c == '\n'   ? "\\n"
                                : *c == '\r' ? "\\r"
                                : *c == '\t' ? "\\t"
                                : *c == '\\' ? "\\\\"
                                             : NULL;
            add = named ? (size_t)snprintf(tmp, sizeof tmp, "%s", named)
                        : (size_t)snprintf(tmp, sizeof tmp, "\\x%02x", *c);
        } else if (*c >= 0x80) { /* a character kept whole, or U+FFFD for a byte not UTF-8 */
            size_t len = dls_utf8_len(c, (size_t)(end - c));
            add = len ? len : DLS_UTF8_REPLACEMENT_LEN;
            memcpy(tmp, len ? (const char *)c : DLS_UTF8_REPLACEMENT, add);
            c += len ? len - 1 : 0;
        } else {
            tmp[0] = (char)*c;
            add = 1;
        }
        if (k + add >= n)
            break;
        memcpy(buf + k, tmp, add);
        k += add;
    }
    buf[k] = '\0';
    return buf;
}
