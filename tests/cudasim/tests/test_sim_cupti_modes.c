/* test_sim_cupti_modes.c: the simulated CUPTI's subscription rules, version by version
 * (cupti_callbacks.c), and its activity API (cupti_activity.c). Each rule fixes state for the life
 * of a process, so each case runs in a child process of its own, with the CUPTI
 * (CUDASIM_CUPTI_VERSION) and driver (CUDASIM_DRIVER_VERSION) it names:
 * - sharing only from CUPTI 13.3 with a CUDA 13.3 (r610) driver; before, the first subscriber is
 *   alone whatever it asked, and nothing is remembered once it leaves;
 * - with sharing, the first subscriber fixes the mode for the life of the process, the two
 *   function families never mix, and cuptiFinalize ends every subscription;
 * - the activity API records kernels and copies with no subscription at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "../../../shim/cuda/cupti_subscriber.h"
#include "cudasim.h"
#include "simtest.h"

/* In a child: fails the case, naming the line. */
#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            return 1;                                                             \
        }                                                                         \
    } while (0)

/* Runs case(), which returns 0 when it holds, in a child process with CUPTI `cupti` and driver
 * `driver` (the simulator's controls). */
static void in_child(int (*c)(void), const char *cupti, const char *driver)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("CUDASIM_CUPTI_VERSION", cupti, 1);
        setenv("CUDASIM_DRIVER_VERSION", driver, 1);
        simtest_init();
        _exit(c());
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* One subscriber: the callbacks it was told about, with its own userdata, and anything else. */
typedef struct {
    CUpti_SubscriberHandle h;
    int calls, foreign;
} listener;

static void CUPTIAPI on_listener(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)data;
    listener *l = user;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2)
        l->calls++;
    else
        l->foreign++;
}

static char g_old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];

/* Subscribes l as `name` with cuptiSubscribe_v2 and the 13.2 struct, asking to share when
 * `multi`, and enables cuMemAlloc_v2 when granted; the holder's name lands in g_old. */
static CUptiResult v2(listener *l, const char *name, int multi)
{
    g_old[0] = '\0';
    dls_cupti_subscriber_params p = {.structSize = DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI,
                                     .subscriberName = name,
                                     .oldSubscriberName = g_old,
                                     .oldSubscriberSize = sizeof g_old,
                                     .allowMultipleSubscribers = (uint8_t)multi};
    CUptiResult r = cuptiSubscribe_v2(&l->h, on_listener, l, (CUpti_SubscriberParams *)&p);
    if (r == CUPTI_SUCCESS)
        cuptiEnableCallback(1, l->h, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
    return r;
}

/* Subscribes l with the unversioned cuptiSubscribe, enabling cuMemAlloc_v2 when granted. */
static CUptiResult legacy(listener *l)
{
    CUptiResult r = cuptiSubscribe(&l->h, on_listener, l);
    if (r == CUPTI_SUCCESS)
        cuptiEnableCallback(1, l->h, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
    return r;
}

/* One allocation and its free (cuMemAlloc_v2: an ENTER and an EXIT). */
static int alloc_once(void)
{
    void *p = NULL;
    return cudaMalloc(&p, 64) == cudaSuccess && cudaFree(p) == cudaSuccess;
}

#define REFUSED CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED

/* Without multi-subscriber mode, a request to share is granted as a single subscription. */
static int one_subscriber_whatever_the_struct_asks(void)
{
    listener a = {0}, b = {0};
    CHECK(v2(&a, "first", 1) == CUPTI_SUCCESS);
    CHECK(v2(&b, "second", 1) == REFUSED);
    CHECK(strcmp(g_old, "CUPTI for first") == 0);
    CHECK(legacy(&b) == REFUSED);
    CHECK(alloc_once());
    CHECK(a.calls == 2 && a.foreign == 0 && b.calls == 0);
    /* Nothing is remembered once it leaves: either family, either request. */
    CHECK(cuptiUnsubscribe(a.h) == CUPTI_SUCCESS);
    CHECK(legacy(&b) == CUPTI_SUCCESS);
    CHECK(cuptiUnsubscribe(b.h) == CUPTI_SUCCESS);
    CHECK(v2(&a, "first", 0) == CUPTI_SUCCESS);
    return 0;
}

static void before_13_3_or_an_r610_driver_nothing_is_shared(void **state)
{
    (void)state;
    in_child(one_subscriber_whatever_the_struct_asks, "130202", "13030"); /* CUPTI 13.2 */
    in_child(one_subscriber_whatever_the_struct_asks, "130300", "13020"); /* a CUDA 13.2 driver */
    in_child(one_subscriber_whatever_the_struct_asks, "130300", "13000");
}

static int sharing_subscribers_each_get_their_own(void)
{
    listener a = {0}, b = {0}, c = {0};
    CHECK(v2(&a, "first", 1) == CUPTI_SUCCESS);
    CHECK(v2(&b, "second", 1) == CUPTI_SUCCESS);
    CHECK(strcmp(g_old, "CUPTI for first") == 0); /* the first subscriber, reported on success */
    CHECK(v2(&c, "alone", 0) == REFUSED);         /* the mode is shared: alone is refused */
    CHECK(alloc_once());
    CHECK(a.calls == 2 && b.calls == 2 && a.foreign + b.foreign == 0);
    CHECK(cuptiUnsubscribe(a.h) == CUPTI_SUCCESS);
    CHECK(alloc_once());
    CHECK(a.calls == 2 && b.calls == 4);
    return 0;
}

static void from_13_3_with_an_r610_driver_subscribers_share(void **state)
{
    (void)state;
    in_child(sharing_subscribers_each_get_their_own, "130300", "13030");
    in_child(sharing_subscribers_each_get_their_own, "130500", "13050");
}

static int a_single_mode_stays_after_its_subscriber_left(void)
{
    listener a = {0}, b = {0};
    CHECK(v2(&a, "probe", 0) == CUPTI_SUCCESS);
    CHECK(cuptiUnsubscribe(a.h) == CUPTI_SUCCESS);
    CHECK(v2(&b, "sharer", 1) == REFUSED);
    CHECK(strcmp(g_old, "CUPTI for probe") == 0); /* the subscriber that fixed the mode */
    CHECK(v2(&b, "alone", 0) == CUPTI_SUCCESS);
    return 0;
}

static int a_shared_mode_stays_after_its_subscriber_left(void)
{
    listener a = {0}, b = {0};
    CHECK(v2(&a, "first", 1) == CUPTI_SUCCESS);
    CHECK(cuptiUnsubscribe(a.h) == CUPTI_SUCCESS);
    CHECK(v2(&b, "alone", 0) == REFUSED);
    CHECK(v2(&b, "sharer", 1) == CUPTI_SUCCESS);
    return 0;
}

static void the_first_subscriber_fixes_the_mode_for_the_process(void **state)
{
    (void)state;
    in_child(a_single_mode_stays_after_its_subscriber_left, "130300", "13030");
    in_child(a_shared_mode_stays_after_its_subscriber_left, "130300", "13030");
}

static int v2_then_unversioned(void)
{
    listener a = {0}, b = {0};
    CHECK(v2(&a, "first", 1) == CUPTI_SUCCESS);
    CHECK(legacy(&b) == REFUSED);
    CHECK(cuptiUnsubscribe(a.h) == CUPTI_SUCCESS);
    CHECK(legacy(&b) == REFUSED);
    return 0;
}

static int unversioned_then_v2(void)
{
    listener a = {0}, b = {0};
    CHECK(legacy(&a) == CUPTI_SUCCESS);
    CHECK(cuptiUnsubscribe(a.h) == CUPTI_SUCCESS);
    CHECK(v2(&b, "sharer", 1) == REFUSED);
    CHECK(v2(&b, "alone", 0) == REFUSED);
    CHECK(legacy(&b) == CUPTI_SUCCESS);
    return 0;
}

static void the_two_function_families_never_mix(void **state)
{
    (void)state;
    in_child(v2_then_unversioned, "130300", "13030");
    in_child(unversioned_then_v2, "130300", "13030");
}

static int g_requested, g_completed, g_kernels, g_copies;

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    static uint64_t storage[4][512];
    *buffer = (uint8_t *)storage[g_requested++ % 4];
    *size = sizeof storage[0];
    *max_records = 0;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    g_completed++;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            g_kernels++;
        else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
            g_copies++;
    }
}

