/* Dry run of the GPU check's Python drivers where there is no GPU, on the simulator with the fake
 * frameworks standing in for torch, CuPy and JAX:
 *   - the framework step (tests/gpu/frameworks.py): its plan, its rows (plain, check and fix in
 *     child processes of a Python driver, the shim preloaded into Python), its timeouts and its
 *     time budget;
 *   - the training step (tests/gpu/train_step.py): its plan, its rows and ratios, the skip when a
 *     framework is missing;
 *   - the wheel step (tests/gpu/run-wheel.sh): the wheel built with `pip wheel`, installed
 *     offline, its pytest plugin on the hand-off twins (tests/gpu/handoff), then both drivers
 *     with the wheel's `dlsync run` starting the shim, as the GPU check runs them.
 * The rows asserted here are the ones a GPU run prints, so a broken driver, a broken row format
 * or a shim that no longer orders a ctypes-driven exchange fails here. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dls_test.h"

static char g_script[1024], g_train[1024], g_build[1024], g_shim[1024], g_base[1100];

/* Runs a driver script with `how` (e.g. "--shim" SHIM) and the extra arguments (both
 * NULL-terminated), with `more` added to the environment (or NULL), and returns its result. */
static void run_script(const char *script, const char *const *how, const char *const *extra, const char *more,
                       dls_run_result *r)
{
    const char *argv[32] = {"python3", script};
    int n = 2;
    for (; *how && n < 16; how++)
        argv[n++] = *how;
    for (; *extra && n < 31; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    const char *env[] = {"ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0",
                         "DLSYNC_LOG=",
                         "DLSYNC_MODE=",
                         g_base,
                         more ? more : "DLS_TEST_UNUSED=",
                         NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
    if (r->status > 1)
        fprintf(stderr, "%s\n%s\n", r->out, r->err);
}

/* Runs frameworks.py with the shim preloaded and the given extra arguments. */
static void driver(const char *const *extra, dls_run_result *r)
{
    const char *how[] = {"--shim", g_shim, NULL};
    run_script(g_script, how, extra, NULL, r);
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

static void budget_cuts_rows_short(void **state)
{
    (void)state;
    dls_run_result r;
    const char *extra[] = {"--fake", g_build, "--fake-hang", "--budget", "4", "--reps", "1", "--jobs", "12", NULL};
    driver(extra, &r);
    assert_int_equal(r.status, 0); /* rows the budget cut are skipped, not failed */
    char b[512];
    const char *paths[] = {"legacy", "nosync", "wrong", "right"};
    for (int i = 0; i < 4; i++)
        assert_non_null(
            strstr(row(r.out, paths[i], b, sizeof b), "SKIP (time budget of 4 s: plain cut, check cut, fix cut)"));
    assert_non_null(strstr(r.out, "\ntime: "));
    assert_non_null(strstr(r.out, "\n0 passed, 0 failed, 4 skipped\n"));
    dls_run_free(&r);
}

/* The cells of the training step's row for `variant` and `mode`: params, hazards, injected and
 * the outcome. */
static void train_row(const char *out, const char *variant, const char *mode, char params[16], char hazards[16],
                      char injected[16], char outcome[128])
{
    char head[64];
    snprintf(head, sizeof head, "\n%-8s %-6s ", variant, mode);
    const char *p = strstr(out, head);
    assert_non_null(p);
    assert_int_equal(sscanf(p + strlen(head), "%*s %*s %15s %15s %15s %127[^\n]", params, hazards, injected, outcome),
                     4);
}

static void train_step_plan_lists_every_row(void **state)
{
    (void)state;
    dls_run_result r;
    const char *how[] = {"--plan", NULL}, *extra[] = {NULL};
    run_script(g_train, how, extra, NULL, &r);
    assert_int_equal(r.status, 0);
    /* plain: racy, devsync, events; fix and check: racy, events. */
    assert_int_equal(dls_count(r.out, "\nskip  train "), 7);
    assert_non_null(strstr(r.out, "skip  train devsync plain\n"));
    assert_non_null(strstr(r.out, "skip  train events check\n"));
    assert_non_null(strstr(r.out, "\n0 passed, 0 failed, 7 skipped\n"));
    dls_run_free(&r);
}

/* A cell against its expectation: NULL (anything), "+" (a count of at least 1) or the text. */
static void assert_cell(const char *cell, const char *want)
{
    if (want && strcmp(want, "+") == 0)
        assert_true(atoi(cell) >= 1);
    else if (want)
        assert_string_equal(cell, want);
}

/* Checks the training step's rows: the racy program's training changes without dlsync and under
 * check (which sees it), fix makes it the synchronized run's, and nothing touches the program
 * synchronized by hand. */
static void assert_train_rows(const dls_run_result *r)
{
    static const struct {
        const char *variant, *mode, *params, *hazards, *injected, *outcome;
    } rows[] = {
        {"racy", "plain", "differ", NULL, NULL, NULL},   {"devsync", "plain", "ref", NULL, NULL, NULL},
        {"events", "plain", "same", NULL, NULL, "PASS"}, {"racy", "fix", "same", NULL, "+", "PASS"},
        {"events", "fix", "same", NULL, "0", "PASS"},    {"racy", "check", "differ", "+", NULL, "PASS"},
        {"events", "check", "same", "0", NULL, "PASS"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char params[16], hazards[16], injected[16], outcome[128];
        train_row(r->out, rows[i].variant, rows[i].mode, params, hazards, injected, outcome);
        assert_cell(params, rows[i].params);
        assert_cell(hazards, rows[i].hazards);
        assert_cell(injected, rows[i].injected);
        assert_cell(outcome, rows[i].outcome);
    }
    assert_non_null(strstr(r->out, "\nratio: fix / plain "));
    assert_non_null(strstr(r->out, "\nratio: fix / device-sync "));
    assert_non_null(strstr(r->out, ", fix / hand-synced "));
    assert_non_null(strstr(r->out, "the racy run's parameters differ from the synchronized run's\n"));
    assert_non_null(strstr(r->out, "\n5 passed, 0 failed, 0 skipped\n"));
}

static void train_step_dry_run_rows(void **state)
{
    (void)state;
    dls_run_result r;
    const char *how[] = {"--shim", g_shim, NULL}, *extra[] = {"--fake", g_build, "--steps", "3", "--blocks", "2", NULL};
    run_script(g_train, how, extra, NULL, &r);
    assert_int_equal(r.status, 0);
    assert_train_rows(&r);
    dls_run_free(&r);
}

static void train_step_skips_without_its_frameworks(void **state)
{
    (void)state;
    dls_run_result r;
    const char *how[] = {"--shim", g_shim, NULL}, *extra[] = {"--fake", g_build, "--fake-missing", NULL};
    run_script(g_train, how, extra, NULL, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "train_step: skipped (the peer framework is missing"));
    assert_int_equal(dls_count(r.out, "\nskip  train "), 7);
    assert_non_null(strstr(r.out, "\n0 passed, 0 failed, 7 skipped\n"));
    dls_run_free(&r);
}

/* A Python with pytest: Debian's, which scripts/deps.sh provides it to, else the one on PATH. */
static const char *python_with_pytest(void)
{
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

static void wheel_step_and_the_drivers_through_its_dlsync(void **state)
{
    (void)state;
    if (DLS_SAN[0]) { /* the wheel's shim is a plain build: its dry run is the plain build's */
        fprintf(stderr, "wheel step: not under %s\n", DLS_SAN);
        skip();
    }
    char tmp[] = "/tmp/dls-wheel-XXXXXX", dist[256], site[256], pattern[300], sh[1100], dlsync[300], pypath[300];
    char python[64];
    const char *py = python_with_pytest();
    assert_non_null(mkdtemp(tmp));
    snprintf(dist, sizeof dist, "%s/dist", tmp);
    snprintf(site, sizeof site, "%s/site", tmp);
    snprintf(python, sizeof python, "PYTHON=%s", py);
    dls_run_result r;
    /* The wheel, as scripts/gpu-check.sh --prepare builds it (the build's own make, not the test's). */
    const char *build[] = {py,   "-m", "pip", "wheel", DLS_SRC_DIR, "--no-deps", "-q", "--disable-pip-version-check",
                           "-w", dist, NULL};
    const char *clean[] = {"MAKEFLAGS=", "MAKELEVEL=", "MFLAGS=", NULL};
    assert_int_equal(dls_run(build, clean, &r), 0);
    if (r.status != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.err);
    assert_int_equal(r.status, 0);
    dls_run_free(&r);
    snprintf(pattern, sizeof pattern, "%s/dlsync-*.whl", dist);
    glob_t g;
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);

    /* The step: installed offline, the racy twin fails by dlsync's report, the synced one passes. */
    snprintf(sh, sizeof sh, "%s/tests/gpu/run-wheel.sh", DLS_SRC_DIR);
    const char *step[] = {sh, g.gl_pathv[0], site, "--fake", g_build, NULL};
    const char *env[] = {python, "ASAN_OPTIONS=", NULL};
    assert_int_equal(dls_run(step, env, &r), 0);
    if (r.status != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\nwheel    install      ok                   PASS\n"));
    assert_non_null(strstr(r.out, "\nhandoff  test_racy    FAILED (by dlsync)   PASS\n"));
    assert_non_null(strstr(r.out, "\nhandoff  test_synced  PASSED               PASS\n"));
    assert_non_null(strstr(r.out, "tests failed by dlsync=1\n"));
    assert_non_null(strstr(r.out, "\n3 passed, 0 failed\n"));
    dls_run_free(&r);
    globfree(&g);

    /* Both drivers with the wheel's dlsync command starting the shim. */
    snprintf(dlsync, sizeof dlsync, "%s/bin/dlsync", site);
    snprintf(pypath, sizeof pypath, "PYTHONPATH=%s", site);
    const char *how[] = {"--launcher", dlsync, NULL};
    const char *fw[] = {"--fake", g_build, "--reps", "2", "--jobs", "4", NULL};
    run_script(g_script, how, fw, pypath, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "frameworks: shim started by "));
    assert_non_null(strstr(r.out, "\n4 passed, 0 failed, 0 skipped\n"));
    dls_run_free(&r);
    const char *train[] = {"--fake", g_build, "--steps", "3", "--blocks", "1", NULL};
    run_script(g_train, how, train, pypath, &r);
    assert_int_equal(r.status, 0);
    assert_train_rows(&r);
    dls_run_free(&r);
    assert_int_equal(dls_remove_tree(tmp), 0);
}

int main(void)
{
    snprintf(g_script, sizeof g_script, "%s/tests/gpu/frameworks.py", DLS_SRC_DIR);
    snprintf(g_train, sizeof g_train, "%s/tests/gpu/train_step.py", DLS_SRC_DIR);
    dls_build_path(g_build, sizeof g_build, "");
    dls_build_path(g_shim, sizeof g_shim, "lib/libdlsync.so");
    snprintf(g_base, sizeof g_base, "FRAMEWORKS_BASE_PRELOAD=%s", DLS_SAN_RUNTIME);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_lists_every_case),
        cmocka_unit_test(dry_run_rows),
        cmocka_unit_test(hung_children_time_out),
        cmocka_unit_test(budget_cuts_rows_short),
        cmocka_unit_test(train_step_plan_lists_every_row),
        cmocka_unit_test(train_step_dry_run_rows),
        cmocka_unit_test(train_step_skips_without_its_frameworks),
        cmocka_unit_test(wheel_step_and_the_drivers_through_its_dlsync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
