/* Unit tests of the JSON writer (shim/report/json.c): escaping of every byte class, integers at
 * their limits against printf, hex, nesting and commas, records longer than the thread's buffer,
 * and a record built while another one is being built on the same thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/json.h"

/* The text of j, NUL-terminated in a static buffer. */
static const char *text(const dls_rec *j)
{
    static char out[1 << 16];
    assert_false(j->failed);
    assert_true(j->len < sizeof out);
    memcpy(out, j->buf, j->len);
    out[j->len] = '\0';
    return out;
}

static void strings_are_escaped_by_class(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", "\"\""},
        {"abc", "\"abc\""},
        {"abcdefg", "\"abcdefg\""},
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"line\nfeed\ttab\x01\x1f", "\"line\\u000afeed\\u0009tab\\u0001\\u001f\""},
        {"/usr/lib/x86_64-linux-gnu/libtorch_cpu.so", "\"/usr/lib/x86_64-linux-gnu/libtorch_cpu.so\""},
        {"0123456789abcde\"", "\"0123456789abcde\\\"\""},
        {"\"234567", "\"\\\"234567\""},
        {"caf\xc3\xa9 \x7f", "\"caf\xc3\xa9 \x7f\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dls_rec j;
        dls_rec_start(&j);
        dls_rec_str(&j, NULL, cases[i].in);
        assert_string_equal(text(&j), cases[i].out);
        dls_rec_done(&j);
    }
    dls_rec j;
    dls_rec_start(&j);
    dls_rec_str(&j, NULL, NULL);
    assert_string_equal(text(&j), "null");
    dls_rec_done(&j);
}

static void every_byte_alone_is_escaped_by_its_rule(void **state)
{
    (void)state;
    char in[2], want[16];
    for (int c = 1; c < 256; c++) {
        in[0] = (char)c;
        in[1] = '\0';
        if (c < 0x20)
            snprintf(want, sizeof want, "\"\\u%04x\"", c);
        else if (c >= 0x80) /* a byte alone is never UTF-8 (common/utf8.h) */
            snprintf(want, sizeof want, "\"\\ufffd\"");
        else if (c == '"' || c == '\\')
            snprintf(want, sizeof want, "\"\\%c\"", c);
        else
            snprintf(want, sizeof want, "\"%c\"", c);
        dls_rec j;
        dls_rec_start(&j);
        dls_rec_str(&j, NULL, in);
        assert_string_equal(text(&j), want);
        dls_rec_done(&j);
    }
}

static void integers_match_printf(void **state)
{
    (void)state;
    const uint64_t u[] = {0,
                          1,
                          9,
                          10,
                          99,
                          100,
                          999,
                          1000,
                          9999,
                          10000,
                          12345,
                          999999999,
                          1000000000,
                          UINT32_MAX,
                          UINT64_C(1) << 63,
                          UINT64_MAX,
                          UINT64_C(10000000000000000000),
                          UINT64_C(9999999999999999999)};
    const int64_t s[] = {0, -1, 1, INT64_MIN, INT64_MAX, -100, -99};
    char want[32];
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        dls_rec j;
        dls_rec_start(&j);
        dls_rec_u64(&j, NULL, u[i]);
        snprintf(want, sizeof want, "%llu", (unsigned long long)u[i]);
        assert_string_equal(text(&j), want);
        dls_rec_done(&j);
        dls_rec_start(&j);
        dls_rec_hex(&j, NULL, u[i]);
        snprintf(want, sizeof want, "\"0x%llx\"", (unsigned long long)u[i]);
        assert_string_equal(text(&j), want);
        dls_rec_done(&j);
    }
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        dls_rec j;
        dls_rec_start(&j);
        dls_rec_i64(&j, NULL, s[i]);
        snprintf(want, sizeof want, "%lld", (long long)s[i]);
        assert_string_equal(text(&j), want);
        dls_rec_done(&j);
    }
    char digits[17];
    *dls_rec_xtoa(0xabc, 16, digits) = '\0';
    assert_string_equal(digits, "0000000000000abc");
    const uint32_t nine[] = {0, 7, 10, 99999999, 100000000, 123456789, 999999999};
    for (size_t i = 0; i < sizeof nine / sizeof *nine; i++) {
        *dls_rec_utoa9(nine[i], digits) = '\0';
        snprintf(want, sizeof want, "%09u", nine[i]);
        assert_string_equal(digits, want);
    }
}

static void members_elements_and_nesting_get_their_commas(void **state)
{
    (void)state;
    dls_rec j;
    dls_rec_start(&j);
    dls_rec_object(&j, NULL);
    dls_rec_str(&j, "ev", "x");
    dls_rec_object(&j, "device");
    dls_rec_str(&j, "type", "cuda");
    dls_rec_i64(&j, "id", 1);
    dls_rec_close(&j, '}');
    static const int64_t shape[] = {2, -3};
    dls_rec_i64s(&j, "shape", shape, 2);
    dls_rec_i64s(&j, "strides", NULL, 2);
    dls_rec_i64s(&j, "empty", shape, 0);
    dls_rec_ptr(&j, "null_ptr", NULL);
    dls_rec_ptr(&j, "ptr", (void *)0x1234);
    dls_rec_array(&j, "stack");
    dls_rec_str(&j, NULL, "a");
    dls_rec_raw(&j, NULL, "true");
    dls_rec_close(&j, ']');
    dls_rec_close(&j, '}');
    assert_string_equal(text(&j), "{\"ev\":\"x\",\"device\":{\"type\":\"cuda\",\"id\":1},\"shape\":[2,-3],"
                                  "\"strides\":null,\"empty\":[],\"null_ptr\":null,\"ptr\":\"0x1234\","
                                  "\"stack\":[\"a\",true]}");
    dls_rec_done(&j);
}

static void a_long_record_grows_and_a_nested_one_gets_its_own_buffer(void **state)
{
    (void)state;
    static char big[20000];
    memset(big, 'x', sizeof big - 1);
    dls_rec outer;
    dls_rec_start(&outer);
    dls_rec_array(&outer, NULL);
    dls_rec_str(&outer, NULL, big);
    dls_rec inner; /* built while outer is: must not share its buffer */
    dls_rec_start(&inner);
    dls_rec_str(&inner, NULL, "inner");
    assert_string_equal(text(&inner), "\"inner\"");
    dls_rec_done(&inner);
    dls_rec_u64(&outer, NULL, 7);
    dls_rec_close(&outer, ']');
    const char *t = text(&outer);
    assert_int_equal(strlen(t), sizeof big - 1 + 6);
    assert_memory_equal(t + 2, big, sizeof big - 1);
    assert_string_equal(t + sizeof big + 1, "\",7]");
    dls_rec_done(&outer);
    dls_rec again; /* the grown buffer is the thread's now */
    dls_rec_start(&again);
    assert_true(again.cap >= sizeof big);
    dls_rec_done(&again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings_are_escaped_by_class),
        cmocka_unit_test(every_byte_alone_is_escaped_by_its_rule),
        cmocka_unit_test(integers_match_printf),
        cmocka_unit_test(members_elements_and_nesting_get_their_commas),
        cmocka_unit_test(a_long_record_grows_and_a_nested_one_gets_its_own_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
