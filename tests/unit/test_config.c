/* Unit tests of shim/common/config.c: DLSYNC_* parsing, defaults, and bad values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/config.h"

static int reset(void **state)
{
    (void)state;
    unsetenv("DLSYNC_MODE");
    unsetenv("DLSYNC_VERBOSE");
    unsetenv("DLSYNC_LOG");
    unsetenv("DLSYNC_CUPTI");
    unsetenv("DLSYNC_PROFILES");
    unsetenv("DLSYNC_STACK");
    const char *more[] = {"DLSYNC_QUIET", "DLSYNC_LOG_LIMIT", "DLSYNC_SUPPRESSIONS", "DLSYNC_RUN_ID",
                          "DLSYNC_RUN_MANIFEST"};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        unsetenv(more[i]);
    dls_config_reset_for_tests();
    return 0;
}

static void defaults_are_fix_and_quiet(void **state)
{
    (void)state;
    const dls_config *c = dls_config_get();
    assert_int_equal(c->mode, DLS_MODE_FIX);
    assert_int_equal(c->verbose, 0);
    assert_null(c->log_path);
    assert_null(c->cupti_path);
    assert_null(c->profiles_path);
}

static void each_mode_name_is_parsed(void **state)
{
    (void)state;
    const char *names[] = {"off", "trace", "check", "fix"};
    for (int i = 0; i < 4; i++) {
        setenv("DLSYNC_MODE", names[i], 1);
        dls_config_reset_for_tests();
        assert_int_equal(dls_config_get()->mode, (dls_mode)i);
        assert_string_equal(dls_mode_name((dls_mode)i), names[i]);
    }
}

static void bad_mode_falls_back_to_fix_and_says_why(void **state)
{
    (void)state;
    setenv("DLSYNC_MODE", "fast", 1);
    setenv("DLSYNC_VERBOSE", "yes", 1);
    const dls_config *c = dls_config_get();
    assert_int_equal(c->mode, DLS_MODE_FIX);
    assert_int_equal(c->verbose, 0);
    /* The start-up prints these as warnings. */
    assert_int_equal(c->nproblems, 2);
    assert_string_equal(c->problems[0], "DLSYNC_MODE=fast is not one of off, trace, check, fix; using fix");
    assert_string_equal(c->problems[1], "DLSYNC_VERBOSE=yes is not 0 or 1; using 0");
}

/* DLSYNC_STACK: both by default, native and python by name, a bad value warns and means both. */
static void stack_kinds_are_parsed(void **state)
{
    (void)state;
    assert_int_equal(dls_config_get()->stack, DLS_STACK_BOTH);
    const char *names[] = {"both", "native", "python"};
    const dls_stack_kind kinds[] = {DLS_STACK_BOTH, DLS_STACK_NATIVE, DLS_STACK_PYTHON};
    for (int i = 0; i < 3; i++) {
        setenv("DLSYNC_STACK", names[i], 1);
        dls_config_reset_for_tests();
        assert_int_equal(dls_config_get()->stack, kinds[i]);
        assert_int_equal(dls_config_get()->nproblems, 0);
    }
    setenv("DLSYNC_STACK", "gdb", 1);
    dls_config_reset_for_tests();
    assert_int_equal(dls_config_get()->stack, DLS_STACK_BOTH);
    assert_int_equal(dls_config_get()->nproblems, 1);
    assert_string_equal(dls_config_get()->problems[0], "DLSYNC_STACK=gdb is not native, python or both; using both");
}

static void an_inert_process_is_off_whatever_the_environment_says(void **state)
{
    (void)state;
    setenv("DLSYNC_MODE", "check", 1);
    dls_config_make_inert();
    assert_int_equal(dls_config_get()->mode, DLS_MODE_OFF);
    assert_int_equal(dls_config_get()->inert, 1);
    dls_config_reset_for_tests();
    assert_int_equal(dls_config_get()->mode, DLS_MODE_CHECK);
}

/* The command and the shim share the mode names (common/names.h). */
static void mode_names_round_trip(void **state)
{
    (void)state;
    for (int i = DLS_MODE_OFF; i <= DLS_MODE_FIX; i++)
        assert_int_equal(dls_mode_from_name(dls_mode_name((dls_mode)i)), i);
    assert_int_equal(dls_mode_from_name("fast"), -1);
    assert_int_equal(dls_mode_from_name(NULL), -1);
}

