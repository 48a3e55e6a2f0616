/* Tests of the shim's NVTX marks (shim/report/nvtx.c): a program calling them, with a fake NVTX
 * tool injected through NVTX_INJECTION64_PATH, must reach the tool in the "dlsync" domain with
 * the right messages and nesting; without a tool the same program runs and nothing is seen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

typedef struct {
    char out[64];
    char outenv[96];
    char driver[512];
    char tool[512];
    char toolenv[600];
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    snprintf(fx->out, sizeof fx->out, "/tmp/dlsync-nvtx-XXXXXX");
    int fd = mkstemp(fx->out);
    if (fd < 0)
        return -1;
    close(fd);
    unlink(fx->out);
    snprintf(fx->outenv, sizeof fx->outenv, "DLS_FAKE_NVTX_OUT=%s", fx->out);
    dls_build_path(fx->driver, sizeof fx->driver, "tests/tool/nvtx_driver");
    dls_build_path(fx->tool, sizeof fx->tool, "tests/tool/libfake_nvtx.so");
    snprintf(fx->toolenv, sizeof fx->toolenv, "NVTX_INJECTION64_PATH=%s", fx->tool);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    unlink(fx->out);
    free(fx);
    return 0;
}

static void marks_reach_an_injected_tool(void **state)
{
    fixture *fx = *state;
    const char *argv[] = {fx->driver, NULL};
    const char *env[] = {fx->toolenv, fx->outenv, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "nvtx driver done"));
    dls_run_free(&r);
    char *seen = dls_read_file(fx->out);
    assert_non_null(seen);
    /* One domain, created once, named "dlsync"; the range encloses the marker. */
    assert_int_equal(dls_count(seen, "domain "), 1);
    assert_non_null(strstr(seen, "domain dlsync\n"));
    const char *push = strstr(seen, "push dlsync export xid 1\n");
    const char *mark = strstr(seen, "mark dlsync inject event-wait xid 1\n");
    const char *pop = strstr(seen, "pop dlsync\n");
    assert_non_null(push);
    assert_non_null(mark);
    assert_non_null(pop);
    assert_true(push < mark && mark < pop);
    assert_non_null(strstr(seen, "mark dlsync import xid 1\n"));
    assert_int_equal(dls_count(seen, "\n"), 5);
    free(seen);
}

/* The real shim preloaded into a scenario program that exchanges one tensor: the wrapped calls
 * appear as ranges named after the wrapped symbols, each exchange as a marker inside its range,
 * and (in fix mode) the injected wait as a marker. */
static void the_shim_marks_exchanges_and_injections(void **state)
{
    fixture *fx = *state;
    char prog[512], shim[512], preload[1200], cupti[600];
    dls_build_path(prog, sizeof prog, "scenarios/scen_side_stream");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    char pv[1100];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", dls_preload_value(pv, sizeof pv, shim));
    snprintf(cupti, sizeof cupti, "DLSYNC_CUPTI=%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    const char *argv[] = {prog, "racy", NULL};
    const char *env[] = {fx->toolenv,
                         fx->outenv,
                         preload,
                         cupti,
                         "DLSYNC_MODE=fix",
                         "CUDA_INJECTION64_PATH=",
                         "ASAN_OPTIONS=detect_leaks=0",
                         NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "verdict: correct"));
    dls_run_free(&r);
    char *seen = dls_read_file(fx->out);
    assert_non_null(seen);
    const char *push = strstr(seen, "push dlsync MXNDArrayToDLPack\n");
    const char *exp = strstr(seen, "mark dlsync export xid 1\n");
    const char *pop = push ? strstr(push, "pop dlsync\n") : NULL;
    assert_non_null(push);
    assert_non_null(exp);
    assert_non_null(pop);
    assert_true(push < exp && exp < pop);
    const char *ipush = strstr(seen, "push dlsync TVMArrayFromDLPack\n");
    assert_non_null(ipush);
    assert_true(strstr(ipush, "mark dlsync import xid 1\n") != NULL);
    assert_non_null(strstr(seen, "mark dlsync inject event-wait xid 1\n"));
    assert_int_equal(dls_count(seen, "push "), dls_count(seen, "pop "));
    free(seen);
}

static void without_a_tool_nothing_happens(void **state)
{
    fixture *fx = *state;
    const char *argv[] = {fx->driver, NULL};
    const char *env[] = {"NVTX_INJECTION64_PATH=", fx->outenv, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "nvtx driver done"));
    assert_string_equal(r.err, "");
    dls_run_free(&r);
    assert_int_equal(access(fx->out, F_OK), -1);
}

static void a_missing_tool_is_harmless(void **state)
{
    fixture *fx = *state;
    const char *argv[] = {fx->driver, NULL};
    const char *env[] = {"NVTX_INJECTION64_PATH=/nonexistent/libtool.so", fx->outenv, NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "nvtx driver done"));
    dls_run_free(&r);
    assert_int_equal(access(fx->out, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(marks_reach_an_injected_tool, setup, teardown),
        cmocka_unit_test_setup_teardown(the_shim_marks_exchanges_and_injections, setup, teardown),
        cmocka_unit_test_setup_teardown(without_a_tool_nothing_happens, setup, teardown),
        cmocka_unit_test_setup_teardown(a_missing_tool_is_harmless, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