/* n store_int launches and n device-to-host copies. */
static int kernels_and_copies(int n)
{
    int *d = simtest_dev_int(0);
    for (int i = 0; i < n; i++) {
        int v = -1;
        if (simtest_store(NULL, d, i) != CUDA_SUCCESS || cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost) != 0 ||
            v != i)
            return 0;
    }
    return 1;
}

static int activity_without_a_subscription(void)
{
    CHECK(cuptiActivityRegisterCallbacks(on_request, on_complete) == CUPTI_SUCCESS);
    CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
    CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);
    CHECK(kernels_and_copies(5));
    CHECK(cuptiActivityFlushAll(0) == CUPTI_SUCCESS);
    CHECK(g_kernels == 5 && g_copies >= 5); /* simtest_dev_int's copy may add one */
    int copies = g_copies;
    CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
    CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);
    CHECK(kernels_and_copies(3));
    CHECK(cuptiActivityFlushAll(0) == CUPTI_SUCCESS);
    CHECK(g_kernels == 5 && g_copies == copies);
    return 0;
}

static void the_activity_api_needs_no_subscription(void **state)
{
    (void)state;
    in_child(activity_without_a_subscription, "130001", "13000");
    in_child(activity_without_a_subscription, "130300", "13030");
}

static int finalize_detaches(void)
{
    listener a = {0}, b = {0};
    CHECK(v2(&a, "first", 1) == CUPTI_SUCCESS);
    CHECK(v2(&b, "second", 1) == CUPTI_SUCCESS);
    CHECK(cuptiActivityRegisterCallbacks(on_request, on_complete) == CUPTI_SUCCESS);
    CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
    CHECK(cuptiUnsubscribe(b.h) == CUPTI_SUCCESS);
    CHECK(cuptiFinalize() == CUPTI_SUCCESS);
    CHECK(alloc_once());
    CHECK(kernels_and_copies(2));
    CHECK(cuptiActivityFlushAll(0) == CUPTI_SUCCESS);
    CHECK(a.calls == 0 && g_kernels == 0);
    CHECK(cuptiUnsubscribe(a.h) == CUPTI_ERROR_INVALID_PARAMETER);
    /* The mode outlives the detach. */
    CHECK(v2(&a, "alone", 0) == REFUSED);
    return 0;
}

static void finalize_ends_every_subscription(void **state)
{
    (void)state;
    in_child(finalize_detaches, "130300", "13030");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(before_13_3_or_an_r610_driver_nothing_is_shared),
        cmocka_unit_test(from_13_3_with_an_r610_driver_subscribers_share),
        cmocka_unit_test(the_first_subscriber_fixes_the_mode_for_the_process),
        cmocka_unit_test(the_two_function_families_never_mix),
        cmocka_unit_test(the_activity_api_needs_no_subscription),
        cmocka_unit_test(finalize_ends_every_subscription),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
