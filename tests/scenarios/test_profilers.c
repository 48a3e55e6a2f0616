/* dlsync beside a CUPTI profiler (scen_profiled: the side_stream exchange with a fake profiler
 * subscribing before or after dlsync, or loaded as the CUDA injection library the way Nsight
 * Systems loads itself), on both simulated CUPTI generations:
 * - 13.3 with an r610 driver (multi-subscriber mode): both get their callbacks whichever subscribes
 *   first; the profiler sees exactly the launches it sees without dlsync, fix corrects the race,
 *   check reports it, the program's output is unchanged, and the summary says cupti=shared.
 * - 13.0 (one subscriber): the first one wins. A profiler first: dlsync gives exactly one warning
 *   and falls back (fix: a context synchronize at export, still correct). dlsync first: it
 *   observes as before and the profiler is refused.
 * - A 13.3 CUPTI with an older driver cannot share: dlsync subscribes alone, silently, and says
 *   why. A profiler that does not ask to share keeps CUPTI: one warning and the fallback.
 * - An injection library dlsync cannot load: one warning, and dlsync observes as usual. A child
 *   that dropped LD_PRELOAD stays inert and still initializes the injection library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scen_run.h"

#define OLD_CUPTI "CUDASIM_CUPTI_VERSION=130001"
#define NEW_CUPTI "CUDASIM_CUPTI_VERSION=130300"
#define NEW_DRIVER "CUDASIM_DRIVER_VERSION=13030" /* r610 */
#define OLD_DRIVER "CUDASIM_DRIVER_VERSION=13000"

/* How the profiler comes in: subscribing itself before or after CUDA starts, or as the injection
 * library. */
static const char *const g_ways[] = {"FAKEPROF=before", "FAKEPROF=after", NULL /* injection */};
#define NWAYS (sizeof g_ways / sizeof *g_ways)

/* "CUDA_INJECTION64_PATH=<libfakeprof.so>": the profiler as the CUDA injection library. */
static const char *injected(void)
{
    static char env[1100];
    char lib[1024];
    snprintf(env, sizeof env, "CUDA_INJECTION64_PATH=%s", dls_build_path(lib, sizeof lib, "scenarios/libfakeprof.so"));
    return env;
}

/* Runs scen_profiled with the profiler coming in `way` (NULL: CUDA_INJECTION64_PATH). */
static void run(const char *variant, const char *mode, const char *cupti, const char *way, scen_outcome *o)
{
    const char *extra[] = {cupti, NEW_DRIVER, way ? way : injected(), "DLSYNC_VERBOSE=1", "CUDASIM_CUPTI_BUSY=", NULL};
    if (scen_run("profiled", variant, mode, extra, o) != 0)
        fail_msg("scen_profiled %s: could not start", variant);
    if (o->r.status != 0)
        fail_msg("scen_profiled %s (mode %s, %s, %s): exit %d\n%s", variant, mode ? mode : "none", cupti,
                 way ? way : "injection", o->r.status, o->r.err);
}

/* The "profiler: ..." line of o's output (up to its newline) in buf. */
static const char *profiler_line(const scen_outcome *o, char *buf, size_t n)
{
    const char *p = strstr(o->r.out, "profiler: ");
    size_t len = p ? strcspn(p, "\n") : 0;
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p ? p : "");
    return buf;
}

/* stdout without the profiler's line: the program's own results. */
static const char *results(const scen_outcome *o, char *buf, size_t n)
{
    const char *p = strstr(o->r.out, "profiler: ");
    size_t len = p ? (size_t)(p - o->r.out) : strlen(o->r.out);
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), o->r.out);
    return buf;
}

static void in_multi_subscriber_mode_both_get_their_callbacks(void **state)
{
    (void)state;
    static const char *const variants[] = {"racy", "correct"};
    for (int v = 0; v < 2; v++)
        for (size_t w = 0; w < NWAYS; w++) {
            scen_outcome plain;
            run(variants[v], NULL, NEW_CUPTI, g_ways[w], &plain);
            char want_prof[128], want_out[256], got[256];
            profiler_line(&plain, want_prof, sizeof want_prof);
            assert_non_null(strstr(want_prof, "profiler: subscribed launches="));
            assert_non_null(strstr(want_prof, " wrong=0"));
            scen_outcome o;
            run(variants[v], "fix", NEW_CUPTI, g_ways[w], &o);
            if (strcmp(profiler_line(&o, got, sizeof got), want_prof) != 0)
                fail_msg("%s %zu: profiler saw \"%s\", without dlsync \"%s\"", variants[v], w, got, want_prof);
            assert_non_null(strstr(o.r.out, "verdict: correct\n"));
            assert_int_equal(scen_records(&o, "inject"), v == 0 ? 1 : 0);
            assert_int_equal(dls_count(o.r.err, "dlsync: warning"), 0);
            assert_non_null(strstr(o.r.err, "dlsync: mode=fix cupti=shared (CUPTI 13.3 with a CUDA 13.3 driver: "
                                            "multi-subscriber mode) "));
            assert_non_null(strstr(o.log, "\"cupti\":\"shared\""));
            scen_run_free(&o);

            run(variants[v], "check", NEW_CUPTI, g_ways[w], &o);
            assert_string_equal(profiler_line(&o, got, sizeof got), want_prof);
            assert_string_equal(results(&o, got, sizeof got), results(&plain, want_out, sizeof want_out));
            assert_int_equal(scen_records(&o, "race"), v == 0 ? 1 : 0);
            assert_non_null(strstr(o.r.err, "dlsync: mode=check cupti=shared "));
            scen_run_free(&o);
            scen_run_free(&plain);
        }
}