static void values_are_read_once(void **state)
{
    (void)state;
    setenv("DLSYNC_LOG", "/tmp/a.jsonl", 1);
    setenv("DLSYNC_VERBOSE", "1", 1);
    const dls_config *c = dls_config_get();
    assert_string_equal(c->log_path, "/tmp/a.jsonl");
    assert_int_equal(c->verbose, 1);
    setenv("DLSYNC_VERBOSE", "0", 1);
    assert_int_equal(dls_config_get()->verbose, 1);
}

static void empty_values_count_as_unset(void **state)
{
    (void)state;
    setenv("DLSYNC_LOG", "", 1);
    setenv("DLSYNC_MODE", "", 1);
    assert_null(dls_config_get()->log_path);
    assert_int_equal(dls_config_get()->mode, DLS_MODE_FIX);
}

/* The options of the run's gate and of bounded logs (issue 23). */
static void gate_and_log_options(void **state)
{
    (void)state;
    const dls_config *c = dls_config_get();
    assert_int_equal(c->quiet, 0);
    assert_true(c->log_limit == 64ull << 20);
    assert_null(c->suppressions_path);
    assert_null(c->run_id);
    assert_null(c->run_manifest);
    setenv("DLSYNC_QUIET", "1", 1);
    setenv("DLSYNC_LOG_LIMIT", "3k", 1);
    setenv("DLSYNC_SUPPRESSIONS", "/etc/dlsync.supp", 1);
    setenv("DLSYNC_RUN_ID", "0123abcd-run.1", 1);
    setenv("DLSYNC_RUN_MANIFEST", "/tmp/run/manifest.jsonl", 1);
    dls_config_reset_for_tests();
    c = dls_config_get();
    assert_int_equal(c->quiet, 1);
    assert_true(c->log_limit == 3072);
    assert_string_equal(c->suppressions_path, "/etc/dlsync.supp");
    assert_string_equal(c->run_id, "0123abcd-run.1");
    assert_string_equal(c->run_manifest, "/tmp/run/manifest.jsonl");
    assert_int_equal(c->nproblems, 0);
    setenv("DLSYNC_LOG_LIMIT", "0", 1); /* no limit */
    dls_config_reset_for_tests();
    assert_true(dls_config_get()->log_limit == 0);
}

static void bad_gate_and_log_values_fall_back(void **state)
{
    (void)state;
    setenv("DLSYNC_QUIET", "yes", 1);
    setenv("DLSYNC_LOG_LIMIT", "12q", 1);
    setenv("DLSYNC_RUN_ID", "has space", 1);
    setenv("DLSYNC_RUN_MANIFEST", "relative/manifest", 1);
    const dls_config *c = dls_config_get();
    assert_int_equal(c->quiet, 0);
    assert_true(c->log_limit == 64ull << 20);
    assert_null(c->run_id);
    assert_null(c->run_manifest);
    assert_int_equal(c->nproblems, 4);
    assert_string_equal(c->problems[0], "DLSYNC_QUIET=yes is not 0 or 1; using 0");
    assert_string_equal(c->problems[1], "DLSYNC_LOG_LIMIT=12q is not a size (digits with an optional k, m or g; 0 for "
                                        "none); using 64m");
    assert_non_null(strstr(c->problems[2], "DLSYNC_RUN_ID=has space is not 1 to 64 letters"));
    assert_non_null(strstr(c->problems[3], "DLSYNC_RUN_MANIFEST=relative/manifest is not an absolute path"));
    uint64_t v;
    assert_int_equal(dls_parse_size("18446744073709551615g", &v), -1); /* overflows */
    assert_int_equal(dls_parse_size("", &v), -1);
    assert_int_equal(dls_parse_size("2G", &v), 0);
    assert_true(v == 2ull << 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(defaults_are_fix_and_quiet, reset),
        cmocka_unit_test_setup(each_mode_name_is_parsed, reset),
        cmocka_unit_test_setup(bad_mode_falls_back_to_fix_and_says_why, reset),
        cmocka_unit_test_setup(an_inert_process_is_off_whatever_the_environment_says, reset),
        cmocka_unit_test_setup(stack_kinds_are_parsed, reset),
        cmocka_unit_test(mode_names_round_trip),
        cmocka_unit_test_setup(values_are_read_once, reset),
        cmocka_unit_test_setup(empty_values_count_as_unset, reset),
        cmocka_unit_test_setup(gate_and_log_options, reset),
        cmocka_unit_test_setup(bad_gate_and_log_values_fall_back, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
