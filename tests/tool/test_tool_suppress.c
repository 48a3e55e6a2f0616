/* Tests of race suppressions end to end (issue 23): a rule matching a frame, the framework or an
 * operation of the side_stream race suppresses it (not printed, logged with its rule, counted as
 * suppressed by the process, the run and `dlsync report`); a rule of another kind does not; a bad
 * line is warned about with FILE:LINE by the shim and refused by `dlsync run` before it starts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

static char g_bin[512], g_scen[512], g_cupti[600], g_preload[1200], g_dir[64], g_supp[128], g_log[128];

static int setup(void **state)
{
    (void)state;
    char shim[512], pv[1100];
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    dls_build_path(g_scen, sizeof g_scen, "scenarios/scen_side_stream");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    snprintf(g_preload, sizeof g_preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, shim));
    snprintf(g_cupti, sizeof g_cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    snprintf(g_dir, sizeof g_dir, "/tmp/dlsync-supp-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_supp, sizeof g_supp, "%s/rules.supp", g_dir);
    snprintf(g_log, sizeof g_log, "%s/log.jsonl", g_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return dls_remove_tree(g_dir);
}

static void write_rules(const char *text)
{
    FILE *f = fopen(g_supp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The racy side_stream scenario, preloaded in check mode with the rules file; returns its log. */
static char *racy_check(dls_run_result *r)
{
    char supp[200], log[200];
    snprintf(supp, sizeof supp, "DLSYNC_SUPPRESSIONS=%s", g_supp);
    snprintf(log, sizeof log, "DLSYNC_LOG=%s", g_log);
    unlink(g_log);
    const char *argv[] = {g_scen, "racy", NULL};
    const char *env[] = {
        g_preload, g_cupti, supp, log, "DLSYNC_MODE=check", "CUDA_INJECTION64_PATH=", "DLSYNC_QUIET=", NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
    assert_int_equal(r->status, 0);
    char *text = dls_read_file(g_log);
    assert_non_null(text);
    return text;
}

static void a_matching_rule_suppresses_and_counts(void **state)
{
    (void)state;
    /* a producer frame, the framework, the consumer's kernel */
    const char *rules[] = {"race:scen_side_exchange\n", "# the fake MXNet\nwrite-read:^mxnet$\n", "race:^scen_read$\n"};
    const char *rule[] = {"race:scen_side_exchange", "write-read:^mxnet$", "race:^scen_read$"};
    const unsigned lines[] = {1, 2, 1};
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        write_rules(rules[i]);
        dls_run_result r;
        char *log = racy_check(&r);
        if (strstr(r.err, "dlsync: race ("))
            fail_msg("rule %s did not suppress:\n%s", rules[i], r.err);
        assert_non_null(strstr(r.err, "dlsync: check summary: 0 races reported, 1 suppressed, 1 exchange checked"));
        char want[256];
        snprintf(want, sizeof want, "\"suppressed\":{\"rule\":\"%s\",\"file\":\"%s\",\"line\":%u}", rule[i], g_supp,
                 lines[i]);
        if (!strstr(log, want))
            fail_msg("log lacks %s:\n%s", want, log);
        assert_non_null(strstr(log, "\"races\":0,\"suppressed\":1,"));
        free(log);
        dls_run_free(&r);
    }
    /* dlsync report keeps it apart from the races */
    const char *argv[] = {g_bin, "report", g_log, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    assert_non_null(strstr(r.out, "Races: 0 distinct"));
    assert_non_null(strstr(r.out, "Suppressed races: 1 distinct, 1 occurrences\n    write-read x1"));
    dls_run_free(&r);
}

static void a_rule_of_another_kind_or_text_does_not(void **state)
{
    (void)state;
    write_rules("host-read:scen_side_exchange\nrelease-reuse:*\nrace:no_such_function\n");
    dls_run_result r;
    char *log = racy_check(&r);
    assert_non_null(strstr(r.err, "dlsync: race (write-read)"));
    assert_non_null(strstr(r.err, "1 race reported, 0 suppressed"));
    assert_null(strstr(log, "\"suppressed\":{"));
    free(log);
    dls_run_free(&r);
}

/* The shim warns about each bad line with FILE:LINE and keeps the good rules. */
static void bad_lines_are_warned_and_skipped(void **state)
{
    (void)state;
    write_rules("rcae:scen\nrace:scen_side_exchange\nnot a rule\n");
    dls_run_result r;
    char *log = racy_check(&r);
    char want[300];
    snprintf(want, sizeof want, "dlsync: warning: DLSYNC_SUPPRESSIONS=%s:1: unknown kind 'rcae'", g_supp);
    assert_non_null(strstr(r.err, want));
    snprintf(want, sizeof want, "dlsync: warning: DLSYNC_SUPPRESSIONS=%s:3: expected KIND:PATTERN; line ignored",
             g_supp);
    assert_non_null(strstr(r.err, want));
    assert_non_null(strstr(r.err, "0 races reported, 1 suppressed"));
    free(log);
    dls_run_free(&r);
}

/* dlsync run: suppressed races do not fail the gate; a bad file stops the run before it starts. */
static void the_run_counts_them_and_refuses_bad_files(void **state)
{
    (void)state;
    write_rules("race:scen_side_exchange\n");
    const char *argv[] = {g_bin, "run", "--fail-on-race", "--suppressions", g_supp, "--", g_scen, "racy", NULL};
    const char *env[] = {g_cupti, "CUDA_INJECTION64_PATH=", "DLSYNC_QUIET=", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "dlsync run: check summary: 1 process checked, 0 races reported, 1 suppressed"));
    dls_run_free(&r);
    write_rules("race:ok\nwrite-write\n");
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 2);
    char want[300];
    snprintf(want, sizeof want, "dlsync run: %s:2: expected KIND:PATTERN\n", g_supp);
    assert_non_null(strstr(r.err, want));
    assert_null(strstr(r.out, "verdict")); /* the program never ran */
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_matching_rule_suppresses_and_counts),
        cmocka_unit_test(a_rule_of_another_kind_or_text_does_not),
        cmocka_unit_test(bad_lines_are_warned_and_skipped),
        cmocka_unit_test(the_run_counts_them_and_refuses_bad_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
