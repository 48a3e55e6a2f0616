/* Tests of `dlsync run`: the environment it gives the program (LD_PRELOAD kept and prefixed,
 * CUDA_INJECTION64_PATH, DLSYNC_*), exit statuses (the program's, 128+signal, usage errors, a
 * missing program, a missing library), --fail-on-race with temporary and named logs, and that
 * --help says what the man page says. */
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

static char g_bin[512], g_shim[512];

/* The value of NAME in the output of env (a line "NAME=value"), copied into buf, or NULL. */
static const char *env_line(const char *out, const char *name, char *buf, size_t n)
{
    size_t nl = strlen(name);
    for (const char *p = out; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            snprintf(buf, n, "%.*s", (int)(len - nl - 1), p + nl + 1);
            return buf;
        }
        p = eol ? eol + 1 : NULL;
    }
    return NULL;
}

static void run(const char *const argv[], const char *const env[], dls_run_result *r)
{
    assert_int_equal(dls_run(argv, env, r), 0);
}

/* Runs argv with env added, asserts that it exited with `status`, and frees its result. */
static void expect_status(const char *const argv[], const char *const env[], int status)
{
    dls_run_result r;
    run(argv, env, &r);
    assert_int_equal(r.status, status);
    dls_run_free(&r);
}

static void environment_is_prepared(void **state)
{
    (void)state;
    char old[600], v[2048];
    dls_build_path(old, sizeof old, "tests/tool/libscanfix.so");
    char preload[700];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", old);
    /* The existing LD_PRELOAD also applies to the dlsync command itself: in an ASan build its
     * runtime then does not come first, which ASan refuses unless told not to check. */
    const char *env[] = {preload,       "CUDA_INJECTION64_PATH=", "DLSYNC_MODE=",
                         "DLSYNC_LOG=", "DLSYNC_VERBOSE=",        "ASAN_OPTIONS=verify_asan_link_order=0",
                         NULL};
    const char *argv[] = {
        g_bin,       "run", "--mode",       "trace", "--log", "/tmp/x.%p.%r.jsonl", "--profiles=/tmp/p.txt",
        "--verbose", "--",  "/usr/bin/env", NULL};
    dls_run_result r;
    run(argv, env, &r);
    assert_int_equal(r.status, 0);
    /* The shim comes first (after the sanitizer runtime in instrumented builds); what was there
     * before is kept after it. */
    assert_non_null(env_line(r.out, "LD_PRELOAD", v, sizeof v));
    char want[1400];
    snprintf(want, sizeof want, "%s:%s", g_shim, old);
    size_t vl = strlen(v), wl = strlen(want);
    assert_true(vl >= wl);
    assert_string_equal(v + vl - wl, want);
    assert_string_equal(env_line(r.out, "CUDA_INJECTION64_PATH", v, sizeof v), g_shim);
    assert_string_equal(env_line(r.out, "DLSYNC_MODE", v, sizeof v), "trace");
    assert_string_equal(env_line(r.out, "DLSYNC_LOG", v, sizeof v), "/tmp/x.%p.%r.jsonl");
    assert_string_equal(env_line(r.out, "DLSYNC_PROFILES", v, sizeof v), "/tmp/p.txt");
    assert_string_equal(env_line(r.out, "DLSYNC_VERBOSE", v, sizeof v), "1");
    dls_run_free(&r);
}

/* Another tool's injection library is initialized by the shim first (test_profilers). */
static void existing_injection_path_is_chained(void **state)
{
    (void)state;
    const char *env[] = {"CUDA_INJECTION64_PATH=/opt/other/inject.so", "DLSYNC_MODE=", NULL};
    const char *argv[] = {g_bin, "run", "/usr/bin/env", NULL};
    dls_run_result r;
    char v[1024];
    run(argv, env, &r);
    assert_int_equal(r.status, 0);
    assert_string_equal(env_line(r.out, "CUDA_INJECTION64_PATH", v, sizeof v), g_shim);
    assert_string_equal(env_line(r.out, "DLSYNC_CHAINED_INJECTION", v, sizeof v), "/opt/other/inject.so");
    assert_null(env_line(r.out, "DLSYNC_MODE", v, sizeof v));
    dls_run_free(&r);
}

static void exit_status_is_the_programs(void **state)
{
    (void)state;
    for (int fail_on_race = 0; fail_on_race < 2; fail_on_race++) {
        const char *flag = fail_on_race ? "--fail-on-race" : "--verbose";
        const char *exit7[] = {g_bin, "run", flag, "--", "/bin/sh", "-c", "exit 7", NULL};
        const char *killed[] = {g_bin, "run", flag, "--", "/bin/sh", "-c", "kill -TERM $$", NULL};
        expect_status(exit7, NULL, 7);
        expect_status(killed, NULL, 128 + 15);
    }
}