/* Runs the racy exchange under fix with `extra` settings (NULL-terminated, at most five) and checks
 * what every such run must show: exit 0, correct data, `warnings` warnings, "cupti=<cupti>" in the
 * summary. */
static void fixed(const char *const *extra, int warnings, const char *cupti, scen_outcome *o)
{
    const char *env[8] = {"DLSYNC_VERBOSE=1", "CUDASIM_CUPTI_BUSY="};
    int n = 2;
    for (; extra && *extra && n < 7; extra++)
        env[n++] = *extra;
    env[n] = NULL;
    if (scen_run("profiled", "racy", "fix", env, o) != 0 || o->r.status != 0)
        fail_msg("scen_profiled racy under fix (%s): exit %d\n%s", env[2], o->r.status, o->r.err);
    assert_non_null(strstr(o->r.out, "verdict: correct\n"));
    if (dls_count(o->r.err, "dlsync: warning") != warnings)
        fail_msg("%s: want %d warning(s):\n%s", env[2], warnings, o->r.err);
    char want[64];
    snprintf(want, sizeof want, "dlsync: mode=fix cupti=%s ", cupti);
    assert_non_null(strstr(o->r.err, want));
}

static void with_one_subscriber_a_profiler_first_means_one_warning_and_the_fallback(void **state)
{
    (void)state;
    scen_outcome o;
    char got[256];
    /* An injection library is initialized before dlsync subscribes, as the driver would. */
    const char *ways[] = {"FAKEPROF=before", injected()};
    for (int w = 0; w < 2; w++) {
        const char *extra[] = {OLD_CUPTI, ways[w], NULL};
        fixed(extra, 1, "none", &o);
        assert_non_null(strstr(profiler_line(&o, got, sizeof got), "profiler: subscribed launches="));
        assert_non_null(strstr(o.r.err, "dlsync: warning: CUPTI subscription held by CUPTI for fakeprof (CUPTI 13.0 "
                                        "shares no subscription; sharing needs CUPTI 13.3 and an r610 driver); "
                                        "running without CUDA observation: fix synchronizes the producer's context "
                                        "at each export instead\n"));
        assert_int_equal(scen_records(&o, "fallback"), 1);
        assert_int_equal(scen_records(&o, "inject"), 0);
        scen_run_free(&o);
    }

    run("racy", "check", OLD_CUPTI, "FAKEPROF=before", &o);
    assert_int_equal(dls_count(o.r.err, "dlsync: warning"), 1);
    assert_non_null(strstr(o.r.err, "running without CUDA observation: check cannot check exchanges\n"));
    assert_int_equal(scen_records(&o, "race"), 0);
    scen_run_free(&o);
}

static void with_one_subscriber_dlsync_first_observes_and_hosts_the_profiler(void **state)
{
    (void)state;
    scen_outcome o, plain;
    char got[256], want[256];
    run("racy", NULL, OLD_CUPTI, "FAKEPROF=after", &plain);
    profiler_line(&plain, want, sizeof want);
    assert_non_null(strstr(want, "profiler: subscribed launches="));
    const char *extra[] = {OLD_CUPTI, "FAKEPROF=after", NULL};
    fixed(extra, 0, "exclusive", &o);
    assert_non_null(strstr(o.r.err, "cupti=exclusive (CUPTI 13.0 shares no subscription; sharing needs CUPTI 13.3 "
                                    "and an r610 driver) "));
    assert_non_null(strstr(o.log, "\"cupti_why\":\"CUPTI 13.0 shares no subscription"));
    assert_string_equal(profiler_line(&o, got, sizeof got), want);
    assert_int_equal(scen_records(&o, "inject"), 1);
    scen_run_free(&o);
    scen_run_free(&plain);
}

