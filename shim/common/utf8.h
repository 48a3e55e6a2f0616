/* The one rule for text that is not valid UTF-8, shared by every writer and reader of dlsync's
 * JSON-lines logs: the shim's record writer (report/json.c), and the command's JSON reader and
 * writer (tools/json.c) and its HTML and terminal writers (tools/htmlesc.c, tools/textesc.c).
 *
 * The rule: a valid UTF-8 sequence (RFC 3629: shortest form, no surrogate, at most U+10FFFF) is
 * kept as it is. Every other byte stands for one U+FFFD, and the text goes on at the next byte:
 * a continuation byte alone, a lead byte C0, C1 or F5..FF, a sequence cut short (by the end or by
 * a byte that does not continue it), an overlong form (C0 80, E0 80 80, F0 80 80 80), an encoded
 * surrogate (ED A0 80 .. ED BF BF) and a code point past U+10FFFF (F4 90 ..) are each one U+FFFD
 * per byte. A JSON writer writes it as the escape \ufffd, a text writer as the character.
 *
 * Why U+FFFD: the log stays valid JSON, and valid Unicode, for every reader (RFC 8259 §8.1 asks
 * for UTF-8). The alternatives read back wrong: \u00XX is a different character (the byte FF
 * would come back as U+00FF, "ÿ", indistinguishable from a real one), and a lone surrogate
 * escape (\udcXX, Python's surrogateescape) keeps the byte but is text that strict readers refuse
 * (RFC 8259 §8.2, I-JSON). With U+FFFD a line reads the same whichever side applied the rule: a
 * log written with raw bytes (by a shim before this rule) reads as the same log written now, and
 * each bad byte stays visible where it was. What is lost is the byte's value, which was not text
 * to begin with (a kernel or file name in another encoding).
 *
 * The C library alone, so the command builds without the CUDA headers. */
#ifndef DLS_UTF8_H
#define DLS_UTF8_H

#include <stddef.h>

#define DLS_UTF8_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD, what a text writer writes for a bad byte */
#define DLS_UTF8_REPLACEMENT_LEN 3
#define DLS_UTF8_REPLACEMENT_JSON "\\ufffd" /* what a JSON writer writes for it */
#define DLS_UTF8_REPLACEMENT_JSON_LEN 6

/* The length (1 to 4) of the valid UTF-8 sequence at the start of s[0..n), or 0 when s[0] stands
 * for a U+FFFD (and when n is 0). An ASCII byte (below 0x80, NUL included) is 1. Reads no byte
 * past the first one that does not continue the sequence, so a NUL-terminated string may pass
 * its strlen. Thread-safe, async-signal-safe. */
size_t dls_utf8_len(const unsigned char *s, size_t n);

#endif
