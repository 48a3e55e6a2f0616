/* Unit tests of shim/hooks/capsule.c: naming the framework of a capsule's caller. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hooks/capsule.h"

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
    assert_int_equal(n, 2);
    assert_string_equal(h[0].name, "PyCapsule_New");
    assert_string_equal(h[1].name, "PyCapsule_SetName");
    assert_true(h[0].by_dlsym && h[1].by_dlsym);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frameworks_named_from_the_calling_object),
        cmocka_unit_test(capsule_functions_are_hooked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
