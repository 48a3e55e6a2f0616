/* Values from logs written into the HTML report (`dlsync report --html`) so that they are shown
 * as text and can never become markup, script or a link: &, <, >, " and ' become character
 * references, and, as the text report writes them (textesc.h), control characters (C0, DEL, the
 * C1 controls in UTF-8) become visible escapes (\x1b, \n) and backslashes are doubled; the
 * Unicode bidirectional controls (U+202A..U+202E, U+2066..U+2069), which could make a frame read
 * as another, become \u202e; a byte that is not valid UTF-8 becomes U+FFFD, the rule of
 * shim/common/utf8.h. The result is safe in element text and in a quoted attribute, in HTML and
 * in the SVG inside it, and is valid UTF-8. */
#ifndef DLT_HTMLESC_H
#define DLT_HTMLESC_H

#include <stddef.h>
#include <stdio.h>

/* Writes s escaped to f; NULL writes "?". */
void dlt_html_text(FILE *f, const char *s);

/* Writes at most max characters of s escaped to f (UTF-8 sequences are kept whole), then "…"
 * when it was cut; NULL writes "?". */
void dlt_html_text_cut(FILE *f, const char *s, size_t max);

#endif