static void bad_command_lines_are_refused(void **state)
{
    (void)state;
    const char *cases[][6] = {
        {g_bin, "run", NULL},
        {g_bin, "run", "--mode", "fast", "/bin/true", NULL},
        {g_bin, "run", "--fail-on-race", "--mode", "fix", "/bin/true"},
        {g_bin, "run", "--log", NULL},
        {g_bin, "run", "--bogus", "/bin/true", NULL},
        {g_bin, "frobnicate", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[7] = {0};
        memcpy(argv, cases[i], sizeof cases[i]);
        dls_run_result r;
        run(argv, NULL, &r);
        if (r.status != 2)
            fail_msg("case %zu: status %d, stderr %s", i, r.status, r.err);
        assert_non_null(strstr(r.err, "dlsync"));
        dls_run_free(&r);
    }
    const char *missing[] = {g_bin, "run", "--", "/nonexistent/program", NULL};
    dls_run_result r;
    run(missing, NULL, &r);
    assert_int_equal(r.status, 127);
    assert_non_null(strstr(r.err, "cannot run /nonexistent/program"));
    dls_run_free(&r);
}

static void missing_library_is_reported(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-nolib-XXXXXX", copy[128];
    assert_non_null(mkdtemp(dir));
    snprintf(copy, sizeof copy, "%s/dlsync", dir);
    const char *cp[] = {"/bin/cp", g_bin, copy, NULL};
    dls_run_result r;
    expect_status(cp, NULL, 0);
    const char *argv[] = {copy, "run", "/bin/true", NULL};
    run(argv, NULL, &r);
    assert_int_equal(r.status, 125);
    assert_non_null(strstr(r.err, "cannot find libdlsync.so"));
    dls_run_free(&r);
    unlink(copy);
    rmdir(dir);
}

/* A program that appends a race record to the log the shim was told to write (with %p as its
 * own pid), then exits with $1: the run reads that log back. */
static const char race_script[] =
    "f=$(printf '%s' \"$DLSYNC_LOG\" | sed \"s/%p/$$/\"); "
    "printf '{\"ev\":\"race\",\"t\":%s,\"pid\":%s,\"tid\":%s,\"key\":\"k\",\"count\":1}\\n' \"$(date +%s%N)\" $$ $$ >> "
    "\"$f\"; "
    "exit $1";

/* Without --log the run writes a temporary log (in a directory of its own, removed afterwards)
 * and reads it back: the scenario's race is status 3, its correct twin 0. */
static void fail_on_race_with_temporary_log(void **state)
{
    (void)state;
    char tmp[] = "/tmp/dlsync-tmpdir-XXXXXX", tmpenv[64], cupti[600], scen[512];
    assert_non_null(mkdtemp(tmp));
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    snprintf(cupti, sizeof cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    dls_build_path(scen, sizeof scen, "scenarios/scen_side_stream");
    const char *env[] = {tmpenv, cupti, "CUDA_INJECTION64_PATH=", "DLSYNC_LOG=", NULL};
    const char *racy[] = {g_bin, "run", "--fail-on-race", "--", scen, "racy", NULL};
    const char *correct[] = {g_bin, "run", "--fail-on-race", "--", scen, "correct", NULL};
    const char *clean[] = {g_bin, "run", "--fail-on-race", "--", "/bin/sh", "-c", "test \"$DLSYNC_MODE\" = check",
                           NULL};
    dls_run_result r;
    run(racy, env, &r);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "1 race reported"));
    assert_non_null(strstr(r.err, "run with --log FILE and read it with dlsync report FILE"));
    dls_run_free(&r);
    expect_status(correct, env, 0);
    expect_status(clean, env, 0);
    /* Every temporary log directory was removed. */
    assert_int_equal(rmdir(tmp), 0);
}

