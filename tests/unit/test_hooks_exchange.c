/* Unit tests of the exchange path (shim/hooks/wrap.c, exchange.c): registry lookups, deleter
 * swapping, observer calls in order, double release, re-import keeping the exchange id, several
 * threads exchanging at once while the registry grows, with and without an observer (when
 * nobody hears of an exchange, its entry is not copied out of the registry). */
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
#include "report/log.h"
#include "report/nvtx.h"
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

static void *g_keep;          /* what the observer returns for the registry to keep; NULL: nothing new */
static void *g_released_keep; /* the kept pointer on_release saw */

static void *on_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    g_last_xid = x->xid;
    strcat(g_events, "E");
    return g_keep ? g_keep : x->policy;
}

static void *on_import(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    g_last_xid = x->xid;
    strcat(g_events, "I");
    return g_keep ? g_keep : x->policy;
}

static void on_release(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    g_last_xid = x->xid;
    g_released_keep = x->policy;
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
    g_keep = g_released_keep = NULL;
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
    g_keep = &g_events;
    dls_wrap_import(builtin_profile("_ZN2at10fromDLPackEPK15DLManagedTensor"), "lib", &m);
    assert_ptr_equal(m.deleter, (void *)dls_exchange_deleter);
    dls_exchange x;
    assert_int_equal(dls_exchange_find_tensor(&m, &x), 0);
    assert_null(x.producer);
    assert_ptr_equal(x.policy, &g_events); /* what on_import returned, kept by the wrapper */
    m.deleter(&m);
    assert_ptr_equal(g_released_keep, &g_events);
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
    static uint64_t xids[N];
    DLTensor dl = {.data = NULL, .device = {kDLCPU, 0}, .dtype = {kDLFloat, 32, 1}};
    for (int i = 0; i < N; i++) {
        dls_exchange_origin o = {.at = builtin_profile("MXNDArrayToDLPack"),
                                 .lib = "lib",
                                 .tensor = &tensors[i],
                                 .view = {.tensor = &dl},
                                 .extent = {1000 * i, 1000 * i + 10},
                                 .is_export = 1};
        xids[i] = dls_exchange_add(&o, NULL);
        assert_int_not_equal(xids[i], 0);
    }
    assert_int_equal(dls_exchange_live(), N);
    for (int i = 0; i < N; i += 2)
        assert_int_equal(dls_exchange_remove(&tensors[i], NULL, NULL), 0);
    for (int i = 0; i < N; i++) {
        dls_exchange x;
        int rc = dls_exchange_find_tensor(&tensors[i], &x);
        assert_int_equal(rc, i % 2 ? 0 : -1);
        if (i % 2)
            assert_int_equal(x.xid, xids[i]);
    }
    assert_int_equal(dls_exchange_removed_xid(&tensors[298]), xids[298]);
    assert_int_equal(dls_exchange_removed_xid(&tensors[1]), 0);
    dls_exchange y;
    assert_int_equal(dls_exchange_find_tensor(&tensors[7], &y), 0);
    assert_true(y.lo <= 1000u * 7 + 3 && 1000u * 7 + 3 < y.hi);
}

static int64_t g_strides[1] = {1};

/* A producer's deleter that only counts (g_events would not hold hundreds of calls). */
static void producer_counts_quietly(DLManagedTensor *self)
{
    (void)self;
    g_producer_releases++;
}

/* An export nobody hears of (no observer, the log off) registers the same entry as one an
 * observer hears of, for a tensor with strides (measured inline) and one without. */
static void untold_export_registers_the_told_entry(void **state)
{
    (void)state;
    dls_exchange_set_observer(NULL);
    assert_int_equal(dls_log_enabled(), 0);
    assert_int_equal(dls_nvtx_active(), 0);
    const dls_profile *to = builtin_profile("MXNDArrayToDLPack");
    for (int strided = 0; strided < 2; strided++) {
        DLManagedTensor told, untold;
        make(&told);
        make(&untold);
        told.dl_tensor.strides = untold.dl_tensor.strides = strided ? g_strides : NULL;
        told.dl_tensor.byte_offset = untold.dl_tensor.byte_offset = 4;
        dls_exchange_set_observer(&g_obs);
        dls_wrap_export(to, "lib", &told);
        dls_exchange_set_observer(NULL);
        uint64_t exports = dls_summary_get(DLS_COUNT_EXPORTS), exchanges = dls_summary_get(DLS_COUNT_EXCHANGES);
        dls_wrap_export(to, "lib", &untold);
        assert_int_equal(dls_summary_get(DLS_COUNT_EXPORTS), exports + 1);
        assert_int_equal(dls_summary_get(DLS_COUNT_EXCHANGES), exchanges + 1);
        assert_ptr_equal(untold.deleter, (void *)dls_exchange_deleter);
        dls_exchange a, b;
        assert_int_equal(dls_exchange_find_tensor(&told, &a), 0);
        assert_int_equal(dls_exchange_find_tensor(&untold, &b), 0);
        assert_int_equal(b.xid, a.xid + 1);
        assert_ptr_equal(b.tensor, &untold);
        assert_ptr_equal(b.data, g_data);
        assert_int_equal(b.lo - (uintptr_t)g_data, 4);
        assert_int_equal(b.hi - b.lo, a.hi - a.lo);
        assert_int_equal(b.hi - (uintptr_t)g_data, 36);
        assert_int_equal(b.device.device_type, a.device.device_type);
        assert_int_equal(b.dtype.bits, a.dtype.bits);
        assert_int_equal(b.versioned, a.versioned);
        assert_int_equal(b.flags, a.flags);
        assert_ptr_equal(b.producer, a.producer);
        assert_string_equal(b.producer_lib, a.producer_lib);
        assert_null(b.consumer);
        assert_ptr_equal(b.seen_at, a.seen_at);
        assert_int_equal(b.path, a.path);
        assert_int_equal(b.imports, 0);
        assert_ptr_equal((void *)b.deleter, (void *)producer_deleter);
        assert_null(b.policy);
        /* Handed out again as it is: the same exchange, counted as an export only. */
        dls_wrap_export(to, "lib", &untold);
        assert_int_equal(dls_summary_get(DLS_COUNT_EXPORTS), exports + 2);
        assert_int_equal(dls_summary_get(DLS_COUNT_EXCHANGES), exchanges + 1);
        assert_int_equal(dls_exchange_find_tensor(&untold, &b), 0);
        assert_int_equal(b.xid, a.xid + 1);
        untold.deleter(&untold);
        assert_int_equal(g_producer_releases, 1);
        uint64_t doubles = dls_summary_get(DLS_COUNT_DOUBLE_RELEASES);
        untold.deleter(&untold); /* reported, not passed on */
        assert_int_equal(g_producer_releases, 1);
        assert_int_equal(dls_summary_get(DLS_COUNT_DOUBLE_RELEASES), doubles + 1);
        assert_int_equal(dls_exchange_removed_xid(&untold), a.xid + 1);
        told.deleter(&told);
        assert_int_equal(g_producer_releases, 2);
        assert_int_equal(dls_exchange_live(), 0);
        g_producer_releases = 0;
    }
    DLManagedTensor none; /* no deleter: counted, not registered */
    make(&none);
    none.dl_tensor.strides = g_strides;
    none.deleter = NULL;
    uint64_t exchanges = dls_summary_get(DLS_COUNT_EXCHANGES);
    dls_wrap_export(to, "lib", &none);
    assert_null(none.deleter);
    assert_int_equal(dls_exchange_live(), 0);
    assert_int_equal(dls_summary_get(DLS_COUNT_EXCHANGES), exchanges + 1);
}

