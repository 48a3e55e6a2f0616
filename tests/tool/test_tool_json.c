/* Unit tests of the dlsync command's JSON reader (tools/json.c), counters (tools/tally.c),
 * growing arrays (tools/grow.c) and log reader (tools/logread.c): values, exact integers, escapes,
 * errors with offsets, hostile nesting, round trips, doubling and its overflow, damaged log
 * lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "grow.h"
#include "json.h"
#include "logread.h"
#include "tally.h"

static dlt_json_value *parse(const char *s, dlt_json_error *err)
{
    return dlt_json_parse(s, strlen(s), err);
}

static void parses_every_type(void **state)
{
    (void)state;
    dlt_json_value *v = parse(" {\"a\": [1, -2.5e3, true, false, null, \"x\"], \"b\": {}} ", NULL);
    assert_non_null(v);
    assert_int_equal(v->type, DLT_JSON_OBJECT);
    const dlt_json_value *a = dlt_json_get(v, "a");
    assert_non_null(a);
    assert_int_equal(a->type, DLT_JSON_ARRAY);
    assert_int_equal(a->len, 6);
    assert_true(a->items[0]->is_int);
    assert_int_equal(a->items[0]->ival, 1);
    assert_false(a->items[1]->is_int);
    assert_true(a->items[1]->num == -2500.0);
    assert_int_equal(a->items[2]->type, DLT_JSON_BOOL);
    assert_int_equal(a->items[2]->boolean, 1);
    assert_int_equal(a->items[3]->boolean, 0);
    assert_int_equal(a->items[4]->type, DLT_JSON_NULL);
    assert_string_equal(a->items[5]->str, "x");
    assert_int_equal(dlt_json_get(v, "b")->type, DLT_JSON_OBJECT);
    assert_null(dlt_json_get(v, "c"));
    dlt_json_free(v);
}

static void nanosecond_timestamps_stay_exact(void **state)
{
    (void)state;
    dlt_json_value *v = parse("{\"t\": 1764419552123456789, \"pid\": 42}", NULL);
    long long t = 0;
    assert_true(dlt_json_get_int(v, "t", &t));
    assert_true(t == 1764419552123456789LL);
    assert_false(dlt_json_get_int(v, "missing", &t));
    dlt_json_free(v);
}

static void escapes_and_surrogates_decode(void **state)
{
    (void)state;
    dlt_json_value *v = parse("\"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\"", NULL);
    assert_non_null(v);
    assert_string_equal(v->str, "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80");
    dlt_json_free(v);
}

static void later_duplicate_key_wins(void **state)
{
    (void)state;
    dlt_json_value *v = parse("{\"ev\":\"a\",\"ev\":\"b\"}", NULL);
    assert_string_equal(dlt_json_get_str(v, "ev"), "b");
    dlt_json_free(v);
}

static void errors_say_where(void **state)
{
    (void)state;
    struct {
        const char *text;
        size_t offset;
    } cases[] = {
        {"{\"a\": 1", 7}, {"{\"a\" 1}", 5}, {"[1,]", 3},          {"\"abc", 4},       {"{\"a\":tru", 5},
        {"01", 1},        {"{} x", 3},      {"\"\\q\"", 2},       {"\"\\ud800\"", 7}, {"[1 2]", 3},
        {"", 0},          {"-", 1},         {"[1, -1.5e999]", 4}, /* beyond double: the writer could not write it back as JSON */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dlt_json_error err = {0};
        dlt_json_value *v = parse(cases[i].text, &err);
        if (v)
            fail_msg("accepted %s", cases[i].text);
        if (err.offset != cases[i].offset)
            fail_msg("%s: offset %zu, expected %zu (%s)", cases[i].text, err.offset, cases[i].offset, err.message);
        assert_true(err.message[0] != '\0');
    }
}

static void deep_nesting_is_refused_not_crashing(void **state)
{
    (void)state;
    size_t n = 100000;
    char *s = malloc(n + 1);
    memset(s, '[', n);
    s[n] = '\0';
    dlt_json_error err;
    assert_null(dlt_json_parse(s, n, &err));
    assert_non_null(strstr(err.message, "deep"));
    free(s);
}

static void embedded_nul_does_not_end_the_text(void **state)
{
    (void)state;
    const char text[] = "{\"a\":1}\0garbage";
    assert_null(dlt_json_parse(text, sizeof text - 1, NULL));
}

static void writer_round_trips(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const char *in = "{\"s\":\"q\\\"\\u0001\\t\",\"n\":[1.5,-7,1764419552123456789],\"o\":{\"k\":null,\"b\":true}}";
    dlt_json_value *v = parse(in, NULL);
    assert_non_null(v);
    dlt_json_write(f, v);
    fclose(f);
    assert_string_equal(buf, in);
    dlt_json_free(v);
    free(buf);
}