static void fail_on_race_with_named_log_ignores_older_runs(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-named-XXXXXX", pattern[96], old[96];
    assert_non_null(mkdtemp(dir));
    snprintf(pattern, sizeof pattern, "%s/log.%%p.jsonl", dir);
    snprintf(old, sizeof old, "%s/log.1.jsonl", dir);
    FILE *f = fopen(old, "w");
    fputs("{\"ev\":\"race\",\"t\":1,\"pid\":1,\"tid\":1,\"key\":\"old\",\"count\":1}\n", f);
    fclose(f);
    const char *clean[] = {g_bin, "run", "--fail-on-race", "--log", pattern, "/bin/true", NULL};
    const char *racy[] = {g_bin,     "run", "--fail-on-race", "--log", pattern, "--",
                          "/bin/sh", "-c",  race_script,      "sh",    "0",     NULL};
    dls_run_result r;
    expect_status(clean, NULL, 0);
    expect_status(racy, NULL, 3);
    /* The named logs stay. */
    const char *ls[] = {"/bin/sh", "-c", "ls \"$0\" | wc -l", dir, NULL};
    run(ls, NULL, &r);
    assert_true(atoi(r.out) >= 2);
    dls_run_free(&r);
    const char *rm[] = {"/bin/rm", "-rf", dir, NULL};
    run(rm, NULL, &r);
    dls_run_free(&r);
}

/* Whether the man page mentions text, written the roff way (every '-' as "\\-"). */
static int man_has(const char *man, const char *text)
{
    char roff[128];
    size_t k = 0;
    for (const char *c = text; *c && k + 3 < sizeof roff; c++) {
        if (*c == '-')
            roff[k++] = '\\';
        roff[k++] = *c;
    }
    roff[k] = '\0';
    return strstr(man, roff) != NULL;
}

static void help_matches_the_man_page(void **state)
{
    (void)state;
    const char *argv[] = {g_bin, "--help", NULL};
    dls_run_result r;
    run(argv, NULL, &r);
    assert_int_equal(r.status, 0);
    char *man = dls_read_file(DLS_SRC_DIR "/tools/dlsync.1");
    assert_non_null(man);
    /* Every option, subcommand, reachability word and exit status of --help is in the man page. */
    const char *words[] = {"--mode",
                           "--log",
                           "--log-limit",
                           "--profiles",
                           "--suppressions",
                           "--quiet",
                           "--verbose",
                           "--fail-on-race",
                           "--error-exitcode",
                           "--chrome-trace",
                           "--json",
                           "%n",
                           "NOT CHECKED",
                           "check summary",
                           "KIND:PATTERN",
                           "release-reuse",
                           "--help",
                           "dlsync run",
                           "dlsync scan",
                           "dlsync report",
                           "reachable",
                           "protected",
                           "local",
                           "hidden",
                           "internal",
                           "symtab-only",
                           "executable",
                           "CUDA_INJECTION64_PATH",
                           "LD_PRELOAD",
                           "../lib/libdlsync.so",
                           "status 3",
                           "status 4",
                           "125",
                           "126",
                           "127",
                           NULL};
    for (int i = 0; words[i]; i++) {
        if (!strstr(r.out, words[i]))
            fail_msg("--help does not mention %s", words[i]);
        if (!man_has(man, words[i]))
            fail_msg("man page does not mention %s", words[i]);
    }
    free(man);
    dls_run_free(&r);
}

/* `dlsync SUBCOMMAND --help` prints that subcommand's help, not the others'. */
static void each_subcommand_has_its_own_help(void **state)
{
    (void)state;
    const struct {
        const char *cmd, *has, *lacks;
    } cases[] = {
        {"run", "--fail-on-race", "--chrome-trace"},
        {"scan", "reachable", "--fail-on-race"},
        {"report", "--chrome-trace", "--fail-on-race"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[] = {g_bin, cases[i].cmd, "--help", NULL};
        dls_run_result r;
        run(argv, NULL, &r);
        assert_int_equal(r.status, 0);
        if (!strstr(r.out, cases[i].has) || strstr(r.out, cases[i].lacks))
            fail_msg("dlsync %s --help:\n%s", cases[i].cmd, r.out);
        dls_run_free(&r);
    }
}

static int setup(void **state)
{
    (void)state;
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    char lib[512];
    dls_build_path(lib, sizeof lib, "lib/libdlsync.so");
    return realpath(lib, g_shim) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(environment_is_prepared),
        cmocka_unit_test(existing_injection_path_is_chained),
        cmocka_unit_test(exit_status_is_the_programs),
        cmocka_unit_test(bad_command_lines_are_refused),
        cmocka_unit_test(missing_library_is_reported),
        cmocka_unit_test(fail_on_race_with_temporary_log),
        cmocka_unit_test(fail_on_race_with_named_log_ignores_older_runs),
        cmocka_unit_test(help_matches_the_man_page),
        cmocka_unit_test(each_subcommand_has_its_own_help),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
