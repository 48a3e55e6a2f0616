/* Tests of what `dlsync run --fail-on-race` checks and says (issue 23): status 3 for a reported
 * race (--error-exitcode N for another), 4 for a run that could not be checked as asked (no CUPTI
 * observer, a log that could not be written, was lost or cannot be read back, a static program,
 * an exec or a spawn dlsync could not follow, a process still running at the end), 0 for a clean
 * run, including a forked child that ends through _exit and a child that changes directory;
 * only the logs the run wrote are read (never another run's log of the same pattern, a FIFO or a
 * device); the summary line of each process and of the run, and --quiet. Every case runs the
 * real command, shim and simulator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

static char g_bin[512], g_app[512], g_static[512], g_scen[512], g_cupti[600], g_dir[64];

static int setup(void **state)
{
    (void)state;
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    dls_build_path(g_app, sizeof g_app, "tests/tool/gate_app");
    dls_build_path(g_static, sizeof g_static, "tests/tool/static_app");
    dls_build_path(g_scen, sizeof g_scen, "scenarios/scen_side_stream");
    snprintf(g_cupti, sizeof g_cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    snprintf(g_dir, sizeof g_dir, "/tmp/dlsync-gate-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return dls_remove_tree(g_dir);
}

/* Runs `dlsync run ARGS...` (NULL-terminated) with `extra` settings (NULL or up to 4; they come
 * first, so they win over the defaults: the simulator's CUPTI, no inherited dlsync variables);
 * timeout bounds a hang. */
static void run(dls_run_result *r, const char *const extra[], ...)
{
    const char *argv[40] = {"timeout", "120", g_bin, "run"};
    size_t n = 4;
    va_list ap;
    va_start(ap, extra);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 39;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    const char *defaults[] = {g_cupti,        "CUDA_INJECTION64_PATH=", "DLSYNC_AUTO_INJECTION=",     "DLSYNC_LOG=",
                              "DLSYNC_MODE=", "DLSYNC_QUIET=",          "ASAN_OPTIONS=detect_leaks=0"};
    const char *env[12];
    size_t k = 0;
    for (size_t i = 0; extra && extra[i] && k < 4; i++)
        env[k++] = extra[i];
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
        env[k++] = defaults[i];
    env[k] = NULL;
    assert_int_equal(dls_run(argv, env, r), 0);
}

/* Asserts the status and that stderr holds `want` (NULL: anything), then frees r. */
static void expect(dls_run_result *r, int status, const char *want)
{
    if (r->status != status || (want && !strstr(r->err, want)))
        fail_msg("status %d (want %d), stderr lacks \"%s\":\n%s", r->status, status, want ? want : "", r->err);
    dls_run_free(r);
}

static void a_reported_race_is_status_3_and_a_clean_run_0(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--fail-on-race", "--", g_scen, "racy", NULL);
    assert_non_null(strstr(r.out, "verdict: stale"));
    /* the process's summary line, then the run's */
    assert_non_null(strstr(r.err, "dlsync: check summary: 1 race reported, 0 suppressed, 1 exchange checked; "
                                  "observer active (pid "));
    expect(&r, 3, "dlsync run: check summary: 1 process checked, 1 race reported, 0 suppressed, 1 exchange checked\n");
    run(&r, NULL, "--fail-on-race", "--", g_scen, "correct", NULL);
    assert_int_equal(dls_count(r.err, "dlsync:"), 1);
    assert_int_equal(dls_count(r.err, "dlsync run:"), 1);
    expect(&r, 0, "dlsync run: check summary: 1 process checked, 0 races reported, 0 suppressed, 1 exchange checked\n");
}

static void error_exitcode_sets_the_race_status(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--error-exitcode", "42", "--", g_scen, "racy", NULL); /* implies --fail-on-race */
    expect(&r, 42, "1 race reported");
    run(&r, NULL, "--error-exitcode=9", "--", g_scen, "correct", NULL);
    expect(&r, 0, NULL);
    const char *bad[] = {"0", "256", "4", "x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        run(&r, NULL, "--error-exitcode", bad[i], "--", g_scen, "racy", NULL);
        assert_null(strstr(r.out, "verdict")); /* refused before the run */
        expect(&r, 2, "--error-exitcode");
    }
    /* The program's own failure wins over the gate. */
    run(&r, NULL, "--fail-on-race", "--", "/bin/sh", "-c", "exit 6", NULL);
    expect(&r, 6, NULL);
}

/* Without a CUPTI observer check cannot check: status 4, said by the process and the run. */
static void no_observer_is_status_4(void **state)
{
    (void)state;
    dls_run_result r;
    const char *nocupti[] = {"DLSYNC_CUPTI=/nonexistent/libcupti.so", NULL};
    run(&r, nocupti, "--fail-on-race", "--", g_scen, "racy", NULL);
    assert_non_null(strstr(r.err, "dlsync: check summary: NOT CHECKED: no CUDA observer (could not load CUPTI"));
    assert_non_null(strstr(r.err, "dlsync run: check summary: NOT CHECKED: 1 of 1 process; 0 races reported"));
    expect(&r, 4, "dlsync run:   not checked: pid ");
    const char *busy[] = {"CUDASIM_CUPTI_BUSY=othertool", NULL};
    run(&r, busy, "--fail-on-race", "--", g_scen, "correct", NULL);
    expect(&r, 4, "no CUDA observer (CUPTI subscription held by othertool");
}

