/* Dry run of the GPU check's framework step (tests/gpu/frameworks.py) where there is no GPU: its
 * plan, its rows on the simulator with the fake frameworks standing in for torch, CuPy and JAX
 * (plain, check and fix in child processes of a Python driver, the shim preloaded into Python),
 * and its timeouts. The rows asserted here are the ones a GPU run prints, so a broken driver,
 * a broken row format or a shim that no longer orders a ctypes-driven exchange fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dls_test.h"

static char g_script[1024], g_build[1024], g_shim[1024], g_base[1100];

/* Runs frameworks.py with the given extra arguments (NULL-terminated) and returns its result. */
static void driver(const char *const *extra, dls_run_result *r)
{
    const char *argv[24] = {"python3", g_script, "--shim", g_shim};
    int n = 4;
    for (; *extra && n < 23; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    const char *env[] = {"ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0", "DLSYNC_LOG=", "DLSYNC_MODE=", g_base,
                         NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
}

/* The row of `path` in the driver's output, copied into buf (without the newline). */
static const char *row(const char *out, const char *path, char *buf, size_t n)
{
    char head[64];
    snprintf(head, sizeof head, "fakemx->faketvm %s ", path);
    const char *p = strstr(out, head);
    assert_non_null(p);
    const char *eol = strchr(p, '\n');
    snprintf(buf, n, "%.*s", (int)(eol ? eol - p : (long)strlen(p)), p);
    return buf;
}

static void plan_lists_every_case(void **state)
{
    (void)state;
    dls_run_result r;
    const char *argv[] = {"python3", g_script, "--plan", NULL};
    const char *env[] = {NULL};
    assert_int_equal(dls_run(argv, env, &r), 0);
    assert_int_equal(r.status, 0);
    /* 6 ordered pairs of torch, CuPy and JAX x 4 paths. */
    assert_int_equal(dls_count(r.out, "\nskip  "), 24);
    assert_non_null(strstr(r.out, "skip  jax->torch legacy\n"));
    assert_non_null(strstr(r.out, "skip  cupy->jax right\n"));
    assert_non_null(strstr(r.out, "\n0 passed, 0 failed, 24 skipped\n"));
    dls_run_free(&r);
}

static void dry_run_rows(void **state)
{
    (void)state;
    dls_run_result r;
    const char *extra[] = {"--fake", g_build, "--reps", "3", "--jobs", "4", NULL};
    driver(extra, &r);
    if (r.status != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.err);
    assert_int_equal(r.status, 0);
    char b[512];
    unsigned stale, races, correct, injected;
    char outcome[64];
    const char *racy[] = {"legacy", "nosync", "wrong"};
    for (int i = 0; i < 3; i++) {
        row(r.out, racy[i], b, sizeof b);
        assert_int_equal(sscanf(b + strlen("fakemx->faketvm ") + strlen(racy[i]), " %u/3 %u %u/3 %u %63s", &stale,
                                &races, &correct, &injected, outcome),
                         5);
        assert_int_equal(stale, 3);   /* the race shows without the shim */
        assert_true(races >= 1);      /* check reports it */
        assert_int_equal(correct, 3); /* fix orders every exchange */
        assert_true(injected >= 1);
        assert_string_equal(outcome, "PASS");
    }
    row(r.out, "right", b, sizeof b);
    assert_int_equal(sscanf(b + strlen("fakemx->faketvm right"), " %u/3 %u %u/3 %u %63s", &stale, &races, &correct,
                            &injected, outcome),
                     5);
    assert_int_equal(stale + races + injected, 0); /* the twin: nothing to report, nothing to add */
    assert_int_equal(correct, 3);
    assert_string_equal(outcome, "PASS");
    assert_non_null(strstr(r.out, "note: fakemx->faketvm legacy: MXNDArrayToDLPack -> TVMArrayFromDLPack"));
    assert_non_null(strstr(r.out, "\n4 passed, 0 failed, 0 skipped\n"));
    dls_run_free(&r);
}

static void hung_children_time_out(void **state)
{
    (void)state;
    dls_run_result r;
    const char *extra[] = {"--fake", g_build, "--fake-hang", "--timeout", "2", "--reps", "1", "--jobs", "12", NULL};
    driver(extra, &r);
    assert_int_equal(r.status, 1);
    char b[512];
    assert_non_null(strstr(row(r.out, "right", b, sizeof b), "FAIL (plain: timeout; check: timeout; fix: timeout)"));
    assert_non_null(strstr(r.out, "\n0 passed, 4 failed, 0 skipped\n"));
    dls_run_free(&r);
}

int main(void)
{
    snprintf(g_script, sizeof g_script, "%s/tests/gpu/frameworks.py", DLS_SRC_DIR);
    dls_build_path(g_build, sizeof g_build, "");
    dls_build_path(g_shim, sizeof g_shim, "lib/libdlsync.so");
    snprintf(g_base, sizeof g_base, "FRAMEWORKS_BASE_PRELOAD=%s", DLS_SAN_RUNTIME);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_lists_every_case),
        cmocka_unit_test(dry_run_rows),
        cmocka_unit_test(hung_children_time_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
