/* Two copies of libdlsync.so in one process (issue 23): an installed one in LD_PRELOAD beside
 * the build tree's. The second in the loader's list stays inert with one warning naming both
 * paths, whichever order they come in; the first works in every mode (trace logs each exchange
 * once, check reports the race once, fix orders it), and under `dlsync run` the gate counts the
 * process as checked. */
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

static char g_bin[512], g_scen[512], g_cupti[600], g_shim[512], g_copy[128], g_dir[64], g_log[128];

static int setup(void **state)
{
    (void)state;
    dls_build_path(g_bin, sizeof g_bin, "bin/dlsync");
    dls_build_path(g_scen, sizeof g_scen, "scenarios/scen_side_stream");
    char lib[512];
    dls_build_path(lib, sizeof lib, "lib/libdlsync.so");
    if (!realpath(lib, g_shim))
        return -1;
    snprintf(g_cupti, sizeof g_cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    snprintf(g_dir, sizeof g_dir, "/tmp/dlsync-shims-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    /* the "installed" copy: another file, so the loader loads both */
    snprintf(g_copy, sizeof g_copy, "%s/libdlsync.so", g_dir);
    snprintf(g_log, sizeof g_log, "%s/log.jsonl", g_dir);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp %s %s", g_shim, g_copy);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return dls_remove_tree(g_dir);
}

/* The racy scenario with LD_PRELOAD = first:second (and the sanitizer runtime before them), in
 * `mode`; returns the log. */
static char *run_both(const char *first, const char *second, const char *mode, dls_run_result *r)
{
    char both[1200], pv[1400], preload[1500], modev[32], logv[160];
    snprintf(both, sizeof both, "%s:%s", first, second);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, both));
    snprintf(modev, sizeof modev, "DLSYNC_MODE=%s", mode);
    snprintf(logv, sizeof logv, "DLSYNC_LOG=%s", g_log);
    unlink(g_log);
    const char *argv[] = {g_scen, "racy", NULL};
    const char *env[] = {preload,
                         g_cupti,
                         modev,
                         logv,
                         "CUDA_INJECTION64_PATH=",
                         "DLSYNC_AUTO_INJECTION=",
                         "ASAN_OPTIONS=detect_leaks=0",
                         NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
    assert_int_equal(r->status, 0);
    char *log = dls_read_file(g_log);
    assert_non_null(log);
    return log;
}

/* One warning, from the second copy, naming both. */
static void assert_one_warning(const dls_run_result *r, const char *first, const char *second)
{
    char want[1200];
    snprintf(want, sizeof want,
             "dlsync: warning: a second libdlsync.so (%s) is loaded in this process beside %s, which does the work; "
             "this copy stays inert\n",
             second, first);
    if (dls_count(r->err, "dlsync: warning") != 1 || !strstr(r->err, want))
        fail_msg("want exactly\n%s\ngot\n%s", want, r->err);
}

static void the_first_copy_works_in_every_mode(void **state)
{
    (void)state;
    const char *order[2][2] = {{g_shim, g_copy}, {g_copy, g_shim}};
    for (int o = 0; o < 2; o++) {
        const char *first = order[o][0], *second = order[o][1];
        dls_run_result r;
        char *log = run_both(first, second, "trace", &r);
        assert_one_warning(&r, first, second);
        assert_int_equal(dls_count(log, "{\"ev\":\"start\""), 1);
        assert_int_equal(dls_count(log, "{\"ev\":\"export\""), 1);
        assert_int_equal(dls_count(log, "{\"ev\":\"import\""), 1);
        free(log);
        dls_run_free(&r);

        log = run_both(first, second, "check", &r);
        assert_one_warning(&r, first, second);
        assert_non_null(strstr(r.out, "verdict: stale"));
        assert_int_equal(dls_count(r.err, "dlsync: race (write-read)"), 1);
        assert_non_null(strstr(r.err, "1 race reported, 0 suppressed, 1 exchange checked; observer active"));
        assert_int_equal(dls_count(log, "{\"ev\":\"race\""), 1);
        free(log);
        dls_run_free(&r);

        log = run_both(first, second, "fix", &r);
        assert_one_warning(&r, first, second);
        assert_non_null(strstr(r.out, "verdict: correct"));
        assert_int_equal(dls_count(log, "{\"ev\":\"inject\""), 1);
        free(log);
        dls_run_free(&r);
    }
}

/* dlsync run puts its copy first; the copy already in LD_PRELOAD stays inert; the gate sees the
 * process checked, and its race. */
static void under_the_run_the_gate_still_holds(void **state)
{
    (void)state;
    char preload[200];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", g_copy);
    const char *argv[] = {g_bin, "run", "--fail-on-race", "--", g_scen, "racy", NULL};
    const char *env[] = {preload,
                         g_cupti,
                         "CUDA_INJECTION64_PATH=",
                         "DLSYNC_AUTO_INJECTION=",
                         "DLSYNC_QUIET=",
                         "ASAN_OPTIONS=detect_leaks=0,verify_asan_link_order=0",
                         NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "dlsync run: check summary: 1 process checked, 1 race reported"));
    char want[300];
    snprintf(want, sizeof want, "a second libdlsync.so (%s) is loaded", g_copy);
    assert_int_equal(dls_count(r.err, want), 1);
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_first_copy_works_in_every_mode),
        cmocka_unit_test(under_the_run_the_gate_still_holds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