/* A log that cannot be opened: a race still fails the gate, a clean run is not checked. */
static void a_log_that_cannot_be_written_is_not_checked(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--fail-on-race", "--log", "/nonexistent/dir/run.jsonl", "--", g_scen, "racy", NULL);
    expect(&r, 3, "its log could not be written: cannot open DLSYNC_LOG=/nonexistent/dir/run.jsonl");
    run(&r, NULL, "--fail-on-race", "--log", "/nonexistent/dir/run.jsonl", "--", g_scen, "correct", NULL);
    expect(&r, 4, "its log could not be written");
    /* A device is written to but cannot be read back; nothing hangs. */
    run(&r, NULL, "--fail-on-race", "--log", "/dev/zero", "--", g_scen, "correct", NULL);
    expect(&r, 4, "its log cannot be read back: /dev/zero: refused: a character device");
}

/* The program closes its descriptors, dlsync's log among them: the race is still known (from
 * the run's record), the lost log is said. */
static void a_program_that_closes_its_descriptors(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--fail-on-race", "--", g_app, "closefds", "racy", NULL);
    assert_non_null(strstr(r.err, "its log was lost: the program closed or replaced the descriptor"));
    expect(&r, 3, "1 race reported");
    run(&r, NULL, "--fail-on-race", "--", g_app, "closefds", "correct", NULL);
    expect(&r, 4, "its log was lost");
}

/* Programs dlsync cannot enter: a static one run directly, exec'd by a shell, started by a shell
 * (dash starts it with vfork), and one started without LD_PRELOAD. */
static void programs_dlsync_cannot_enter_are_not_checked(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--fail-on-race", "--", g_static, NULL);
    assert_non_null(strstr(r.out, "static app"));
    expect(&r, 4, "is statically linked: LD_PRELOAD cannot load libdlsync.so into it");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "exec %s", g_static);
    run(&r, NULL, "--fail-on-race", "--", "/bin/sh", "-c", cmd, NULL);
    expect(&r, 4, "which dlsync did not enter: it is statically linked");
    snprintf(cmd, sizeof cmd, "%s; true", g_static);
    run(&r, NULL, "--fail-on-race", "--", "/bin/sh", "-c", cmd, NULL);
    expect(&r, 4, "which dlsync did not enter: it is statically linked");
    run(&r, NULL, "--fail-on-race", "--", "/bin/sh", "-c", "env -u LD_PRELOAD /bin/true; true", NULL);
    expect(&r, 4, "its environment has no LD_PRELOAD naming libdlsync.so");
    /* dynamic programs the shell runs are followed */
    run(&r, NULL, "--fail-on-race", "--", "/bin/sh", "-c", "/bin/true; ls / >/dev/null; true", NULL);
    expect(&r, 0, "processes checked, 0 races reported");
}

/* Each exec and spawn call of the C library is followed: a static program started through any of
 * them is said, and still runs as asked (PATH searched for the p forms). */
static void every_exec_and_spawn_call_is_followed(void **state)
{
    (void)state;
    const char *how[] = {"execv", "execvp", "execvpe", "execl", "execlp", "execle", "posix_spawn", "posix_spawnp"};
    char dir[512], path[700];
    snprintf(dir, sizeof dir, "%s", g_static);
    *strrchr(dir, '/') = '\0';
    snprintf(path, sizeof path, "PATH=%s:/usr/bin:/bin", dir);
    const char *env[] = {path, NULL};
    for (size_t i = 0; i < sizeof how / sizeof *how; i++) {
        dls_run_result r;
        run(&r, env, "--fail-on-race", "--", g_app, "start", how[i], g_static, NULL);
        if (!strstr(r.out, "started\nstatic app\n") || !strstr(r.err, "which dlsync did not enter: it is statically "
                                                                      "linked"))
            fail_msg("%s: out %s err %s", how[i], r.out, r.err);
        expect(&r, 4, "static_app, which dlsync did not enter");
    }
}

/* A forked child that ends through _exit (as multiprocessing workers do) is covered and prints
 * its own summary; a child still running when the program ends is not checked. */
static void forked_children_and_daemons(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--fail-on-race", "--", g_app, "fork", "correct", NULL);
    assert_int_equal(dls_count(r.err, "dlsync: check summary: 0 races reported"), 2);
    expect(&r, 0, "dlsync run: check summary: 2 processes checked");
    run(&r, NULL, "--fail-on-race", "--", g_app, "daemon", "correct", NULL);
    expect(&r, 4, "still running when the program ended (a daemon?)");
}

