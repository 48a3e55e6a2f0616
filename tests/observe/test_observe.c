/* End-to-end tests of the CUDA observer: the real libdlsync.so preloaded into programs on the
 * CUDA simulator, with CUDA_INJECTION64_PATH unset, so the shim must register itself with the
 * driver, subscribe to CUPTI at cuInit, and report every operation exactly once
 * (DLSYNC_DEBUG_OPS=1 prints one "dlsync: op" line per phase of each; a call that makes a handle
 * is seen at its EXIT only). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dls_test.h"

static char shim[1024], preload[2048], app[1024], nocuda[1024], preload_env[2100];

static int setup(void **state)
{
    (void)state;
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(preload_env, sizeof preload_env, "LD_PRELOAD=%s", preload);
    dls_build_path(app, sizeof app, "tests/observe/observe_app");
    dls_build_path(nocuda, sizeof nocuda, "tests/observe/observe_nocuda");
    return 0;
}

/* Runs `prog` with the shim preloaded and the given extra settings (NULL-terminated). */
static void run(const char *prog, const char *const *extra, dls_run_result *res)
{
    const char *env[16] = {preload_env,    "CUDA_INJECTION64_PATH=", "CUDASIM_CUPTI_BUSY=",
                           "DLSYNC_MODE=", "DLSYNC_DEBUG_OPS=",      "DLSYNC_CUPTI="};
    int n = 6;
    for (; extra && *extra && n < 15; extra++)
        env[n++] = *extra;
    env[n] = NULL;
    const char *argv[] = {prog, NULL};
    assert_int_equal(dls_run(argv, env, res), 0);
}

static void each_operation_is_observed_exactly_once(void **state)
{
    (void)state;
    const char *extra[] = {"DLSYNC_DEBUG_OPS=1", NULL};
    dls_run_result r;
    run(app, extra, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "app done"));
    static const struct {
        const char *kind;
        int n;
        int made; /* 1: a call that makes a handle, seen at its EXIT only */
    } expect[] = {
        {"stream-create", 1, 1},
        {"memcpy", 2, 0},
        {"memset", 1, 0},
        {"launch", 1, 0},
        {"event-create", 1, 1},
        {"event-record", 1, 0},
        {"stream-wait-event", 1, 0},
        {"host-func", 1, 0},
        {"event-sync", 1, 0},
        {"event-query", 1, 0},
        {"stream-sync", 1, 0},
        {"stream-query", 1, 0},
        {"ctx-sync", 1, 0},
        {"event-destroy", 1, 0},
        {"stream-destroy", 1, 0},
        {"free", 2, 0},
    };
    int total = 0, entered = 0;
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "dlsync: op exit %s ", expect[i].kind);
        if (dls_count(r.err, needle) != expect[i].n)
            fail_msg("%s: %d exit records, expected %d\n%s", expect[i].kind, dls_count(r.err, needle), expect[i].n,
                     r.err);
        snprintf(needle, sizeof needle, "dlsync: op enter %s ", expect[i].kind);
        int enters = expect[i].made ? 0 : expect[i].n;
        if (dls_count(r.err, needle) != enters)
            fail_msg("%s: %d enter records, expected %d\n%s", expect[i].kind, dls_count(r.err, needle), enters, r.err);
        total += expect[i].n;
        entered += enters;
    }
    assert_int_equal(dls_count(r.err, "dlsync: op exit "), total);
    assert_int_equal(dls_count(r.err, "dlsync: op enter "), entered);
    /* The runtime call names the operation; the driver call beneath it is not a second one. */
    assert_int_equal(dls_count(r.err, "api=cudaMemcpyAsync"), 2);
    assert_int_equal(dls_count(r.err, "api=cuMemcpyHtoDAsync"), 0);
    /* The kernel's layout was read from the driver: one pointer word, nothing conservative. */
    assert_int_equal(dls_count(r.err, "launch api=cudaLaunchKernel"), 2);
    assert_int_equal(dls_count(r.err, "words=1 conservative=0 result=0 name=scale"), 2);
    assert_int_equal(dls_count(r.err, "conservative=1"), 0);
    /* Eight calls on the non-blocking stream at both phases, and its creation at EXIT. */
    assert_int_equal(dls_count(r.err, "/non-blocking"), 2 * 8 + 1);
    assert_int_equal(dls_count(r.err, "stream-wait-event api=cudaStreamWaitEvent_v3020 stream=1/legacy"), 2);
    assert_int_equal(dls_count(r.err, "dlsync: warning"), 0);
    dls_run_free(&r);
}

