/* fix mode, repeated: every racy scenario run 100 times under the shim produces the right data
 * every time (the simulator's gates make the race happen on each run without the shim). Under
 * ThreadSanitizer, which makes each run some forty times slower and looks for data races rather
 * than wrong results, 10 runs per scenario. Then the stress of exchanges made while other
 * threads synchronize (stress_sync), with 16 and 64 threads: no stale read under fix; and a
 * host wait of the shim that leaves other threads' launches free (stall_host_wait); and a release
 * fence that waits for the consumer's read only (fence_exact). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scen_run.h"

/* Runs per scenario: 100, or 10 in a ThreadSanitizer build (DLS_SAN comes from the build). */
static int runs(void)
{
    return strstr(DLS_SAN, "thread") ? 10 : 100;
}

static void every_racy_scenario_is_correct_in_every_run(void **state)
{
    (void)state;
    for (const char *const *name = scen_names; *name; name++)
        for (int i = 0, n = runs(); i < n; i++) {
            scen_outcome o;
            if (scen_run(*name, "racy", "fix", NULL, &o) != 0)
                fail_msg("%s: could not start", *name);
            if (o.r.status != 0 || !strstr(o.r.out, "verdict: correct\n"))
                fail_msg("%s run %d: status %d\n%s%s", *name, i, o.r.status, o.r.out, o.r.err);
            scen_run_free(&o);
        }
}

/* Runs stress_sync with `threads` threads (preloaded in fix mode when fix); *stale and
 * *exchanges get its counts. */
static void stress(int threads, int fix, int *exchanges, int *stale)
{
    char prog[1024], shim[1024], preload[2048], pre_env[2100], nthreads[16], rounds[16];
    dls_build_path(prog, sizeof prog, "scenarios/stress_sync");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", fix ? preload : "");
    snprintf(nthreads, sizeof nthreads, "%d", threads);
    snprintf(rounds, sizeof rounds, "%d", strstr(DLS_SAN, "thread") ? 10 : 150); /* as the caller expects */
    const char *argv[] = {prog, nthreads, rounds, NULL};
    const char *env[] = {pre_env, "DLSYNC_MODE=fix", "DLSYNC_LOG=", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    if (r.status != 0 || sscanf(r.out, "exchanges: %d stale: %d", exchanges, stale) != 2)
        fail_msg("stress_sync %d: status %d\n%s%s", threads, r.status, r.out, r.err);
    dls_run_free(&r);
}

static void exchanges_during_other_threads_synchronizes_are_never_stale(void **state)
{
    (void)state;
    int tsan = strstr(DLS_SAN, "thread") != NULL, rounds = tsan ? 10 : 150, n, stale;
    if (!tsan) { /* without the shim the reads race (ThreadSanitizer would report the simulated kernels) */
        stress(16, 0, &n, &stale);
        assert_true(stale > 0);
    }
    for (int threads = 16; threads <= 64; threads *= 4) {
        stress(threads, 1, &n, &stale);
        assert_int_equal(n, threads / 2 * rounds);
        assert_int_equal(stale, 0);
    }
}

/* While the shim waits on the host for a held write on one thread, another thread's launches go
 * through (they would block behind the wait if it were made under a lock they need). */
static void a_host_wait_does_not_hold_up_other_threads_launches(void **state)
{
    (void)state;
    char prog[1024], shim[1024], preload[2048], pre_env[2100];
    dls_build_path(prog, sizeof prog, "scenarios/stall_host_wait");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", preload);
    const char *argv[] = {prog, NULL};
    const char *env[] = {pre_env, "DLSYNC_MODE=fix", "DLSYNC_LOG=", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    if (r.status != 0 || !strstr(r.out, "launched during the wait: 1\n") || !strstr(r.out, "host read: 42\n") ||
        dls_count(r.err, "dlsync:") != dls_count(r.err, "dlsync: fix summary:"))
        fail_msg("status %d\n%s%s", r.status, r.out, r.err);
    dls_run_free(&r);
}

/* The release fence waits for the consumer's read, not for later work of the consumer's stream
 * (here blocked behind a held stream): on one stream, on two consumer streams, and with the
 * consumer on another device (two simulated devices). The reads still see the producer's data. */
static void the_release_fence_waits_for_the_read_not_for_later_work(void **state)
{
    (void)state;
    static const char *const variants[] = {"one", "two-streams", "devices"};
    char prog[1024], shim[1024], preload[2048], pre_env[2100];
    dls_build_path(prog, sizeof prog, "scenarios/fence_exact");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", preload);
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
        const char *argv[] = {prog, variants[i], NULL};
        const char *env[] = {pre_env, "DLSYNC_MODE=fix", "DLSYNC_LOG=", "CUDA_INJECTION64_PATH=", NULL};
        dls_run_result r;
        assert_int_equal(dls_run(argv, env, &r), 0);
        if (r.status != 0 || !strstr(r.out, "reuse ran: 1\n") || !strstr(r.out, "verdict: correct\n") ||
            dls_count(r.err, "dlsync:") != dls_count(r.err, "dlsync: fix summary:"))
            fail_msg("%s: status %d\n%s%s", variants[i], r.status, r.out, r.err);
        dls_run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_racy_scenario_is_correct_in_every_run),
        cmocka_unit_test(exchanges_during_other_threads_synchronizes_are_never_stale),
        cmocka_unit_test(a_host_wait_does_not_hold_up_other_threads_launches),
        cmocka_unit_test(the_release_fence_waits_for_the_read_not_for_later_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
