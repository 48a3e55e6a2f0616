/* One rule for text that is not UTF-8 (shim/common/utf8.h), on both sides of the log: every kind
 * of invalid sequence (a lone continuation byte, an overlong form, a sequence cut short, an
 * encoded surrogate, a code point past U+10FFFF, a byte that never starts one) goes through the
 * shim's record writer (report/json.c) and comes back through the command's JSON reader
 * (tools/json.c) as one U+FFFD per byte; the reader gives the same text for the raw bytes (a log
 * written before the rule); the command's JSON, HTML and terminal writers apply the same rule.
 * dls_utf8_len is also held to a plain decoder on every pair of leading bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/utf8.h"
#include "htmlesc.h"
#include "json.h"
#include "report/json.h"
#include "textesc.h"

/* Each case: the bytes, and the text they stand for with '#' for each U+FFFD. */
static const struct {
    const char *in, *want;
} g_cases[] = {
    {"a\x80z", "a#z"},                       /* a continuation byte alone */
    {"\xbf\x80\xbf", "###"},                 /* several */
    {"\xc0\xaf", "##"},                      /* overlong '/' in two bytes */
    {"\xc1\xbf", "##"},                      /* overlong, C1 lead */
    {"\xe0\x80\xaf", "###"},                 /* overlong '/' in three bytes */
    {"\xe0\x9f\xbf", "###"},                 /* overlong U+07FF */
    {"\xf0\x80\x80\xaf", "####"},            /* overlong '/' in four bytes */
    {"\xf0\x8f\xbf\xbf", "####"},            /* overlong U+FFFF */
    {"x\xc3", "x#"},                         /* cut short by the end */
    {"\xe2\x82z", "##z"},                    /* cut short by ASCII */
    {"\xf0\x9f\x98", "###"},                 /* four bytes cut to three */
    {"\xf0\x9f\x98\xc3\xa9", "###\xc3\xa9"}, /* cut short by a lead byte */
    {"\xed\xa0\x80", "###"},                 /* surrogate U+D800 */
    {"\xed\xbf\xbf", "###"},                 /* surrogate U+DFFF */
    {"\xed\xa0\xbd\xed\xb8\x80", "######"},  /* a pair encoded as CESU-8 */
    {"\xf4\x90\x80\x80", "####"},            /* U+110000 */
    {"\xf5\x80\x80\x80", "####"},            /* F5 never starts one */
    {"\xf8\x88\x80\x80\x80", "#####"},       /* a 5-byte form */
    {"\xfe\xff", "##"},                      /* FE, FF */
    {"\xff\xc3\xa9", "#\xc3\xa9"},           /* valid text after a bad byte */
    /* valid: é U+0800 U+D7FF */
    {"\xc3\xa9\xe0\xa0\x80\xed\x9f\xbf", "\xc3\xa9\xe0\xa0\x80\xed\x9f\xbf"},
    /* valid: U+E000 U+FFFD */
    {"\xee\x80\x80\xef\xbf\xbd", "\xee\x80\x80\xef\xbf\xbd"},
    /* valid: U+10000 U+10FFFF */
    {"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"},
};

/* want with each '#' replaced by rep, into out (cap bytes); returns out. */
static const char *with(const char *want, const char *rep, char *out, size_t cap)
{
    size_t k = 0;
    for (const char *c = want; *c; c++) {
        const char *add = *c == '#' ? rep : c;
        size_t n = *c == '#' ? strlen(rep) : 1;
        assert_true(k + n < cap);
        memcpy(out + k, add, n);
        k += n;
    }
    out[k] = '\0';
    return out;
}

/* What the shim writes for s: the JSON string literal of one log value. */
static char *shim_writes(const char *s)
{
    dls_rec j;
    dls_rec_start(&j);
    dls_rec_str(&j, NULL, s);
    assert_false(j.failed);
    char *out = strndup(j.buf, j.len);
    dls_rec_done(&j);
    return out;
}

