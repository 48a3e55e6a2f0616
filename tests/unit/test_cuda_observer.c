/* Unit tests of shim/cuda/observer.c on the simulated CUPTI: the start holds no lock of the
 * observer across a loader or CUPTI call (the simulated libcupti calls this program's probe as it
 * is loaded, subscribed to and asked to enable a callback, and the probe takes the observer's lock
 * from another thread), and it enables the launch ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>

#include "common/config.h"
#include "cuda/observer.h"
#include "cudasim.h"

#define SITES 3

static atomic_int g_probing;           /* 1: the probe tries the lock at the next call of each site */
static int g_tried[SITES];             /* per site: the lock was tried since the last reset */
static atomic_int g_blocked[SITES];    /* per site: the lock could not be taken within 5 s */
static atomic_int g_launch_state = -1; /* the enable cuLaunchKernel's callback was last given */

/* Takes the observer's lock (dls_cuda_observer_set_reason does; after the start it is ignored). */
static void *take_the_lock(void *arg)
{
    (void)arg;
    dls_cuda_observer_set_reason("the probe");
    return NULL;
}

/* The probe (cudasim.h): at the first call of each site, takes the observer's lock from another
 * thread, which must not wait for the caller to leave its CUPTI or loader call. Exported (the
 * build hides symbols by default) so that dlsym finds it. */
__attribute__((visibility("default"))) void cudasim_cupti_probe(cudasim_probe_site site, unsigned enable,
                                                                unsigned domain, unsigned cbid)
{
    if (site == CUDASIM_PROBE_ENABLE && domain == CUPTI_CB_DOMAIN_DRIVER_API &&
        cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
        atomic_store(&g_launch_state, (int)enable);
    if (!atomic_load(&g_probing) || g_tried[site])
        return;
    g_tried[site] = 1;
    pthread_t t;
    if (pthread_create(&t, NULL, take_the_lock, NULL) != 0)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    if (pthread_timedjoin_np(t, NULL, &until) != 0) {
        atomic_fetch_add(&g_blocked[site], 1);
        pthread_detach(t); /* it gets the lock once the caller lets it go */
    }
}

/* The start loads CUPTI, subscribes and enables its ids, the launch ids among them, with no lock
 * held. */
static void the_start_holds_no_lock_across_loader_or_cupti_calls(void **state)
{
    (void)state;
    setenv("DLSYNC_MODE", "check", 1);
    setenv("DLSYNC_CUPTI", DLS_BUILD_DIR "/cudasim/libcupti.so.13", 1);
    dls_config_reset_for_tests();
    atomic_store(&g_probing, 1);
    assert_int_equal(dls_cuda_observer_start(), 1);
    assert_string_equal(dls_cuda_observer_reason(), "active");
    for (int site = 0; site < SITES; site++) {
        assert_true(g_tried[site]); /* loaded, subscribed and enabled through the probe */
        assert_int_equal(atomic_load(&g_blocked[site]), 0);
    }
    assert_int_equal(atomic_load(&g_launch_state), 1);
    atomic_store(&g_probing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_start_holds_no_lock_across_loader_or_cupti_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
