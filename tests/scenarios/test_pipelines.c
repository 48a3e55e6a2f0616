/* A hand-synchronized loader pipeline (loader_pipeline.c): loader and consumer threads hand
 * buffers and per-item events to each other through host queues while all are busy, with a
 * stream made for every import and destroyed after its release. The program orders every
 * hazard itself, so check reports nothing and fix injects nothing, for every stream kind, with
 * and without host synchronizes, over enough items that each buffer passes through many more
 * consumer streams than an exchange's frontier holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scen_run.h"

/* Items per run: ThreadSanitizer makes each run some forty times slower. */
static int items(void)
{
    return strstr(DLS_SAN, "thread") ? 120 : 1000;
}

/* Runs the pipeline with 2 loaders and 2 consumers under `mode`, streams of `kind`, consumers
 * synchronizing every `sync_every`-th item (0: never); fails unless it read right, and returns its
 * stderr (the caller frees it). */
static char *run_pipeline(const char *mode, int kind, int sync_every)
{
    char prog[1024], shim[1024], preload[2048], pre_env[2100], mode_env[64], n[16], k[16], s[16];
    dls_build_path(prog, sizeof prog, "scenarios/loader_pipeline");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", preload);
    snprintf(mode_env, sizeof mode_env, "DLSYNC_MODE=%s", mode);
    snprintf(n, sizeof n, "%d", items());
    snprintf(k, sizeof k, "%d", kind);
    snprintf(s, sizeof s, "%d", sync_every);
    const char *argv[] = {prog, "2", "2", n, k, s, NULL};
    const char *env[] = {pre_env, mode_env, "DLSYNC_VERBOSE=1", "DLSYNC_LOG=", "CUDA_INJECTION64_PATH=", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    char want[64];
    snprintf(want, sizeof want, "exchanges: %s wrong: 0\n", n);
    if (r.status != 0 || !strstr(r.out, want))
        fail_msg("%s, kind %d, sync every %d: status %d\n%s%s", mode, kind, sync_every, r.status, r.out, r.err);
    char *err = r.err;
    r.err = NULL;
    dls_run_free(&r);
    return err;
}

/* The stream kinds of fakefw.h that a stream made per array can have. */
static const int g_kinds[] = {0 /* non-blocking */, 1 /* blocking */, 3 /* per-thread */};

static void check_reports_nothing_on_a_hand_synchronized_pipeline(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_kinds / sizeof *g_kinds; i++)
        for (int sync_every = 0; sync_every <= 5; sync_every += 5) {
            char *err = run_pipeline("check", g_kinds[i], sync_every);
            if (dls_count(err, "dlsync: race (") || !strstr(err, " races=0 ") || dls_count(err, "warning"))
                fail_msg("check, kind %d, sync every %d:\n%s", g_kinds[i], sync_every, err);
            free(err);
        }
}

static void fix_injects_nothing_into_a_hand_synchronized_pipeline(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_kinds / sizeof *g_kinds; i++)
        for (int sync_every = 0; sync_every <= 5; sync_every += 5) {
            char *err = run_pipeline("fix", g_kinds[i], sync_every);
            if (!strstr(err, " injected=0 fallbacks=0 ") || dls_count(err, "warning"))
                fail_msg("fix, kind %d, sync every %d:\n%s", g_kinds[i], sync_every, err);
            free(err);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_reports_nothing_on_a_hand_synchronized_pipeline),
        cmocka_unit_test(fix_injects_nothing_into_a_hand_synchronized_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
