/* Unit tests of shim/hooks/capsule.c: naming the framework of a capsule's caller; an exchange made
 * through a capsule says which kind (the fix line of its race reports depends on it); the table of
 * capsules made but not taken apart yet (bounded, the oldest give way, safe across threads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "hooks/capsule.h"
#include "hooks/capsule_rows.h"
#include "hooks/exchange.h"
#include "hooks/policy_hooks.h"

static void frameworks_named_from_the_calling_object(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"/usr/lib/python3/dist-packages/numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "numpy"},
        {"/v/lib/python3.11/site-packages/jaxlib/xla_extension.so", "jax"},
        {"/v/lib/python3.11/site-packages/jax/_src/lib/_jax.so", "jax"},
        {"/v/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so", "tensorflow"},
        {"/v/site-packages/paddle/base/libpaddle.so", "paddle"},
        {"/usr/lib/x86_64-linux-gnu/libtorch_python.so.1.13", "pytorch"},
        {"/v/site-packages/tvm_ffi/lib/libtvm_ffi.so", "tvm-ffi"},
        {"/v/site-packages/cupy/_core/dlpack.cpython-311-x86_64-linux-gnu.so", "cupy"},
        {"/v/site-packages/mxnet/libmxnet.so", "mxnet"},
        {"/opt/lib/libmyfw.so.2", "libmyfw.so.2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[32];
        assert_string_equal(dls_capsule_framework(cases[i][0], buf, sizeof buf), cases[i][1]);
    }
}

static void capsule_functions_are_hooked(void **state)
{
    (void)state;
    size_t n;
    const dls_engine_hook *h = dls_capsule_hooks(&n);
    assert_int_equal(n, 3);
    assert_string_equal(h[0].name, "PyCapsule_New");
    assert_string_equal(h[1].name, "PyCapsule_SetName");
    assert_true(h[0].by_dlsym && h[1].by_dlsym);
}

static void *fake_capsule_new(void *pointer, const char *name, void *destructor)
{
    (void)name;
    (void)destructor;
    return pointer; /* any non-NULL capsule */
}

static void *fake_capsule_get_pointer(void *capsule, const char *name)
{
    (void)name;
    return capsule; /* the fake capsule is its pointer */
}

static void *note_export(void *ctx, const dls_exchange *x)
{
    *(dls_xpath *)ctx = x->path;
    return x->policy;
}

/* The hooked PyCapsule_New and PyCapsule_GetPointer, over the fakes above. */
static void *(*hooked_new(void))(void *, const char *, void *)
{
    size_t n;
    const dls_engine_hook *h = dls_capsule_hooks(&n);
    return (void *(*)(void *, const char *, void *))h[0].entry_for((void *)fake_capsule_new);
}

static void *(*hooked_get_pointer(void))(void *, const char *)
{
    size_t n;
    const dls_engine_hook *h = dls_capsule_hooks(&n);
    return (void *(*)(void *, const char *))h[2].entry_for((void *)fake_capsule_get_pointer);
}

static void noop_deleter(void *self)
{
    (void)self;
}

/* Exports a fresh float[4] tensor through the hooked PyCapsule_New under `name`; returns the path
 * of the exchange the observer was told about (DLS_XPATH_N_: none). */
static dls_xpath exported_path(const char *name, int versioned)
{
    static float data[4];
    static int64_t shape[1] = {4};
    static DLManagedTensorVersioned v1;
    static DLManagedTensor v0;
    DLTensor t = {.data = data, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
    void *mt;
    if (versioned) {
        v1 = (DLManagedTensorVersioned){
            .version = {1, 0}, .deleter = (void (*)(DLManagedTensorVersioned *))noop_deleter, .dl_tensor = t};
        mt = &v1;
    } else {
        v0 = (DLManagedTensor){.dl_tensor = t, .deleter = (void (*)(DLManagedTensor *))noop_deleter};
        mt = &v0;
    }
    dls_xpath path = DLS_XPATH_N_;
    dls_exchange_observer obs = {.on_export = note_export, .ctx = &path};
    dls_exchange_set_observer(&obs);
    assert_ptr_equal(hooked_new()(mt, name, NULL), mt);
    assert_int_equal(path, DLS_XPATH_N_); /* not read at creation */
    assert_ptr_equal(hooked_get_pointer()(mt, name), mt);
    dls_exchange_set_observer(NULL);
    dls_exchange_reset_for_tests();
    return path;
}

static void *note_range(void *ctx, const dls_exchange *x)
{
    *(uintptr_t *)ctx = x->hi - x->lo;
    return x->policy;
}

/* CuPy makes the capsule first and fills the tensor after: at creation it is garbage, and only
 * the tensor as the consumer takes it is read. */
static void tensor_is_read_when_the_capsule_is_taken(void **state)
{
    (void)state;
    static float data[4];
    static int64_t shape[1] = {4};
    static DLManagedTensor t;
    memset(&t, 0xA5, sizeof t); /* ndim, shape, device: all garbage */
    uintptr_t bytes = 0;
    dls_exchange_observer obs = {.on_export = note_range, .ctx = &bytes};
    dls_exchange_set_observer(&obs);
    assert_ptr_equal(hooked_new()(&t, "dltensor", NULL), &t);
    t = (DLManagedTensor){
        .dl_tensor = {.data = data, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape},
        .deleter = (void (*)(DLManagedTensor *))noop_deleter};
    assert_int_equal(bytes, 0);
    assert_ptr_equal(hooked_get_pointer()(&t, "dltensor"), &t);
    assert_int_equal(bytes, sizeof data);
    dls_exchange_set_observer(NULL);
    dls_exchange_reset_for_tests();
}

static void capsule_exchanges_say_which_capsule(void **state)
{
    (void)state;
    assert_int_equal(exported_path("dltensor_versioned", 1), DLS_XPATH_PROTOCOL);
    assert_int_equal(exported_path("dltensor", 0), DLS_XPATH_LEGACY_CAPSULE);
}

static atomic_int g_exports, g_imports;

static void *count_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    atomic_fetch_add(&g_exports, 1);
    return x->policy;
}

