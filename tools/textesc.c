/* Escaping for the terminal (see textesc.h). */
#include "textesc.h"

#include <stdio.h>
#include <string.h>

const char *dlt_text_escape(const char *s, char *buf, size_t n)
{
    if (!n)
        return buf;
    if (!s)
        s = "?";
    size_t k = 0;
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