/* A relative --log is taken from where dlsync run started, not from where the child went. */
static void a_relative_log_stays_where_the_run_started(void **state)
{
    (void)state;
    char sub[96], rel[64], want[256];
    snprintf(sub, sizeof sub, "%s/elsewhere", g_dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(chdir(g_dir), 0);
    snprintf(rel, sizeof rel, "rel.%d.jsonl", (int)getpid());
    dls_run_result r;
    run(&r, NULL, "--fail-on-race", "--log", rel, "--", g_app, "chdir", sub, "racy", NULL);
    expect(&r, 3, "1 race reported");
    snprintf(want, sizeof want, "%s/%s", g_dir, rel);
    char *log = dls_read_file(want);
    assert_non_null(log);
    assert_int_equal(dls_count(log, "{\"ev\":\"race\""), 1);
    free(log);
    snprintf(want, sizeof want, "%s/%s", sub, rel);
    assert_int_equal(access(want, F_OK), -1);
    assert_int_equal(chdir("/"), 0);
}

/* Logs of the same pattern beside the run's own (another run's racy log, a FIFO) are not read:
 * a clean run passes at once. */
static void only_the_runs_own_logs_are_read(void **state)
{
    (void)state;
    char pattern[128], path[160];
    snprintf(pattern, sizeof pattern, "%s/same.%%p.jsonl", g_dir);
    snprintf(path, sizeof path, "%s/same.1.jsonl", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"ev\":\"start\",\"t\":1,\"pid\":1,\"tid\":1,\"run\":\"other\",\"proc_start\":1,\"mode\":\"check\"}\n");
    fprintf(f, "{\"ev\":\"race\",\"t\":%lld,\"pid\":1,\"tid\":1,\"key\":\"k\",\"count\":1}\n",
            (long long)time(NULL) * 1000000000LL);
    fclose(f);
    snprintf(path, sizeof path, "%s/same.2.jsonl", g_dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    dls_run_result r;
    run(&r, NULL, "--fail-on-race", "--log", pattern, "--", g_scen, "correct", NULL);
    expect(&r, 0, "1 process checked, 0 races reported");
    run(&r, NULL, "--fail-on-race", "--log", pattern, "--", g_scen, "racy", NULL);
    expect(&r, 3, "1 process checked, 1 race reported");
}

/* --quiet: neither the processes' summary lines nor the run's; the race report stays. */
static void quiet_turns_the_summaries_off(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--quiet", "--fail-on-race", "--", g_scen, "racy", NULL);
    assert_null(strstr(r.err, "summary"));
    expect(&r, 3, "dlsync: race (write-read)");
    const char *quiet[] = {"DLSYNC_QUIET=1", "DLSYNC_MODE=check", NULL};
    const char *argv[] = {g_scen, "correct", NULL};
    char shim[512], pv[1100], preload[1200];
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, shim));
    const char *env[] = {preload, g_cupti, quiet[0], quiet[1], "CUDA_INJECTION64_PATH=", NULL};
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    dls_run_free(&r);
}

/* fix: a process says what it did when it injected; the run sums it up. trace: exchanges. */
static void fix_and_trace_summaries(void **state)
{
    (void)state;
    dls_run_result r;
    run(&r, NULL, "--", g_scen, "racy", NULL);
    assert_non_null(strstr(r.out, "verdict: correct"));
    assert_non_null(strstr(r.err, "dlsync: fix summary: 1 wait injected, 0 fallbacks, 1 exchange (pid "));
    expect(&r, 0, "dlsync run: fix summary: 1 process, 1 wait injected, 0 fallbacks, 1 exchange\n");
    run(&r, NULL, "--", g_scen, "correct", NULL); /* nothing injected: no process line */
    assert_null(strstr(r.err, "dlsync: fix summary"));
    expect(&r, 0, "dlsync run: fix summary: 1 process, 0 waits injected");
    run(&r, NULL, "--mode", "trace", "--", g_scen, "correct", NULL);
    expect(&r, 0, "dlsync run: trace summary: 1 process, 1 exchange\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_reported_race_is_status_3_and_a_clean_run_0),
        cmocka_unit_test(error_exitcode_sets_the_race_status),
        cmocka_unit_test(no_observer_is_status_4),
        cmocka_unit_test(a_log_that_cannot_be_written_is_not_checked),
        cmocka_unit_test(a_program_that_closes_its_descriptors),
        cmocka_unit_test(programs_dlsync_cannot_enter_are_not_checked),
        cmocka_unit_test(every_exec_and_spawn_call_is_followed),
        cmocka_unit_test(forked_children_and_daemons),
        cmocka_unit_test(a_relative_log_stays_where_the_run_started),
        cmocka_unit_test(only_the_runs_own_logs_are_read),
        cmocka_unit_test(quiet_turns_the_summaries_off),
        cmocka_unit_test(fix_and_trace_summaries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
