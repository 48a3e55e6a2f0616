/* Unit tests of the suppressions syntax (shim/report/suppress.c): rules and their kinds, comments
 * and blanks, each bad line with its number and reason, the limits, and how a pattern matches
 * (anywhere, `*`, `^`, `$`) and which rule a race's texts meet first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/race.h"
#include "report/suppress.h"

typedef struct {
    unsigned lines[16];
    char reasons[16][192];
    int n;
} bad_lines;

static void collect(unsigned line, const char *reason, void *ctx)
{
    bad_lines *b = ctx;
    if (b->n < 16) {
        b->lines[b->n] = line;
        snprintf(b->reasons[b->n++], sizeof b->reasons[0], "%s", reason);
    }
}

static void rules_comments_and_blanks(void **state)
{
    (void)state;
    const char text[] = "# a comment\n"
                        "\n"
                        "race:libvendor.so\n"
                        "   write-read  :   ^at::toDLPack  \r\n"
                        "\t# indented comment\n"
                        "release-reuse:*pool*$";
    dls_suppress_set set = {0};
    bad_lines bad = {0};
    assert_int_equal(dls_suppress_parse(text, strlen(text), &set, collect, &bad), 0);
    assert_int_equal(bad.n, 0);
    assert_int_equal(set.n, 3);
    assert_int_equal(set.rules[0].kind, -1);
    assert_string_equal(set.rules[0].pattern, "libvendor.so");
    assert_int_equal(set.rules[0].line, 3);
    assert_int_equal(set.rules[1].kind, DLS_RACE_WRITE_READ);
    assert_string_equal(set.rules[1].pattern, "^at::toDLPack");
    assert_string_equal(set.rules[1].text, "write-read:^at::toDLPack");
    assert_int_equal(set.rules[1].line, 4);
    assert_int_equal(set.rules[2].kind, DLS_RACE_RELEASE_REUSE);
    assert_int_equal(set.rules[2].line, 6);
    dls_suppress_set_free(&set);
    assert_int_equal(set.n, 0);
}

static void bad_lines_get_their_number_and_a_reason(void **state)
{
    (void)state;
    char text[4096];
    int k = snprintf(text, sizeof text,
                     "race:ok\n"
                     "no colon here\n"
                     "rcae:typo\n"
                     "host-read:\n"
                     "race:^$\n"
                     "race:a\x01"
                     "b\n"
                     "race:");
    memset(text + k, 'x', 1100);
    k += 1100;
    text[k++] = '\n';
    memcpy(text + k, "race:nul\0here\n", 14);
    k += 14;
    dls_suppress_set set = {0};
    bad_lines bad = {0};
    assert_int_equal(dls_suppress_parse(text, (size_t)k, &set, collect, &bad), 7);
    assert_int_equal(set.n, 1);
    const unsigned want_lines[] = {2, 3, 4, 5, 6, 7, 8};
    const char *want[] = {"expected KIND:PATTERN",
                          ("unknown kind 'rcae' (expected race, write-read, read-write, write-write, host-read or "
                           "release-reuse)"),
                          "empty pattern",
                          "empty pattern",
                          "control character 0x01",
                          "line longer than 1024 bytes",
                          "NUL byte"};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(bad.lines[i], want_lines[i]);
        assert_string_equal(bad.reasons[i], want[i]);
    }
    dls_suppress_set_free(&set);
}

static void at_most_the_rule_limit_is_kept(void **state)
{
    (void)state;
    size_t cap = (DLS_SUPPRESS_MAX_RULES + 5) * 16;
    char *text = malloc(cap);
    size_t k = 0;
    for (int i = 0; i < DLS_SUPPRESS_MAX_RULES + 5; i++)
        k += (size_t)snprintf(text + k, cap - k, "race:%d\n", i % 1000);
    dls_suppress_set set = {0};
    bad_lines bad = {0};
    assert_int_equal(dls_suppress_parse(text, k, &set, collect, &bad), 5);
    assert_int_equal(set.n, DLS_SUPPRESS_MAX_RULES);
    assert_int_equal(bad.lines[0], DLS_SUPPRESS_MAX_RULES + 1);
    assert_string_equal(bad.reasons[0], "more than 1024 rules");
    dls_suppress_set_free(&set);
    free(text);
}

static void patterns_match_anywhere_unless_anchored(void **state)
{
    (void)state;
    const char *frame = "tvm_read+0x43 (libfaketvm.so)";
    assert_true(dls_suppress_match("libfaketvm", frame));
    assert_true(dls_suppress_match("tvm_read", frame));
    assert_true(dls_suppress_match("^tvm_read", frame));
    assert_false(dls_suppress_match("^read", frame));
    assert_true(dls_suppress_match("(libfaketvm.so)$", frame));
    assert_false(dls_suppress_match("libfaketvm$", frame));
    assert_true(dls_suppress_match("^tvm_*+0x43*faketvm*$", frame));
    assert_true(dls_suppress_match("*", frame));
    assert_true(dls_suppress_match("^*$", ""));
    assert_false(dls_suppress_match("tvm_write", frame));
    assert_true(dls_suppress_match("^tvm_read+0x43 (libfaketvm.so)$", frame));
    assert_false(dls_suppress_match("^tvm_read+0x43 (libfaketvm.so)x$", frame));
    /* a '$' or '^' inside a pattern is an ordinary character */
    assert_true(dls_suppress_match("a$b", "xa$bx"));
    assert_true(dls_suppress_match("a^b", "a^b"));
}

static void the_first_rule_of_the_kind_wins(void **state)
{
    (void)state;
    const char text[] = "host-read:tvm\nrace:^mxnet$\nwrite-read:faketvm\n";
    dls_suppress_set set = {0};
    assert_int_equal(dls_suppress_parse(text, strlen(text), &set, NULL, NULL), 0);
    const char *texts[] = {"tvm_read+0x43 (libfaketvm.so)", NULL, "mxnet"};
    const dls_suppress_rule *r = dls_suppress_first(&set, DLS_RACE_WRITE_READ, texts, 3);
    assert_non_null(r);
    assert_string_equal(r->text, "race:^mxnet$");
    r = dls_suppress_first(&set, DLS_RACE_HOST_READ, texts, 3);
    assert_string_equal(r->text, "host-read:tvm");
    const char *other[] = {"main+0x10 (app)"};
    assert_null(dls_suppress_first(&set, DLS_RACE_WRITE_READ, other, 1));
    assert_null(dls_suppress_first(NULL, DLS_RACE_WRITE_READ, texts, 3));
    dls_suppress_set_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rules_comments_and_blanks),       cmocka_unit_test(bad_lines_get_their_number_and_a_reason),
        cmocka_unit_test(at_most_the_rule_limit_is_kept),  cmocka_unit_test(patterns_match_anywhere_unless_anchored),
        cmocka_unit_test(the_first_rule_of_the_kind_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
