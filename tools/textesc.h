/* Text from logs and command lines, made safe to print on a terminal for `dlsync report`,
 * `dlsync run` and `dlsync scan`. */
#ifndef DLT_TEXTESC_H
#define DLT_TEXTESC_H

#include <stddef.h>

/* Writes s into buf (n bytes, always NUL-terminated when n > 0; cut when it does not fit) with
 * its control characters (below 0x20, 0x7f, and the C1 controls U+0080..U+009F in UTF-8) written
 * as \n, \r, \t or \xNN and its backslashes doubled, so a printed value cannot move the cursor,
 * change colours or fake a line; a byte that is not valid UTF-8 is written U+FFFD (the rule of
 * shim/common/utf8.h) and a character is never cut. NULL is written "?". Returns buf. */
const char *dlt_text_escape(const char *s, char *buf, size_t n);

#endif
