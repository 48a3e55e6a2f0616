/* A hand-synchronized loader pipeline (loader_pipeline.c): loader and consumer threads hand
 * buffers and per-item events to each other through host queues while all are busy, with a
 * stream made for every import and destroyed after its release. The program orders every
 * hazard itself, so check reports nothing and fix injects nothing, for every stream kind, with
 * and without host synchronizes, over enough items that each buffer passes through many more
 * consumer streams than an exchange's frontier holds, and with pools of 6 and 48 buffers, so that
 * a stream's history loses entries that touched many buffers, read or written, while none is seen
 * complete. */
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
 * synchronizing every `sync_every`-th item (0: never), a pool of `buffers`; fails unless it read
 * right, and returns its stderr (the caller frees it). */
static char *run_pipeline(const char *mode, int kind, int sync_every, int buffers)
{
    char prog[1024], shim[1024], preload[2048], pre_env[2100], mode_env[64], n[16], k[16], s[16], b[16];
    dls_build_path(prog, sizeof prog, "scenarios/loader_pipeline");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", preload);
    snprintf(mode_env, sizeof mode_env, "DLSYNC_MODE=%s", mode);
    snprintf(n, sizeof n, "%d", items());
    snprintf(k, sizeof k, "%d", kind);
    snprintf(s, sizeof s, "%d", sync_every);
    snprintf(b, sizeof b, "%d", buffers);
    const char *argv[] = {prog, "2", "2", n, k, s, b, NULL};
    const char *env[] = {pre_env, mode_env, "DLSYNC_VERBOSE=1", "DLSYNC_LOG=", "CUDA_INJECTION64_PATH=", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    char want[64];
    snprintf(want, sizeof want, "exchanges: %s wrong: 0\n", n);
    if (r.status != 0 || !strstr(r.out, want))
        fail_msg("%s, kind %d, sync every %d, %d buffers: status %d\n%s%s", mode, kind, sync_every, buffers, r.status,
                 r.out, r.err);
    char *err = r.err;
    r.err = NULL;
    dls_run_free(&r);
    return err;
}

/* The stream kinds of fakefw.h that a stream made per array can have. */
static const int g_kinds[] = {0 /* non-blocking */, 1 /* blocking */, 3 /* per-thread */};

/* The pools: 6 buffers, and 48, more than a stream's history keeps entries for (32): each
 * loader's and consumer's history loses its work on many buffers while none is seen complete. */
static const int g_pools[] = {6, 48};

/* Runs the pipeline under `mode` for every stream kind, with and without host synchronizes, with
 * every pool, and fails on the first run whose stderr `clean` does not accept. */
static void run_every_pipeline(const char *mode, int (*clean)(const char *err))
{
    for (size_t i = 0; i < sizeof g_kinds / sizeof *g_kinds; i++)
        for (int sync_every = 0; sync_every <= 5; sync_every += 5)
            for (size_t p = 0; p < sizeof g_pools / sizeof *g_pools; p++) {
                char *err = run_pipeline(mode, g_kinds[i], sync_every, g_pools[p]);
                if (!clean(err))
                    fail_msg("%s, kind %d, sync every %d, %d buffers:\n%s", mode, g_kinds[i], sync_every, g_pools[p],
                             err);
                free(err);
            }
}

/* 1 when check's stderr reports no race and warns of nothing. */
static int check_clean(const char *err)
{
    return !dls_count(err, "dlsync: race (") && strstr(err, " races=0 ") && !dls_count(err, "warning");
}

/* 1 when fix's stderr says it injected nothing, fell back nowhere and warned of nothing. */
static int fix_clean(const char *err)
{
    return strstr(err, " injected=0 fallbacks=0 ") && !dls_count(err, "warning");
}

static void check_reports_nothing_on_a_hand_synchronized_pipeline(void **state)
{
    (void)state;
    run_every_pipeline("check", check_clean);
}

static void fix_injects_nothing_into_a_hand_synchronized_pipeline(void **state)
{
    (void)state;
    run_every_pipeline("fix", fix_clean);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_reports_nothing_on_a_hand_synchronized_pipeline),
        cmocka_unit_test(fix_injects_nothing_into_a_hand_synchronized_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
