/* Tests of logs per run and bounded logs (issue 23): %n gives each process start a new file; a
 * log that already holds another run's records is said once when appended to (and a run's own
 * processes sharing one log say nothing); a forked child writes its own start record into a
 * shared log; past DLSYNC_LOG_LIMIT exchange records stop while the race and the summary are
 * still written, said once in the log and on stderr, and `dlsync report` says the log was
 * capped; the limit is on by default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

static char g_bin[512], g_app[512], g_scen[512], g_cupti[600], g_dir[64];

static int setup(void **state)
{
    (void)state;
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    dls_build_path(g_app, sizeof g_app, "tests/tool/gate_app");
    dls_build_path(g_scen, sizeof g_scen, "scenarios/scen_side_stream");
    snprintf(g_cupti, sizeof g_cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    snprintf(g_dir, sizeof g_dir, "/tmp/dlsync-logs-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return dls_remove_tree(g_dir);
}

/* `dlsync run ARGS... -- PROGRAM...` (NULL-terminated), in check mode unless ARGS say. */
static void run(dls_run_result *r, ...)
{
    const char *argv[24] = {g_bin, "run"};
    size_t n = 2;
    va_list ap;
    va_start(ap, r);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 23;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    const char *env[] = {g_cupti,       "CUDA_INJECTION64_PATH=", "DLSYNC_AUTO_INJECTION=", "DLSYNC_QUIET=",
                         "DLSYNC_LOG=", "DLSYNC_LOG_LIMIT=",      "DLSYNC_RUN_ID=",         NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
}

static size_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (size_t)st.st_size;
}

static void percent_n_gives_each_process_start_its_own_file(void **state)
{
    (void)state;
    char pattern[128], path[160];
    snprintf(pattern, sizeof pattern, "%s/n.%%n.jsonl", g_dir);
    for (int i = 0; i < 2; i++) {
        dls_run_result r;
        run(&r, "--mode", "check", "--log", pattern, "--", g_scen, "correct", NULL);
        assert_int_equal(r.status, 0);
        assert_null(strstr(r.err, "warning"));
        dls_run_free(&r);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/n.%d.jsonl", g_dir, i);
        char *log = dls_read_file(path);
        assert_non_null(log);
        assert_int_equal(dls_count(log, "{\"ev\":\"start\""), 1);
        assert_int_equal(dls_count(log, "{\"ev\":\"summary\""), 1);
        free(log);
    }
    snprintf(path, sizeof path, "%s/n.2.jsonl", g_dir);
    assert_int_equal(access(path, F_OK), -1);
}

static void appending_to_another_runs_log_is_said(void **state)
{
    (void)state;
    char log[128];
    snprintf(log, sizeof log, "%s/same.jsonl", g_dir);
    dls_run_result r;
    /* a run of two processes (the shell and its child) sharing the log: nothing to say */
    run(&r, "--mode", "check", "--log", log, "--", "/bin/sh", "-c", "/bin/true; true", NULL);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.err, "another run"));
    dls_run_free(&r);
    run(&r, "--mode", "check", "--log", log, "--", g_scen, "correct", NULL);
    assert_int_equal(r.status, 0);
    char want[512];
    snprintf(want, sizeof want,
             "dlsync: warning: DLSYNC_LOG=%s already holds the records of another run; appending to it (%%n in the "
             "name makes a new file per process)\n",
             log);
    assert_int_equal(dls_count(r.err, want), 1);
    dls_run_free(&r);
    /* the gate reads only this run's records of the shared file */
    run(&r, "--fail-on-race", "--log", log, "--", g_scen, "correct", NULL);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);
}

/* A forked child writing into its parent's log (no %p) has its own start record there. */
static void a_forked_child_starts_its_own_records(void **state)
{
    (void)state;
    char log[128];
    snprintf(log, sizeof log, "%s/fork.jsonl", g_dir);
    dls_run_result r;
    run(&r, "--fail-on-race", "--log", log, "--", g_app, "fork", "correct", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "2 processes checked"));
    dls_run_free(&r);
    char *text = dls_read_file(log);
    assert_int_equal(dls_count(text, "{\"ev\":\"start\""), 2);
    assert_int_equal(dls_count(text, "{\"ev\":\"summary\""), 2);
    free(text);
}

static void a_log_stops_exchange_records_at_its_limit(void **state)
{
    (void)state;
    char log[128];
    snprintf(log, sizeof log, "%s/capped.jsonl", g_dir);
    dls_run_result r;
    run(&r, "--fail-on-race", "--log", log, "--log-limit", "4k", "--", g_app, "repeat", "40", "racy", NULL);
    assert_int_equal(r.status, 3);
    assert_int_equal(dls_count(r.err, "reached its limit of 4096 bytes; no more exchange records are written"), 1);
    assert_non_null(strstr(r.err, "1 race reported"));
    dls_run_free(&r);
    char *text = dls_read_file(log);
    assert_non_null(text);
    /* under the limit but for the records still written past it: the race, the summary */
    size_t race = strstr(text, "{\"ev\":\"race\"") ? strcspn(strstr(text, "{\"ev\":\"race\""), "\n") : 0;
    assert_true(race > 0);
    assert_true(file_size(log) <= 4096 + race + 2048);
    assert_int_equal(dls_count(text, "{\"ev\":\"log_capped\""), 1);
    assert_int_equal(dls_count(text, "{\"ev\":\"race\""), 1);
    assert_int_equal(dls_count(text, "{\"ev\":\"summary\""), 1);
    assert_non_null(strstr(text, "\"exchanges\":41,"));
    assert_null(strstr(text, "\"dropped\":0}"));
    free(text);
    const char *argv[] = {g_bin, "report", log, NULL};
    assert_int_equal(dls_run(argv, NULL, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Logs capped: 1 process stopped writing exchange records"));
    assert_non_null(strstr(r.out, "limit 4096 bytes"));
    dls_run_free(&r);
    /* the default is on, and 0 means none */
    run(&r, "--mode", "check", "--log", log, "--", g_scen, "correct", NULL);
    dls_run_free(&r);
    text = dls_read_file(log);
    assert_non_null(strstr(text, "\"log_limit\":67108864"));
    free(text);
    run(&r, "--mode", "check", "--log-limit", "1x", "--", g_scen, "correct", NULL);
    assert_int_equal(r.status, 2);
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percent_n_gives_each_process_start_its_own_file),
        cmocka_unit_test(appending_to_another_runs_log_is_said),
        cmocka_unit_test(a_forked_child_starts_its_own_records),
        cmocka_unit_test(a_log_stops_exchange_records_at_its_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
