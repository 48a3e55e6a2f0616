/* Tests of the budgets of `make bench` (tests/bench/budget.h): a figure's verdict line, the
 * one-line verdict read from the benchmarks' output, and scripts/run-bench.sh with bench_verdict,
 * which make bench runs, failing when a figure is over its budget or missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "budget.h"
#include "dls_test.h"

static void a_line_is_within_at_its_budget_and_over_past_it(void **state)
{
    (void)state;
    char line[512];
    assert_int_equal(dls_budget_line(line, sizeof line, DLS_BUDGET_FIX_OP, 600), DLS_BUDGET_WITHIN);
    assert_string_equal(line, "budget fix-op (fix, per cudaMemsetAsync, calling thread): 600 instructions, budget 600: "
                              "within budget");
    assert_int_equal(dls_budget_line(line, sizeof line, DLS_BUDGET_FIX_OP, 600.6), DLS_BUDGET_OVER);
    assert_string_equal(line, "budget fix-op (fix, per cudaMemsetAsync, calling thread): 601 instructions, budget 600: "
                              "OVER budget");
    assert_int_equal(dls_budget_line(line, sizeof line, DLS_BUDGET_LOG_RECORD, -1), DLS_BUDGET_UNMEASURED);
    assert_string_equal(line, "budget log-record (per log record, whole process): not measured, budget 1000");
    assert_int_equal(dls_budget_line(line, sizeof line, DLS_BUDGET_FIX_LEGACY_PATH, 7000), DLS_BUDGET_OVER);
    assert_string_equal(line, "goal fix-legacy-path (fix, per legacy exchange that needs its wait, whole path, calling "
                              "thread): 7000 instructions, goal 6000: goal not yet met");
    assert_int_equal(dls_budget_line(line, sizeof line, DLS_BUDGET_FIX_LEGACY_PATH, 6000), DLS_BUDGET_WITHIN);
    assert_non_null(strstr(line, ": goal met"));
}

/* The benchmarks' output with every figure at 0 (within its budget, goals met), but figure `odd`
 * at `odd_value` (-2: its line left out), among lines of other figures. */
static void output(char *buf, size_t n, int odd, double odd_value)
{
    size_t len = (size_t)snprintf(buf, n, "== bench_cost\n    fix  own +380 instructions\n");
    for (int i = 0; i < DLS_BUDGET_COUNT; i++) {
        char line[512];
        double v = i == odd ? odd_value : 0;
        if (v == -2)
            continue;
        dls_budget_line(line, sizeof line, (dls_budget_id)i, v);
        len += (size_t)snprintf(buf + len, n - len, "  %s\n", line);
    }
}

static void the_verdict_names_what_is_over_or_missing(void **state)
{
    (void)state;
    char text[8192], verdict[2048];
    output(text, sizeof text, -1, 0);
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 0);
    assert_string_equal(verdict, "bench: all 15 figures within budget; goals met: 2 of 2");

    output(text, sizeof text, DLS_BUDGET_FIX_OP, 613);
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 1);
    assert_string_equal(verdict, "bench: 1 of 15 figures OVER budget, 0 not measured, 14 within budget (bench_cost "
                                 "fix-op 613 > 600); goals met: 2 of 2");

    output(text, sizeof text, DLS_BUDGET_HOOKS_EXPORT_RELEASE, -2);
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 1);
    assert_string_equal(verdict, "bench: 0 of 15 figures OVER budget, 1 not measured, 14 within budget (bench_hooks "
                                 "hooks-export-release); goals met: 2 of 2");

    output(text, sizeof text, DLS_BUDGET_CHECK_OP, -1);
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 1);
    assert_non_null(strstr(verdict, "1 not measured"));

    /* A goal not yet met is named, and fails nothing; a goal not measured fails the run. */
    output(text, sizeof text, DLS_BUDGET_FIX_LEGACY_PATH, 7000);
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 0);
    assert_string_equal(verdict, "bench: all 15 figures within budget; goals met: 1 of 2 (not yet: bench_pipeline "
                                 "fix-legacy-path 7000 > 6000)");
    output(text, sizeof text, DLS_BUDGET_FIX_ORDERED_PATH, -2);
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 1);
    assert_string_equal(verdict, "bench: all 15 figures within budget; goals met: 1 of 2, 1 not measured (not yet: "
                                 "bench_pipeline fix-ordered-path)");
    /* A figure written in another unit than its own is not measured. */
    output(text, sizeof text, DLS_BUDGET_FIX_OP, -2);
    strcat(text, "budget fix-op (fix): 10 driver calls, budget 600: within budget\n");
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 1);

    /* A line of a figure whose key only begins like another's, or that is no verdict line, is
     * not that figure's. */
    output(text, sizeof text, DLS_BUDGET_FIX_OP, -2);
    strcat(text, "budget fix-op-x (fix): 10 instructions, budget 400: within budget\n"
                 "xbudget fix-op (fix): 10 instructions, budget 400: within budget\n");
    assert_int_equal(dls_budget_verdict_of(text, verdict, sizeof verdict), 1);
    assert_non_null(strstr(verdict, "(bench_cost fix-op)"));
}

