/* Unit tests of shim/hooks/exchange_api.c: which fields of a DLPack C exchange API table are
 * replaced, which tables are wrapped at all (versions), that the framework's own wrapped entry
 * points called behind the table pass straight through (one exchange, not two), and that the
 * non-owning exports made through it are retired (wrap.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "hooks/exchange.h"
#include "hooks/exchange_api.h"
#include "hooks/policy_hooks.h"
#include "hooks/profiles.h"
#include "hooks/wrap.h"

static float g_data[4];
static int64_t g_shape[1] = {4};
static DLManagedTensorVersioned g_tensor;
static int g_nested_enter = -1; /* what dls_wrap_enter said inside the framework's function */

static void noop_deleter(DLManagedTensorVersioned *self)
{
    (void)self;
}

static int fake_from_py(void *py, DLManagedTensorVersioned **out)
{
    (void)py;
    g_nested_enter = dls_wrap_enter(); /* as a trampoline of the framework's own to_dlpack would */
    if (g_nested_enter)
        dls_wrap_leave();
    g_tensor = (DLManagedTensorVersioned){
        .version = {1, 3},
        .deleter = noop_deleter,
        .dl_tensor = {.data = g_data, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = g_shape},
    };
    *out = &g_tensor;
    return 0;
}

static int fake_stream(DLDeviceType type, int32_t id, void **out)
{
    (void)type;
    (void)id;
    *out = (void *)0x5000;
    return 0;
}

static int fake_allocator(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                          void (*set_error)(void *error_ctx, const char *kind, const char *message))
{
    (void)prototype;
    (void)out;
    (void)error_ctx;
    (void)set_error;
    return -1;
}

static void table_of_version_1_3_is_wrapped_field_by_field(void **state)
{
    (void)state;
    static const dls_dlpack_exchange_api api = {
        .header = {.version = {1, 3}},
        .managed_tensor_allocator = fake_allocator,
        .managed_tensor_from_py_object_no_sync = fake_from_py,
        .current_work_stream = fake_stream,
    };
    const dls_dlpack_exchange_api *w = dls_exchange_api_wrap(&api);
    assert_ptr_not_equal(w, &api);
    assert_ptr_equal(dls_exchange_api_wrap(&api), w); /* one copy per table */
    assert_int_equal(w->header.version.major, 1);
    assert_int_equal(w->header.version.minor, 3);
    assert_null(w->header.prev_api);
    assert_ptr_equal(w->managed_tensor_allocator, fake_allocator);
    assert_non_null(w->managed_tensor_from_py_object_no_sync);
    assert_ptr_not_equal(w->managed_tensor_from_py_object_no_sync, fake_from_py);
    assert_ptr_not_equal(w->current_work_stream, fake_stream);
    assert_null(w->managed_tensor_to_py_object_no_sync); /* absent fields stay absent */
    assert_null(w->dltensor_from_py_object_no_sync);
    void *stream = NULL;
    assert_int_equal(w->current_work_stream(kDLCUDA, 0, &stream), 0);
    assert_ptr_equal(stream, (void *)0x5000);
}

static int g_exports;
static const char *g_seen_at;

static void *note_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    g_exports++;
    g_seen_at = dls_profile_name(x->seen_at);
    return x->policy;
}

static void calls_behind_the_table_pass_straight_through(void **state)
{
    (void)state;
    static const dls_dlpack_exchange_api api = {
        .header = {.version = {1, 2}},
        .managed_tensor_from_py_object_no_sync = fake_from_py,
        .current_work_stream = fake_stream,
    };
    const dls_dlpack_exchange_api *w = dls_exchange_api_wrap(&api);
    dls_exchange_observer obs = {.on_export = note_export};
    dls_exchange_set_observer(&obs);
    DLManagedTensorVersioned *t = NULL;
    assert_int_equal(w->managed_tensor_from_py_object_no_sync(NULL, &t), 0);
    dls_exchange_set_observer(NULL);
    assert_ptr_equal(t, &g_tensor);
    assert_int_equal(g_nested_enter, 0);
    assert_int_equal(g_exports, 1);
    assert_string_equal(g_seen_at, "DLPackExchangeAPI.managed_tensor_from_py_object_no_sync");
    assert_int_equal(dls_wrap_enter(), 1); /* and the thread is out of it again */
    dls_wrap_leave();
    t->deleter(t);
    dls_exchange_reset_for_tests();
}

static int fake_view(void *py, DLTensor *out)
{
    (void)py;
    *out = (DLTensor){.data = g_data, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = g_shape};
    return 0;
}

static int g_releases;

static void note_release(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    (void)x;
    g_releases++;
}

/* A non-owning view has no deleter: it is retired when its DLTensor is filled again, or when 256
 * later ones are live; the observer hears each retirement as a release, and the registry stays
 * bounded. */
static void non_owning_exports_are_retired(void **state)
{
    (void)state;
    static const dls_dlpack_exchange_api api = {
        .header = {.version = {1, 3}},
        .dltensor_from_py_object_no_sync = fake_view,
        .current_work_stream = fake_stream,
    };
    const dls_dlpack_exchange_api *w = dls_exchange_api_wrap(&api);
    dls_exchange_observer obs = {.on_export = note_export, .on_release = note_release};
    dls_exchange_set_observer(&obs);
    g_exports = g_releases = 0;
    DLTensor one;
    for (int i = 0; i < 300; i++)
        assert_int_equal(w->dltensor_from_py_object_no_sync(NULL, &one), 0);
    assert_int_equal(g_exports, 300);
    assert_int_equal(g_releases, 299); /* each refill retires the view before it */
    assert_int_equal(dls_exchange_live(), 1);
    static DLTensor many[300];
    g_releases = 0;
    for (int i = 0; i < 300; i++)
        assert_int_equal(w->dltensor_from_py_object_no_sync(NULL, &many[i]), 0);
    assert_int_equal(g_releases, 1 + 300 - 256); /* `one`'s view, then the oldest */
    assert_int_equal(dls_exchange_live(), 256);
    dls_exchange_set_observer(NULL);
    dls_exchange_reset_for_tests();
}

/* A later minor version may append fields a copy would lack; another major version has another
 * layout: both are handed out as they are. */
static void other_versions_are_not_wrapped(void **state)
{
    (void)state;
    static const dls_dlpack_exchange_api newer = {.header = {.version = {1, 4}}, .current_work_stream = fake_stream};
    static const dls_dlpack_exchange_api major2 = {.header = {.version = {2, 0}}, .current_work_stream = fake_stream};
    assert_ptr_equal(dls_exchange_api_wrap(&newer), &newer);
    assert_ptr_equal(dls_exchange_api_wrap(&major2), &major2);
    assert_null(dls_exchange_api_wrap(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_of_version_1_3_is_wrapped_field_by_field),
        cmocka_unit_test(calls_behind_the_table_pass_straight_through),
        cmocka_unit_test(other_versions_are_not_wrapped),
        cmocka_unit_test(non_owning_exports_are_retired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
