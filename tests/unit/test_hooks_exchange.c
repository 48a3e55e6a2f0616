/* Unit tests of the exchange path (shim/hooks/wrap.c, exchange.c): registry lookups, deleter
 * swapping, observer calls in order, double release, re-import keeping the exchange id, several
 * threads exchanging at once while the registry grows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>

#include "hooks/exchange.h"
#include "hooks/policy_hooks.h"
#include "hooks/wrap.h"
#include "report/summary.h"
#include "test_profile_find.h"

static int g_producer_releases;
static char g_events[256];
static uint64_t g_last_xid;

static void producer_deleter(DLManagedTensor *self)
{
    (void)self;
    g_producer_releases++;
    strcat(g_events, "P");
}

static void on_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    g_last_xid = x->xid;
    strcat(g_events, "E");
}

static void on_import(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    g_last_xid = x->xid;
    strcat(g_events, "I");
}

static void on_release(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    g_last_xid = x->xid;
    strcat(g_events, "R");
}

static void on_double(void *ctx, const void *tensor, uint64_t xid)
{
    (void)ctx;
    (void)tensor;
    g_last_xid = xid;
    strcat(g_events, "D");
}

static const dls_exchange_observer g_obs = {on_export, on_import, on_release, on_double, NULL};
static float g_data[8];
static int64_t g_shape[1] = {8};

static void make(DLManagedTensor *m)
{
    memset(m, 0, sizeof *m);
    m->dl_tensor.data = g_data;
    m->dl_tensor.device = (DLDevice){kDLCPU, 0};
    m->dl_tensor.ndim = 1;
    m->dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    m->dl_tensor.shape = g_shape;
    m->deleter = producer_deleter;
}

static int setup(void **state)
{
    (void)state;
    dls_exchange_reset_for_tests();
    dls_exchange_set_observer(&g_obs);
    g_producer_releases = 0;
    g_events[0] = '\0';
    return 0;
}

static void export_import_release_in_order(void **state)
{
    (void)state;
    DLManagedTensor m;
    make(&m);
    assert_int_equal(dls_exchange_imports(&m), -1);
    dls_wrap_export(builtin_profile("MXNDArrayToDLPack"), "lib", &m);
    assert_ptr_equal(m.deleter, (void *)dls_exchange_deleter);
    assert_int_equal(dls_exchange_imports(&m), 0);
    uint64_t xid = g_last_xid;
    dls_exchange x;
    assert_int_equal(dls_exchange_find_tensor(&m, &x), 0);
    assert_int_equal(x.xid, xid);
    assert_int_equal(x.hi - x.lo, 32);
    assert_true(x.lo <= (uintptr_t)&g_data[7] && x.hi == (uintptr_t)&g_data[7] + 4);
    dls_wrap_import(builtin_profile("MXNDArrayFromDLPack"), "lib", &m);
    assert_int_equal(g_last_xid, xid); /* same exchange */
    assert_int_equal(dls_exchange_find_tensor(&m, &x), 0);
    assert_int_equal(x.imports, 1);
    assert_int_equal(dls_exchange_imports(&m), 1);
    assert_string_equal(x.consumer->symbol, "MXNDArrayFromDLPack");
    m.deleter(&m);
    assert_int_equal(dls_exchange_imports(&m), -1);
    assert_string_equal(g_events, "EIRP"); /* on_release runs before the producer's deleter */
    assert_int_equal(g_producer_releases, 1);
    assert_int_equal(dls_exchange_live(), 0);
}

static void second_release_is_reported_not_passed_on(void **state)
{
    (void)state;
    DLManagedTensor m;
    make(&m);
    uint64_t before = dls_summary_get(DLS_COUNT_DOUBLE_RELEASES);
    dls_wrap_export(builtin_profile("MXNDArrayToDLPack"), "lib", &m);
    uint64_t xid = g_last_xid;
    m.deleter(&m);
    m.deleter(&m);
    assert_int_equal(g_producer_releases, 1);
    assert_string_equal(g_events, "ERPD");
    assert_int_equal(g_last_xid, xid);
    assert_int_equal(dls_summary_get(DLS_COUNT_DOUBLE_RELEASES), before + 1);
}

static void foreign_import_gets_an_id_and_release_is_seen(void **state)
{
    (void)state;
    DLManagedTensor m;
    make(&m);
    dls_wrap_import(builtin_profile("_ZN2at10fromDLPackEPK15DLManagedTensor"), "lib", &m);
    assert_ptr_equal(m.deleter, (void *)dls_exchange_deleter);
    dls_exchange x;
    assert_int_equal(dls_exchange_find_tensor(&m, &x), 0);
    assert_null(x.producer);
    assert_int_equal(dls_exchange_set_policy(&m, &g_events), 0);
    assert_int_equal(dls_exchange_find_tensor(&m, &x), 0);
    assert_ptr_equal(x.policy, &g_events);
    m.deleter(&m);
    assert_string_equal(g_events, "IRP");
}

static void malformed_tensor_left_untouched(void **state)
{
    (void)state;
    DLManagedTensor m;
    make(&m);
    m.dl_tensor.ndim = -2;
    uint64_t before = dls_summary_get(DLS_COUNT_MALFORMED);
    dls_wrap_import(builtin_profile("MXNDArrayFromDLPack"), "lib", &m);
    assert_ptr_equal(m.deleter, (void *)producer_deleter);
    assert_int_equal(dls_exchange_live(), 0);
    assert_string_equal(g_events, "");
    assert_int_equal(dls_summary_get(DLS_COUNT_MALFORMED), before + 1);
    dls_wrap_import(builtin_profile("MXNDArrayFromDLPack"), "lib", NULL);
    assert_int_equal(dls_summary_get(DLS_COUNT_MALFORMED), before + 2);
}