static void *count_import(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    atomic_fetch_add(&g_imports, 1);
    return x->policy;
}

static int fake_capsule_set_name(void *capsule, const char *name)
{
    (void)capsule;
    (void)name;
    return 0;
}

/* The hooked PyCapsule_SetName, over the fake above. */
static int (*hooked_set_name(void))(void *, const char *)
{
    size_t n;
    const dls_engine_hook *h = dls_capsule_hooks(&n);
    return (int (*)(void *, const char *))h[1].entry_for((void *)fake_capsule_set_name);
}

static void count_released(DLManagedTensor *self)
{
    (void)self;
}

static void fresh_tensor(DLManagedTensor *m)
{
    static float data[4];
    static int64_t shape[1] = {4};
    *m = (DLManagedTensor){
        .dl_tensor = {.data = data, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape},
        .deleter = count_released};
}

/* At most 256 capsules are remembered untaken: of 300 made before any is taken, the 44 oldest
 * export nothing when taken (their tensors are then imported as foreign ones), the 256 newest
 * export once each; a capsule made again for the same tensor is one entry. */
static void untaken_capsules_are_bounded_oldest_first(void **state)
{
    (void)state;
    enum { N = 300, KEPT = 256 };
    static DLManagedTensor t[N];
    dls_exchange_observer obs = {.on_export = count_export};
    dls_exchange_set_observer(&obs);
    atomic_store(&g_exports, 0);
    void *(*cap_new)(void *, const char *, void *) = hooked_new();
    void *(*get)(void *, const char *) = hooked_get_pointer();
    for (int i = 0; i < N; i++) {
        fresh_tensor(&t[i]);
        assert_ptr_equal(cap_new(&t[i], "dltensor", NULL), &t[i]);
    }
    assert_ptr_equal(cap_new(&t[N - 1], "dltensor", NULL), &t[N - 1]); /* made again: still one */
    for (int i = 0; i < N; i++) {
        int before = atomic_load(&g_exports);
        assert_ptr_equal(get(&t[i], "dltensor"), &t[i]);
        assert_int_equal(atomic_load(&g_exports) - before, i >= N - KEPT);
        assert_ptr_equal(get(&t[i], "dltensor"), &t[i]); /* taken again: exported already */
        assert_int_equal(atomic_load(&g_exports) - before, i >= N - KEPT);
    }
    for (int i = 0; i < N; i++)
        t[i].deleter(&t[i]);
    assert_int_equal(dls_exchange_live(), 0);
    dls_exchange_set_observer(NULL);
    dls_exchange_reset_for_tests();
}

enum { THREADS = 4, ROUNDS = 2000, BATCH = 8 };

/* One producer-consumer thread: makes BATCH capsules, takes them apart in the other order,
 * renames them (the import) and releases the tensors, ROUNDS times. */
static void *make_and_take(void *arg)
{
    void *(*cap_new)(void *, const char *, void *) = hooked_new();
    void *(*get)(void *, const char *) = hooked_get_pointer();
    int (*rename)(void *, const char *) = hooked_set_name();
    DLManagedTensor *t = arg;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < BATCH; i++) {
            fresh_tensor(&t[i]);
            if (cap_new(&t[i], "dltensor", NULL) != &t[i])
                return "capsule";
        }
        for (int i = BATCH - 1; i >= 0; i--) {
            if (get(&t[i], "dltensor") != &t[i])
                return "get";
            if (t[i].deleter == count_released)
                return "not exported";
            if (rename(&t[i], "used_dltensor") != 0)
                return "rename";
            t[i].deleter(&t[i]);
        }
    }
    return NULL;
}

/* Threads making, taking and renaming capsules at once: every capsule exports and imports
 * exactly once. */
static void capsules_of_several_threads_export_once_each(void **state)
{
    (void)state;
    static DLManagedTensor t[THREADS][BATCH];
    dls_exchange_observer obs = {.on_export = count_export, .on_import = count_import};
    dls_exchange_set_observer(&obs);
    atomic_store(&g_exports, 0);
    atomic_store(&g_imports, 0);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, make_and_take, t[i]), 0);
    for (int i = 0; i < THREADS; i++) {
        void *err;
        assert_int_equal(pthread_join(th[i], &err), 0);
        assert_null(err);
    }
    assert_int_equal(atomic_load(&g_exports), THREADS * ROUNDS * BATCH);
    assert_int_equal(atomic_load(&g_imports), THREADS * ROUNDS * BATCH);
    assert_int_equal(dls_exchange_live(), 0);
    dls_exchange_set_observer(NULL);
    dls_exchange_reset_for_tests();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frameworks_named_from_the_calling_object),
        cmocka_unit_test(capsule_functions_are_hooked),
        cmocka_unit_test(capsule_exchanges_say_which_capsule),
        cmocka_unit_test(tensor_is_read_when_the_capsule_is_taken),
        cmocka_unit_test(untaken_capsules_are_bounded_oldest_first),
        cmocka_unit_test(capsules_of_several_threads_export_once_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