/* The string the command's reader reads from the JSON text json. */
static char *command_reads(const char *json)
{
    dlt_json_error err;
    dlt_json_value *v = dlt_json_parse(json, strlen(json), &err);
    if (!v)
        fail_msg("%s: %s at %zu", json, err.message, err.offset);
    assert_int_equal(v->type, DLT_JSON_STRING);
    char *out = strdup(v->str);
    dlt_json_free(v);
    return out;
}

/* What a FILE writer writes for s. */
static char *written(void (*write)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    write(f, s);
    fclose(f);
    return buf;
}

static void the_shim_writes_one_replacement_per_bad_byte_and_the_command_reads_it(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_cases / sizeof *g_cases; i++) {
        char text[128], json[256];
        with(g_cases[i].want, DLS_UTF8_REPLACEMENT, text, sizeof text);
        with(g_cases[i].want, DLS_UTF8_REPLACEMENT_JSON, json + 1, sizeof json - 2);
        json[0] = '"';
        strcat(json, "\"");
        char *line = shim_writes(g_cases[i].in);
        assert_string_equal(line, json); /* valid JSON, and ASCII for every bad byte */
        char *back = command_reads(line);
        assert_string_equal(back, text);
        free(back);
        free(line);
    }
}

static void raw_bytes_read_as_the_shim_would_have_written_them(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_cases / sizeof *g_cases; i++) {
        char text[128], raw[128];
        with(g_cases[i].want, DLS_UTF8_REPLACEMENT, text, sizeof text);
        snprintf(raw, sizeof raw, "\"%s\"", g_cases[i].in); /* as a shim before the rule wrote it */
        char *back = command_reads(raw);
        assert_string_equal(back, text);
        free(back);
        char *line = shim_writes(g_cases[i].in), *again = command_reads(line);
        assert_string_equal(again, text);
        free(again);
        free(line);
    }
}

static void the_command_writes_json_html_and_text_by_the_same_rule(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_cases / sizeof *g_cases; i++) {
        char text[128], json[256], term[128];
        with(g_cases[i].want, DLS_UTF8_REPLACEMENT, text, sizeof text);
        with(g_cases[i].want, DLS_UTF8_REPLACEMENT_JSON, json + 1, sizeof json - 2);
        json[0] = '"';
        strcat(json, "\"");
        char *shim = shim_writes(g_cases[i].in), *out = written(dlt_json_write_str, g_cases[i].in);
        assert_string_equal(out, json);
        assert_string_equal(out, shim); /* the command writes what the shim writes */
        free(out);
        free(shim);
        out = written(dlt_html_text, g_cases[i].in);
        assert_string_equal(out, text);
        free(out);
        assert_string_equal(dlt_text_escape(g_cases[i].in, term, sizeof term), text);
    }
}

/* A plain decoder: the lead byte's high bits give the length, the bits give the code point, and
 * the sequence is valid when every byte continues it and the code point is the shortest form's,
 * not a surrogate and at most U+10FFFF. */
static size_t reference_len(const unsigned char *s, size_t n)
{
    if (!n)
        return 0;
    if (s[0] < 0x80)
        return 1;
    size_t len = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || n < len)
        return 0;
    uint32_t cp = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return len;
}

static void the_rule_matches_a_plain_decoder_on_every_lead_pair(void **state)
{
    (void)state;
    static const unsigned char tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
    size_t nt = sizeof tails;
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++)
            for (size_t t = 0; t < nt * nt; t++) {
                unsigned char s[4] = {(unsigned char)a, (unsigned char)b, tails[t / nt], tails[t % nt]};
                for (size_t n = 0; n <= 4; n++)
                    if (dls_utf8_len(s, n) != reference_len(s, n))
                        fail_msg("%02x %02x %02x %02x (n %zu): %zu, expected %zu", s[0], s[1], s[2], s[3], n,
                                 dls_utf8_len(s, n), reference_len(s, n));
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_shim_writes_one_replacement_per_bad_byte_and_the_command_reads_it),
        cmocka_unit_test(raw_bytes_read_as_the_shim_would_have_written_them),
        cmocka_unit_test(the_command_writes_json_html_and_text_by_the_same_rule),
        cmocka_unit_test(the_rule_matches_a_plain_decoder_on_every_lead_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