/* Writes an executable script at path that prints `text` and exits with `status`. */
static void fake_bench(const char *path, const char *text, int status)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\ncat <<'EOF'\n%sEOF\nexit %d\n", text, status);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

/* The last line of text (without its newline), in buf. */
static const char *last_line(const char *text, char *buf, size_t n)
{
    size_t len = strlen(text);
    while (len > 0 && text[len - 1] == '\n')
        len--;
    size_t start = len;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(buf, n, "%.*s", (int)(len - start), text + start);
    return buf;
}

static void make_bench_fails_when_a_figure_is_over(void **state)
{
    (void)state;
    char dir[] = "/tmp/dls_budget.XXXXXX", a[64], b[64], verdict[512], text[8192], last[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/bench_a", dir);
    snprintf(b, sizeof b, "%s/bench_b", dir);
    dls_build_path(verdict, sizeof verdict, "tests/bench_verdict");
    const char *argv[] = {"bash", DLS_SRC_DIR "/scripts/run-bench.sh", "--verdict", verdict, a, b, NULL};
    struct {
        double fix_op;
        int status_b, rc;
        const char *last;
    } cases[] = {
        {613, 0, 1,
         "bench: 1 of 15 figures OVER budget, 0 not measured, 14 within budget (bench_cost fix-op 613 > 600); goals "
         "met: 2 of 2"},
        {600, 0, 0, "bench: all 15 figures within budget; goals met: 2 of 2"},
        {580, 3, 1, "bench: all 15 figures within budget; goals met: 2 of 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        output(text, sizeof text, DLS_BUDGET_FIX_OP, -2); /* every figure but fix-op */
        fake_bench(a, text, 0);
        char line[512];
        dls_budget_line(line, sizeof line, DLS_BUDGET_FIX_OP, cases[i].fix_op);
        snprintf(text, sizeof text, "  %s\n", line);
        fake_bench(b, text, cases[i].status_b);
        dls_run_result r;
        assert_int_equal(dls_run(argv, NULL, &r), 0);
        assert_int_equal(r.status, cases[i].rc);
        assert_string_equal(last_line(r.out, last, sizeof last), cases[i].last);
        assert_non_null(strstr(r.out, "== bench_a\n"));
        assert_non_null(strstr(r.out, line)); /* each benchmark's own output is shown */
        assert_int_equal(strstr(r.out, "benchmark bench_b exited 3") != NULL, cases[i].status_b == 3);
        dls_run_free(&r);
    }
    dls_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_line_is_within_at_its_budget_and_over_past_it),
        cmocka_unit_test(the_verdict_names_what_is_over_or_missing),
        cmocka_unit_test(make_bench_fails_when_a_figure_is_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