static void versioned_tensor_and_null_deleter(void **state)
{
    (void)state;
    DLManagedTensorVersioned v;
    memset(&v, 0, sizeof v);
    v.version.major = 1;
    v.dl_tensor.data = g_data;
    v.dl_tensor.device = (DLDevice){kDLCPU, 0};
    v.dl_tensor.ndim = 1;
    v.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    v.dl_tensor.shape = g_shape;
    dls_wrap_export(builtin_profile("_ZN2at17toDLPackVersionedERKNS_6TensorE"), "lib", &v);
    assert_null(v.deleter); /* nothing to observe: not registered, left as it was */
    assert_int_equal(dls_exchange_live(), 0);
    assert_string_equal(g_events, "E");
}

static void registry_grows_and_deletes_correctly(void **state)
{
    (void)state;
    enum { N = 300 };
    static char tensors[N];
    for (int i = 0; i < N; i++) {
        dls_exchange x = {.xid = (uint64_t)i + 1, .tensor = &tensors[i], .lo = 1000u * i, .hi = 1000u * i + 10};
        assert_int_equal(dls_exchange_add(&x), 0);
    }
    assert_int_equal(dls_exchange_live(), N);
    for (int i = 0; i < N; i += 2)
        assert_int_equal(dls_exchange_remove(&tensors[i], NULL, NULL), 0);
    for (int i = 0; i < N; i++) {
        dls_exchange x;
        int rc = dls_exchange_find_tensor(&tensors[i], &x);
        assert_int_equal(rc, i % 2 ? 0 : -1);
        if (i % 2)
            assert_int_equal(x.xid, (uint64_t)i + 1);
    }
    assert_int_equal(dls_exchange_removed_xid(&tensors[298]), 299);
    assert_int_equal(dls_exchange_removed_xid(&tensors[1]), 0);
    dls_exchange y;
    assert_int_equal(dls_exchange_find_tensor(&tensors[7], &y), 0);
    assert_true(y.lo <= 1000u * 7 + 3 && 1000u * 7 + 3 < y.hi);
}

static atomic_int g_counts[3]; /* exports, imports, releases seen by the counting observer */
static atomic_int g_released_by_producer;

static void count_event(int which)
{
    atomic_fetch_add(&g_counts[which], 1);
}

static void count_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    (void)x;
    count_event(0);
}

static void count_import(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    dls_exchange live;
    /* The entry a thread reads is whole: its own tensor, imported once by now. */
    if (dls_exchange_find_tensor(x->tensor, &live) == 0 && live.tensor == x->tensor && live.imports == 1)
        count_event(1);
}

static void count_release(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    (void)x;
    count_event(2);
}

static void producer_counts(DLManagedTensor *self)
{
    (void)self;
    atomic_fetch_add(&g_released_by_producer, 1);
}

enum { THREADS = 4, ROUNDS = 300, HELD = 48 };

/* One thread: exports HELD tensors (the registry grows while the others do the same), imports
 * them and releases them, ROUNDS times. */
static void *exchange_many(void *arg)
{
    DLManagedTensor *t = arg;
    const dls_profile *to = builtin_profile("MXNDArrayToDLPack"), *from = builtin_profile("MXNDArrayFromDLPack");
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < HELD; i++) {
            make(&t[i]);
            t[i].deleter = producer_counts;
            dls_wrap_export(to, "lib", &t[i]);
        }
        for (int i = 0; i < HELD; i++)
            dls_wrap_import(from, "lib", &t[i]);
        for (int i = HELD - 1; i >= 0; i--)
            t[i].deleter(&t[i]);
    }
    return NULL;
}

static void threads_exchange_at_once(void **state)
{
    (void)state;
    static DLManagedTensor t[THREADS][HELD];
    static const dls_exchange_observer counting = {count_export, count_import, count_release, NULL, NULL};
    dls_exchange_set_observer(&counting);
    for (int i = 0; i < 3; i++)
        atomic_store(&g_counts[i], 0);
    atomic_store(&g_released_by_producer, 0);
    static const dls_counter counted[] = {DLS_COUNT_EXCHANGES, DLS_COUNT_EXPORTS, DLS_COUNT_IMPORTS,
                                          DLS_COUNT_RELEASES};
    uint64_t before[4];
    for (int i = 0; i < 4; i++)
        before[i] = dls_summary_get(counted[i]);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, exchange_many, t[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atomic_load(&g_counts[i]), THREADS * ROUNDS * HELD);
    assert_int_equal(atomic_load(&g_released_by_producer), THREADS * ROUNDS * HELD);
    assert_int_equal(dls_exchange_live(), 0);
    for (int i = 0; i < 4; i++) /* the summary's totals are exact */
        assert_int_equal(dls_summary_get(counted[i]) - before[i], THREADS * ROUNDS * HELD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(export_import_release_in_order, setup),
        cmocka_unit_test_setup(second_release_is_reported_not_passed_on, setup),
        cmocka_unit_test_setup(foreign_import_gets_an_id_and_release_is_seen, setup),
        cmocka_unit_test_setup(malformed_tensor_left_untouched, setup),
        cmocka_unit_test_setup(versioned_tensor_and_null_deleter, setup),
        cmocka_unit_test_setup(registry_grows_and_deletes_correctly, setup),
        cmocka_unit_test_setup(threads_exchange_at_once, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
