/* Unit tests of the log path expansion (shim/report/log.c): %p, %r, %% and overflow, the rank
 * variables' order, and end to end: a preloaded scenario writes its log to the expanded path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <unistd.h>

#include "dls_test.h"
#include "report/log.h"

static void pid_rank_and_percent_are_expanded(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(dls_log_expand_path("/tmp/run.%p.%r.jsonl", 4242, "3", buf, sizeof buf), 0);
    assert_string_equal(buf, "/tmp/run.4242.3.jsonl");
    assert_int_equal(dls_log_expand_path("a%%p-%r", 1, NULL, buf, sizeof buf), 0);
    assert_string_equal(buf, "a%p-norank"); /* no launcher rank: a name that says so */
    assert_int_equal(dls_log_expand_path("plain%x%", 1, NULL, buf, sizeof buf), 0);
    assert_string_equal(buf, "plain%x%");
}

static void a_path_that_does_not_fit_is_refused(void **state)
{
    (void)state;
    char buf[8];
    assert_int_equal(dls_log_expand_path("1234567", 1, NULL, buf, sizeof buf), 0);
    assert_int_equal(dls_log_expand_path("12345678", 1, NULL, buf, sizeof buf), -1);
    assert_int_equal(dls_log_expand_path("x%p", 123456789, NULL, buf, sizeof buf), -1);
}

static void rank_variables_are_read_in_launcher_order(void **state)
{
    (void)state;
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"};
    for (int i = 0; i < 4; i++)
        unsetenv(vars[i]);
    assert_null(dls_log_rank());
    setenv("RANK", "9", 1);
    assert_string_equal(dls_log_rank(), "9");
    setenv("SLURM_PROCID", "5", 1);
    assert_string_equal(dls_log_rank(), "5");
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    assert_string_equal(dls_log_rank(), "2");
    setenv("OMPI_COMM_WORLD_RANK", "", 1);
    assert_string_equal(dls_log_rank(), "5");
    for (int i = 0; i < 4; i++)
        unsetenv(vars[i]);
}

/* A real process under the shim: its exchanges land in log.<its pid>.<rank>.jsonl. */
static void a_preloaded_process_logs_to_the_expanded_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlsync-logpath-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char prog[512], shim[512], pv[1100], preload[1200], log[600], cupti[600];
    dls_build_path(prog, sizeof prog, "scenarios/scen_side_stream");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, shim));
    snprintf(log, sizeof log, "DLSYNC_LOG=%s/log.%%p.%%r.jsonl", dir);
    snprintf(cupti, sizeof cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    const char *argv[] = {prog, "correct", NULL};
    const char *env[] = {preload,
                         log,
                         cupti,
                         "RANK=7",
                         "OMPI_COMM_WORLD_RANK=",
                         "PMI_RANK=",
                         "SLURM_PROCID=",
                         "CUDA_INJECTION64_PATH=",
                         "ASAN_OPTIONS=detect_leaks=0",
                         NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0, pid = 0;
    char path[700] = "";
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        files++;
        assert_int_equal(sscanf(e->d_name, "log.%d.7.jsonl", &pid), 1);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    assert_int_equal(files, 1);
    assert_true(pid > 0);
    char *text = dls_read_file(path);
    assert_non_null(text);
    char want[64];
    snprintf(want, sizeof want, "\"pid\":%d", pid);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "\"ev\":\"export\""));
    free(text);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pid_rank_and_percent_are_expanded),
        cmocka_unit_test(a_path_that_does_not_fit_is_refused),
        cmocka_unit_test(rank_variables_are_read_in_launcher_order),
        cmocka_unit_test(a_preloaded_process_logs_to_the_expanded_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
