/* test_sim_loading.c: what the GPU showed the simulator must model about loading.
 *   - Lazy module loading (CUDA_MODULE_LOADING=LAZY, real CUDA 13's default): the first launch of
 *     a kernel in a context waits for the context's earlier work, so a race whose reader is a
 *     kernel's first launch does not show; later launches do not wait. Eager loading never waits.
 *   - Simulator programs run on the simulator even when LD_LIBRARY_PATH names a folder with the
 *     real CUDA libraries (GPU machines set it to the driver's).
 * Each case runs in a child process of this binary (the loading mode is read once per process). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"
#include "dls_test.h"
#include "simtest.h"

static CUstream g_held;

static void *release_later(void *arg)
{
    (void)arg;
    usleep(20000);
    cudasim_stream_release(g_held);
    return NULL;
}

/* Child: stream a holds a store; the copy kernel's first and second launches on stream b read
 * it. Prints, for each launch, whether a's store had completed when the launch returned
 * ("first=done|pending second=done|pending") and the value the first copy saw. */
static int loading_child(void)
{
    CUstream a, b, c;
    simtest_init_streams(&a, &b, &c);
    int *x = simtest_dev_int(0), *y = simtest_dev_int(0);
    const char *state[2];
    for (int launch = 0; launch < 2; launch++) {
        g_held = a;
        cudasim_stream_hold(a);
        simtest_store(a, x, 42 + launch);
        pthread_t t;
        int lazy_first =
            launch == 0 && getenv("CUDA_MODULE_LOADING") && strcmp(getenv("CUDA_MODULE_LOADING"), "LAZY") == 0;
        if (lazy_first) /* the launch below waits for a: open its gate from elsewhere */
            pthread_create(&t, NULL, release_later, NULL);
        simtest_copy(b, y, x);
        state[launch] = cuStreamQuery(a) == CUDA_SUCCESS ? "done" : "pending";
        if (lazy_first) {
            pthread_join(t, NULL);
        } else { /* the copy runs while the store is held */
            cuStreamSynchronize(b);
            cudasim_stream_release(a);
        }
        cuCtxSynchronize();
        if (launch == 0)
            printf("value=%d ", *y);
    }
    printf("first=%s second=%s\n", state[0], state[1]);
    return 0;
}

/* Child: prints the device count the runtime reports. */
static int runtime_child(void)
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("devices=%d error=%d calls=%lu\n", n, (int)e, cudasim_call_count("cudaGetDeviceCount"));
    return e == cudaSuccess ? 0 : 1;
}

static void run_child(const char *mode, const char *const env[], dls_run_result *r)
{
    char self[1024];
    dls_build_path(self, sizeof self, "tests/test_sim_loading");
    const char *argv[] = {self, mode, NULL};
    assert_int_equal(dls_run(argv, env, r), 0);
    assert_int_equal(r->status, 0);
}

static void lazy_loading_first_launch_waits_for_the_context(void **state)
{
    (void)state;
    dls_run_result r;
    const char *env[] = {"CUDA_MODULE_LOADING=LAZY", NULL};
    run_child("--loading", env, &r);
    assert_string_equal(r.out, "value=42 first=done second=pending\n");
    dls_run_free(&r);
}

static void eager_loading_never_waits(void **state)
{
    (void)state;
    const char *modes[] = {"CUDA_MODULE_LOADING=EAGER", "CUDA_MODULE_LOADING="};
    for (int i = 0; i < 2; i++) {
        dls_run_result r;
        const char *env[] = {modes[i], NULL};
        run_child("--loading", env, &r);
        /* The copy ran after the gate opened, behind nothing: it saw the store's old value. */
        assert_string_equal(r.out, "value=0 first=pending second=pending\n");
        dls_run_free(&r);
    }
}

static void simulator_wins_over_ld_library_path(void **state)
{
    (void)state;
    dls_run_result r;
    char path[1200];
    snprintf(path, sizeof path, "LD_LIBRARY_PATH=%s/lib64", DLS_TEST_CUDA_HOME);
    const char *env[] = {path, NULL};
    run_child("--runtime", env, &r);
    assert_string_equal(r.out, "devices=1 error=0 calls=1\n");
    dls_run_free(&r);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--loading") == 0)
        return loading_child();
    if (argc > 1 && strcmp(argv[1], "--runtime") == 0)
        return runtime_child();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lazy_loading_first_launch_waits_for_the_context),
        cmocka_unit_test(eager_loading_never_waits),
        cmocka_unit_test(simulator_wins_over_ld_library_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