static void a_cupti_that_cannot_share_still_observes_alone(void **state)
{
    (void)state;
    const char *extra[] = {NEW_CUPTI, OLD_DRIVER, NULL};
    scen_outcome o;
    fixed(extra, 0, "exclusive", &o);
    assert_non_null(strstr(o.r.err, "cupti=exclusive (the driver (CUDA 13.0) shares no subscription; sharing needs "
                                    "an r610 driver (CUDA 13.3)) "));
    assert_int_equal(scen_records(&o, "inject"), 1);
    scen_run_free(&o);
}

static void a_profiler_that_does_not_share_keeps_cupti(void **state)
{
    (void)state;
    const char *extra[] = {NEW_CUPTI, NEW_DRIVER, "FAKEPROF=before", "FAKEPROF_ALONE=1", NULL};
    scen_outcome o;
    char got[256];
    fixed(extra, 1, "none", &o);
    assert_non_null(strstr(profiler_line(&o, got, sizeof got), "profiler: subscribed launches="));
    assert_non_null(strstr(o.r.err, "dlsync: warning: CUPTI subscription held by CUPTI for fakeprof (a tool that "
                                    "does not share CUPTI); running without CUDA observation: fix synchronizes "
                                    "the producer's context at each export instead\n"));
    assert_int_equal(scen_records(&o, "fallback"), 1);
    scen_run_free(&o);
}

static void an_injection_library_that_cannot_be_loaded_is_named_once(void **state)
{
    (void)state;
    const char *extra[] = {NEW_CUPTI, NEW_DRIVER, "CUDA_INJECTION64_PATH=/nonexistent/libtool.so", NULL};
    scen_outcome o;
    fixed(extra, 1, "shared", &o);
    assert_non_null(strstr(o.r.err, "dlsync: warning: could not initialize the CUDA injection library "
                                    "/nonexistent/libtool.so ("));
    assert_int_equal(scen_records(&o, "inject"), 1);
    scen_run_free(&o);
}

static void an_inert_child_still_initializes_the_chained_tool(void **state)
{
    (void)state;
    char shim[1024], lib[1024], inj[1100], mark[1100], chain[1100];
    char *real = realpath(dls_build_path(shim, sizeof shim, "lib/libdlsync.so"), NULL);
    assert_non_null(real);
    snprintf(inj, sizeof inj, "CUDA_INJECTION64_PATH=%s", real);
    snprintf(mark, sizeof mark, "DLSYNC_AUTO_INJECTION=%s", real);
    snprintf(chain, sizeof chain, "DLSYNC_CHAINED_INJECTION=%s",
             dls_build_path(lib, sizeof lib, "scenarios/libfakeprof.so"));
    free(real);
    const char *extra[] = {NEW_CUPTI, inj, mark, chain, "DLSYNC_VERBOSE=1", NULL};
    scen_outcome o;
    char got[256];
    assert_int_equal(scen_run("profiled", "racy", NULL, extra, &o), 0);
    assert_int_equal(o.r.status, 0);
    assert_non_null(strstr(o.r.out, "verdict: stale\n"));
    assert_non_null(strstr(profiler_line(&o, got, sizeof got), "profiler: subscribed launches="));
    assert_null(strstr(o.r.err, "dlsync"));
    scen_run_free(&o);
}

/* Runs scen_kineto (`variant`, under `mode` or without dlsync when NULL) with the settings in
 * extra (NULL-terminated, at most six). */
static void kineto(const char *variant, const char *mode, const char *const *extra, scen_outcome *o)
{
    const char *env[10] = {"DLSYNC_VERBOSE=1", "CUDASIM_CUPTI_BUSY="};
    int n = 2;
    for (; extra && *extra && n < 9; extra++)
        env[n++] = *extra;
    env[n] = NULL;
    if (scen_run("kineto", variant, mode, env, o) != 0 || o->r.status != 0)
        fail_msg("scen_kineto %s under %s: exit %d\n%s", variant, mode ? mode : "nothing", o->r.status, o->r.err);
}

/* The "kineto: ..." lines of o's output in buf. */
static const char *kineto_lines(const scen_outcome *o, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (const char *p = strstr(o->r.out, "kineto: "); p && k < n; p = strstr(p + 1, "kineto: "))
        k += (size_t)snprintf(buf + k, n - k, "%.*s\n", (int)strcspn(p, "\n"), p);
    return buf;
}

/* The Kineto-shaped client subscribed after dlsync (KINETO_WHEN=after) on `cupti`: it sees what it
 * sees without dlsync, through both of its sessions (TEARDOWN_CUPTI=1's cuptiFinalize between
 * them), and dlsync keeps observing: fix corrects both racy exchanges, check reports the race. */