/* Exports and releases nobody hears of keep the registry whole while it grows and shrinks
 * (entries shifted back on removal), in any release order. */
static void untold_registry_grows_and_shrinks(void **state)
{
    (void)state;
    dls_exchange_set_observer(NULL);
    enum { N = 700 };
    static DLManagedTensor t[N];
    const dls_profile *to = builtin_profile("MXNDArrayToDLPack");
    for (int i = 0; i < N; i++) {
        make(&t[i]);
        t[i].dl_tensor.strides = g_strides;
        t[i].deleter = producer_counts_quietly;
        dls_wrap_export(to, "lib", &t[i]);
    }
    assert_int_equal(dls_exchange_live(), N);
    static char released[N];
    for (int k = 0; k < N; k++) {
        int i = (k * 337) % N; /* every tensor once, scattered */
        t[i].deleter(&t[i]);
        released[i] = 1;
        assert_int_equal(dls_exchange_live(), N - 1 - k);
        if (k % 50 == 0)
            for (int j = 0; j < N; j++)
                assert_int_equal(dls_exchange_find_tensor(&t[j], NULL), released[j] ? -1 : 0);
    }
    assert_int_equal(g_producer_releases, N);
    for (int j = 0; j < N; j++)
        assert_int_equal(dls_exchange_find_tensor(&t[j], NULL), -1);
}

static atomic_int g_counts[3]; /* exports, imports, releases seen by the counting observer */
static atomic_int g_released_by_producer;

static void count_event(int which)
{
    atomic_fetch_add(&g_counts[which], 1);
}

/* Keeps the tensor's own pointer in its entry, which the import and the release see again. */
static void *count_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    count_event(0);
    return (void *)x->tensor;
}

static void *count_import(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    dls_exchange live;
    /* The entry a thread reads is whole: its own tensor, imported once by now, with the pointer
     * its export kept. */
    if (dls_exchange_find_tensor(x->tensor, &live) == 0 && live.tensor == x->tensor && live.imports == 1 &&
        x->policy == x->tensor)
        count_event(1);
    return x->policy;
}

static void count_release(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    if (x->policy == x->tensor)
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

/* THREADS threads run exchange_many at once, heard of by `obs` (NULL: by nobody). */
static void exchange_in_threads(const dls_exchange_observer *obs)
{
    static DLManagedTensor t[THREADS][HELD];
    dls_exchange_set_observer(obs);
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
        assert_int_equal(atomic_load(&g_counts[i]), obs ? THREADS * ROUNDS * HELD : 0);
    assert_int_equal(atomic_load(&g_released_by_producer), THREADS * ROUNDS * HELD);
    assert_int_equal(dls_exchange_live(), 0);
    for (int i = 0; i < 4; i++) /* the summary's totals are exact */
        assert_int_equal(dls_summary_get(counted[i]) - before[i], THREADS * ROUNDS * HELD);
}

static void threads_exchange_at_once(void **state)
{
    (void)state;
    static const dls_exchange_observer counting = {count_export, count_import, count_release, NULL, NULL};
    exchange_in_threads(&counting);
}

static void threads_exchange_at_once_unheard(void **state)
{
    (void)state;
    exchange_in_threads(NULL);
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
        cmocka_unit_test_setup(untold_export_registers_the_told_entry, setup),
        cmocka_unit_test_setup(untold_registry_grows_and_shrinks, setup),
        cmocka_unit_test_setup(threads_exchange_at_once, setup),
        cmocka_unit_test_setup(threads_exchange_at_once_unheard, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
