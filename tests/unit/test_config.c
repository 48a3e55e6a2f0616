/* Unit tests of shim/common/config.c: DLSYNC_* parsing, defaults, and bad values; every row of
 * options.def read by its kind's reader; the variables read where they are used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/config.h"

/* Every variable of options.def unset, the configuration forgotten. */
static int reset(void **state)
{
    (void)state;
    static const char *const names[] = {
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) DLS_VAR(NAME),
#define DLS_PASSED(NAME, reader, values, shown, meaning) DLS_VAR(NAME),
#include "common/options.def"
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        unsetenv(names[i]);
    dls_config_reset_for_tests();
    return 0;
}

/* DLSYNC_KERNEL_PAIRS: 0 by default, 1 when asked, a bad value warned about and taken for 0. */
static void kernel_pairs_are_listed_only_on_request(void **state)
{
    (void)state;
    assert_int_equal(dls_config_get()->kernel_pairs, 0);
    setenv("DLSYNC_KERNEL_PAIRS", "1", 1);
    dls_config_reset_for_tests();
    assert_int_equal(dls_config_get()->kernel_pairs, 1);
    assert_int_equal(dls_config_get()->nproblems, 0);
    setenv("DLSYNC_KERNEL_PAIRS", "all", 1);
    dls_config_reset_for_tests();
    const dls_config *c = dls_config_get();
    assert_int_equal(c->kernel_pairs, 0);
    assert_int_equal(c->nproblems, 1);
    assert_string_equal(c->problems[0], "DLSYNC_KERNEL_PAIRS=all is not 0 or 1; using 0");
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

/* A good and a bad value of each kind of options.def (NULL: it has none), and whether a field
 * holds a value. */
#define GOOD_flag "1"
#define BAD_flag "2"
#define HOLDS_flag(field, v) ((field) == (v))
#define WANT_flag 1
#define GOOD_text "/etc/some file"
#define BAD_text NULL
#define HOLDS_text(field, v) same_text(field, v)
#define WANT_text GOOD_text
#define GOOD_absolute "/run/x"
#define BAD_absolute "run/x"
#define HOLDS_absolute(field, v) same_text(field, v)
#define WANT_absolute GOOD_absolute
#define GOOD_size "2k"
#define BAD_size "2q"
#define HOLDS_size(field, v) ((field) == (v))
#define WANT_size 2048u
#define GOOD_mode "check"
#define BAD_mode "fast"
#define HOLDS_mode(field, v) ((field) == (v))
#define WANT_mode DLS_MODE_CHECK
#define GOOD_stack "python"
#define BAD_stack "gdb"
#define HOLDS_stack(field, v) ((field) == (v))
#define WANT_stack DLS_STACK_PYTHON
#define GOOD_run_id "run-1.a_b"
#define BAD_run_id "run 1"
#define HOLDS_run_id(field, v) same_text(field, v)
#define WANT_run_id GOOD_run_id

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The configuration read with variable `name` set to `value` alone. */
static const dls_config *read_with(const char *name, const char *value)
{
    reset(NULL);
    setenv(name, value, 1);
    dls_config_reset_for_tests();
    return dls_config_get();
}

/* Each setting is read into its field by its kind's reader; a bad value leaves the default and
 * is the one problem, named and ending with the row's fallback. */
static void every_setting_is_read_by_its_kind(void **state)
{
    (void)state;
    const dls_config *c;
    char want[200];
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning)                      \
    c = read_with(DLS_VAR(NAME), GOOD_##kind);                                                     \
    if (!HOLDS_##kind(c->field, WANT_##kind) || c->nproblems != 0)                                 \
        fail_msg("%s=%s was not read", DLS_VAR(NAME), GOOD_##kind);                                \
    if (BAD_##kind) {                                                                              \
        c = read_with(DLS_VAR(NAME), BAD_##kind ? BAD_##kind : "");                                \
        snprintf(want, sizeof want, "%s=%s is not ", DLS_VAR(NAME), BAD_##kind ? BAD_##kind : ""); \
        assert_true(HOLDS_##kind(c->field, init));                                                 \
        assert_int_equal(c->nproblems, 1);                                                         \
        assert_memory_equal(c->problems[0], want, strlen(want));                                   \
        assert_string_equal(c->problems[0] + strlen(c->problems[0]) - strlen(fallback), fallback); \
        assert_non_null(strstr(c->problems[0], "; " fallback));                                    \
    }
#include "common/options.def"
}

/* With every setting bad at once, each is reported, in the order of the rows. */
static void all_bad_values_are_reported_in_row_order(void **state)
{
    (void)state;
    const char *names[DLS_CONFIG_PROBLEMS];
    unsigned n = 0;
#define DLS_OPTION(NAME, kind, field, init, fallback, values, shown, meaning) \
    if (BAD_##kind) {                                                         \
        setenv(DLS_VAR(NAME), BAD_##kind ? BAD_##kind : "", 1);               \
        names[n++] = DLS_VAR(NAME);                                           \
    }
#include "common/options.def"
    const dls_config *c = dls_config_get();
    assert_true(n >= 8);
    assert_int_equal(c->nproblems, n);
    for (unsigned i = 0; i < n; i++) {
        assert_memory_equal(c->problems[i], names[i], strlen(names[i]));
        assert_int_equal(c->problems[i][strlen(names[i])], '=');
    }
}

/* The variables dlsync sets for itself are read each time they are asked for. */
static void passed_variables_are_read_when_asked(void **state)
{
    (void)state;
    assert_null(dls_config_passed(DLS_PASSED_CHAINED_INJECTION));
    setenv("DLSYNC_CHAINED_INJECTION", "/opt/nsys/libinject.so", 1);
    assert_string_equal(dls_config_passed(DLS_PASSED_CHAINED_INJECTION), "/opt/nsys/libinject.so");
    setenv("DLSYNC_CHAINED_INJECTION", "/opt/other.so", 1);
    assert_string_equal(dls_config_passed(DLS_PASSED_CHAINED_INJECTION), "/opt/other.so");
    setenv("DLSYNC_AUTO_INJECTION", "", 1);
    assert_null(dls_config_passed(DLS_PASSED_AUTO_INJECTION));
    setenv("DLSYNC_AUTO_INJECTION", "/lib/libdlsync.so", 1);
    assert_string_equal(dls_config_passed(DLS_PASSED_AUTO_INJECTION), "/lib/libdlsync.so");
    assert_null(dls_config_passed((dls_passed)-1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(defaults_are_fix_and_quiet, reset),
        cmocka_unit_test_setup(kernel_pairs_are_listed_only_on_request, reset),
        cmocka_unit_test_setup(each_mode_name_is_parsed, reset),
        cmocka_unit_test_setup(bad_mode_falls_back_to_fix_and_says_why, reset),
        cmocka_unit_test_setup(an_inert_process_is_off_whatever_the_environment_says, reset),
        cmocka_unit_test_setup(stack_kinds_are_parsed, reset),
        cmocka_unit_test(mode_names_round_trip),
        cmocka_unit_test_setup(values_are_read_once, reset),
        cmocka_unit_test_setup(empty_values_count_as_unset, reset),
        cmocka_unit_test_setup(gate_and_log_options, reset),
        cmocka_unit_test_setup(bad_gate_and_log_values_fall_back, reset),
        cmocka_unit_test_setup(every_setting_is_read_by_its_kind, reset),
        cmocka_unit_test_setup(all_bad_values_are_reported_in_row_order, reset),
        cmocka_unit_test_setup(passed_variables_are_read_when_asked, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