static void kineto_after(const char *cupti, const char *sharing)
{
    const char *extra[] = {cupti, NEW_DRIVER, "KINETO_WHEN=after", "KINETO_TEARDOWN=1", NULL};
    scen_outcome plain, o;
    char want[512], got[512], line[160];
    kineto("racy", NULL, extra, &plain);
    kineto_lines(&plain, want, sizeof want);
    assert_string_equal(want, "kineto: session 1: callbacks=60 wrong=0 kernels=3 copies=40\n"
                              "kineto: session 2: callbacks=60 wrong=0 kernels=3 copies=40\n");
    kineto("racy", "fix", extra, &o);
    assert_string_equal(kineto_lines(&o, got, sizeof got), want);
    assert_int_equal(dls_count(o.r.out, "verdict: correct\n"), 2);
    assert_int_equal(scen_records(&o, "inject"), 2);
    assert_int_equal(dls_count(o.r.err, "dlsync: warning"), 0);
    snprintf(line, sizeof line, "dlsync: mode=fix cupti=%s (", sharing);
    assert_non_null(strstr(o.r.err, line));
    scen_run_free(&o);
    kineto("racy", "check", extra, &o);
    assert_string_equal(kineto_lines(&o, got, sizeof got), want);
    assert_int_equal(scen_records(&o, "race"), 1); /* the same race, deduplicated */
    scen_run_free(&o);
    scen_run_free(&plain);
}

static void a_kineto_client_after_dlsync_is_hosted(void **state)
{
    (void)state;
    kineto_after(OLD_CUPTI, "exclusive"); /* one subscriber: CUPTI refuses the client */
    kineto_after(NEW_CUPTI, "shared");    /* sharing: CUPTI refuses cuptiSubscribe after _v2 */
}

/* Kineto subscribed first keeps CUPTI, on either generation: dlsync warns once and falls back. */
static void a_kineto_client_before_dlsync_keeps_cupti(void **state)
{
    (void)state;
    const char *cuptis[] = {OLD_CUPTI, NEW_CUPTI};
    for (int i = 0; i < 2; i++) {
        const char *extra[] = {cuptis[i], NEW_DRIVER, "KINETO_WHEN=before", "KINETO_TEARDOWN=1", NULL};
        scen_outcome plain, o;
        char want[512], got[512];
        kineto("racy", NULL, extra, &plain);
        kineto_lines(&plain, want, sizeof want);
        assert_non_null(strstr(want, "kineto: session 2: callbacks=60 wrong=0 "));
        kineto("racy", "fix", extra, &o);
        assert_string_equal(kineto_lines(&o, got, sizeof got), want);
        assert_int_equal(dls_count(o.r.out, "verdict: correct\n"), 2);
        assert_int_equal(dls_count(o.r.err, "dlsync: warning: CUPTI subscription held by CUPTI ("), 1);
        assert_int_equal(scen_records(&o, "fallback"), 2); /* one per exchange */
        assert_non_null(strstr(o.r.err, "dlsync: mode=fix cupti=none "));
        scen_run_free(&o);
        kineto("racy", "check", extra, &o);
        assert_non_null(strstr(o.r.err, "dlsync: check summary: NOT CHECKED: "));
        scen_run_free(&o);
        scen_run_free(&plain);
    }
}

static void a_kineto_client_that_dlopens_cupti_is_hosted(void **state)
{
    (void)state;
    const char *extra[] = {OLD_CUPTI, "KINETO_DLOPEN=1", NULL};
    scen_outcome plain, o;
    char want[512], got[512];
    kineto("racy", NULL, extra, &plain);
    kineto_lines(&plain, want, sizeof want);
    assert_string_equal(want, "kineto: session 1: callbacks=60 wrong=0 kernels=3 copies=40\n");
    kineto("racy", "fix", extra, &o);
    assert_string_equal(kineto_lines(&o, got, sizeof got), want);
    assert_int_equal(scen_records(&o, "inject"), 1);
    scen_run_free(&o);
    scen_run_free(&plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(in_multi_subscriber_mode_both_get_their_callbacks),
        cmocka_unit_test(with_one_subscriber_a_profiler_first_means_one_warning_and_the_fallback),
        cmocka_unit_test(with_one_subscriber_dlsync_first_observes_and_hosts_the_profiler),
        cmocka_unit_test(a_kineto_client_after_dlsync_is_hosted),
        cmocka_unit_test(a_kineto_client_before_dlsync_keeps_cupti),
        cmocka_unit_test(a_kineto_client_that_dlopens_cupti_is_hosted),
        cmocka_unit_test(a_cupti_that_cannot_share_still_observes_alone),
        cmocka_unit_test(a_profiler_that_does_not_share_keeps_cupti),
        cmocka_unit_test(an_injection_library_that_cannot_be_loaded_is_named_once),
        cmocka_unit_test(an_inert_child_still_initializes_the_chained_tool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