static void without_the_debug_variable_nothing_is_printed(void **state)
{
    (void)state;
    dls_run_result r;
    run(app, NULL, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "app done"));
    assert_int_equal(dls_count(r.err, "dlsync:"), 0);
    dls_run_free(&r);
}

static void another_subscriber_means_one_warning_and_no_observer(void **state)
{
    (void)state;
    const char *extra[] = {"DLSYNC_DEBUG_OPS=1", "CUDASIM_CUPTI_BUSY=CUPTI for othertool", NULL};
    dls_run_result r;
    run(app, extra, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "app done"));
    assert_int_equal(dls_count(r.err, "dlsync: warning"), 1);
    assert_int_equal(dls_count(r.err, "CUPTI subscription held by CUPTI for othertool"), 1);
    assert_int_equal(dls_count(r.err, "dlsync: op"), 0);
    dls_run_free(&r);
}

static void a_process_without_cuda_loads_nothing(void **state)
{
    (void)state;
    dls_run_result r;
    run(nocuda, NULL, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "loaded: none\n"));
    /* The shim registered itself for a cuInit that never came. */
    char line[1100];
    snprintf(line, sizeof line, "injection: %s\n", shim);
    assert_non_null(strstr(r.out, line));
    assert_int_equal(dls_count(r.err, "dlsync:"), 0);
    dls_run_free(&r);
}

/* Another tool named in CUDA_INJECTION64_PATH (Nsight Systems) is chained: the shim takes the
 * variable and remembers the tool, whose InitializeInjection it runs first at cuInit
 * (test_profilers shows both observing). Nothing is loaded or said in a process without CUDA. */
static void another_injection_tool_is_chained(void **state)
{
    (void)state;
    const char *extra[] = {"CUDA_INJECTION64_PATH=/opt/tool/libinject.so", NULL};
    dls_run_result r;
    run(nocuda, extra, &r);
    char want[1200];
    snprintf(want, sizeof want, "injection: %s\n", shim);
    assert_non_null(strstr(r.out, want));
    assert_non_null(strstr(r.out, "chained: /opt/tool/libinject.so\n"));
    assert_non_null(strstr(r.out, "loaded: none\n"));
    assert_string_equal(r.err, "");
    dls_run_free(&r);
}

/* trace records exchanges only: it does not even try to subscribe (a busy CUPTI would be warned
 * about by check), unless DLSYNC_DEBUG_OPS asks to see the operations. */
static void trace_mode_does_not_observe(void **state)
{
    (void)state;
    const char *busy_check[] = {"DLSYNC_MODE=check", "CUDASIM_CUPTI_BUSY=othertool", NULL};
    const char *busy_trace[] = {"DLSYNC_MODE=trace", "CUDASIM_CUPTI_BUSY=othertool", NULL};
    const char *debug_trace[] = {"DLSYNC_MODE=trace", "DLSYNC_DEBUG_OPS=1", NULL};
    dls_run_result r;
    run(app, busy_check, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(dls_count(r.err, "dlsync: warning: CUPTI subscription held by othertool"), 1);
    assert_int_equal(dls_count(r.err, "dlsync: check summary: NOT CHECKED: no CUDA observer (CUPTI subscription held "
                                      "by othertool"),
                     1);
    dls_run_free(&r);
    run(app, busy_trace, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "app done"));
    assert_int_equal(dls_count(r.err, "dlsync:"), 0);
    dls_run_free(&r);
    run(app, debug_trace, &r);
    assert_int_equal(r.status, 0);
    assert_true(dls_count(r.err, "dlsync: op") > 0);
    dls_run_free(&r);
}

static void mode_off_registers_nothing(void **state)
{
    (void)state;
    const char *extra[] = {"DLSYNC_MODE=off", "DLSYNC_DEBUG_OPS=1", NULL};
    dls_run_result r;
    run(nocuda, extra, &r);
    assert_non_null(strstr(r.out, "injection: unset\n"));
    dls_run_free(&r);
    run(app, extra, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(dls_count(r.err, "dlsync: op"), 0);
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_operation_is_observed_exactly_once),
        cmocka_unit_test(without_the_debug_variable_nothing_is_printed),
        cmocka_unit_test(another_subscriber_means_one_warning_and_no_observer),
        cmocka_unit_test(a_process_without_cuda_loads_nothing),
        cmocka_unit_test(another_injection_tool_is_chained),
        cmocka_unit_test(trace_mode_does_not_observe),
        cmocka_unit_test(mode_off_registers_nothing),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