static void writer_keeps_output_valid_utf8(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dlt_json_write_str(f, "ok \xc3\xa9 bad \xff\xc3 end");
    fclose(f);
    assert_string_equal(buf, "\"ok \xc3\xa9 bad \\ufffd\\ufffd end\"");
    dlt_json_value *back = dlt_json_parse(buf, len, NULL);
    assert_non_null(back);
    dlt_json_free(back);
    free(buf);
}

static void tally_counts_grows_and_sorts(void **state)
{
    (void)state;
    dlt_tally t = {0};
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%d", i % 300);
        int fresh;
        dlt_tally_entry *e = dlt_tally_add(&t, key, &fresh);
        assert_non_null(e);
        assert_int_equal(fresh, i < 300);
        e->count += i % 300 == 7 ? 10 : 1;
    }
    assert_int_equal(t.n, 300);
    assert_non_null(dlt_tally_find(&t, "k299"));
    assert_null(dlt_tally_find(&t, "k300"));
    dlt_tally_entry **v = dlt_tally_sorted(&t);
    assert_string_equal(v[0]->key, "k7");
    assert_int_equal(v[0]->count, 40);
    for (size_t i = 1; i < t.n; i++)
        assert_true(v[i - 1]->count > v[i]->count ||
                    (v[i - 1]->count == v[i]->count && strcmp(v[i - 1]->key, v[i]->key) < 0));
    free(v);
    dlt_tally_free(&t);
}

/* An array grows to the first capacity, then doubles until it holds what is asked, keeping its
 * elements; an array with room is left as it is; a size that overflows fails and keeps both. */
static void an_array_grows_by_doubling(void **state)
{
    (void)state;
    size_t cap = 0;
    int *v = dlt_grow(NULL, &cap, 1, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 4);
    for (int i = 0; i < 4; i++)
        v[i] = i;
    v = dlt_grow(v, &cap, 5, sizeof *v, 4);
    assert_int_equal(cap, 8);
    int *same = dlt_grow(v, &cap, 8, sizeof *v, 4);
    assert_ptr_equal(same, v);
    assert_int_equal(cap, 8);
    v = dlt_grow(v, &cap, 33, sizeof *v, 4);
    assert_int_equal(cap, 64);
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], i);
    assert_null(dlt_grow(v, &cap, SIZE_MAX / sizeof *v + 1, sizeof *v, 4));
    assert_int_equal(cap, 64);
    assert_int_equal(v[3], 3);
    assert_int_equal(dlt_doubled(0, 100, 64), 128);
    assert_int_equal(dlt_doubled(SIZE_MAX / 2 + 1, SIZE_MAX, 1), 0);
    free(v);
}

static void log_reader_skips_damage_and_goes_on(void **state)
{
    (void)state;
    char path[] = "/tmp/dlsync-test-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "{\"ev\":\"start\",\"pid\":1}\n"
                        "not json at all\n"
                        "\n"
                        "[1,2]\n"
                        "{\"no_ev\":1}\n"
                        "{\"ev\":\"export\",\"pid\":1,\"xid\":1}\n"
                        "{\"ev\":\"import\",\"pi";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *errs = open_memstream(&msgs, &mlen);
    dlt_log_set set = {0};
    assert_int_equal(dlt_log_read(&set, path, errs), 0);
    fclose(errs);
    assert_int_equal(set.n, 2);
    assert_string_equal(set.recs[0].ev, "start");
    assert_int_equal(set.recs[1].line, 6);
    assert_int_equal(set.damaged, 4);
    char where[64];
    snprintf(where, sizeof where, "%s:2: malformed JSON at column 1", path);
    assert_non_null(strstr(msgs, where));
    snprintf(where, sizeof where, "%s:4: not a JSON object", path);
    assert_non_null(strstr(msgs, where));
    snprintf(where, sizeof where, "%s:7: last line cut short", path);
    assert_non_null(strstr(msgs, where));
    dlt_log_set_free(&set);
    free(msgs);
    unlink(path);
    assert_int_equal(dlt_log_read(&set, path, NULL), -1);
    assert_int_equal(set.files_failed, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_every_type),
        cmocka_unit_test(nanosecond_timestamps_stay_exact),
        cmocka_unit_test(escapes_and_surrogates_decode),
        cmocka_unit_test(later_duplicate_key_wins),
        cmocka_unit_test(errors_say_where),
        cmocka_unit_test(deep_nesting_is_refused_not_crashing),
        cmocka_unit_test(embedded_nul_does_not_end_the_text),
        cmocka_unit_test(writer_round_trips),
        cmocka_unit_test(writer_keeps_output_valid_utf8),
        cmocka_unit_test(tally_counts_grows_and_sorts),
        cmocka_unit_test(an_array_grows_by_doubling),
        cmocka_unit_test(log_reader_skips_damage_and_goes_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
