/* Unit tests of shim/hooks/extent.c: byte extents (strides, negative strides, sub-byte types,
 * overflow), validity checks, and the device/dtype names of the log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hooks/extent.h"

static DLTensor tensor(int ndim, int64_t *shape, int64_t *strides, uint8_t code, uint8_t bits)
{
    static char buf[4096];
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = buf + 2048;
    t.device = (DLDevice){kDLCPU, 0};
    t.ndim = ndim;
    t.shape = shape;
    t.strides = strides;
    t.dtype = (DLDataType){code, bits, 1};
    return t;
}

static void compact_row_major_without_strides(void **state)
{
    (void)state;
    int64_t shape[] = {3, 4};
    DLTensor t = tensor(2, shape, NULL, kDLFloat, 32);
    dls_extent e;
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.lo, 0);
    assert_int_equal(e.hi, 48);
    t.byte_offset = 16;
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.lo, 16);
    assert_int_equal(e.hi, 64);
}

static void transposed_and_broadcast_strides(void **state)
{
    (void)state;
    int64_t shape[] = {4, 3}, strides[] = {1, 4};
    DLTensor t = tensor(2, shape, strides, kDLFloat, 64);
    dls_extent e;
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.hi, (3 + 2 * 4 + 1) * 8);
    int64_t bshape[] = {5, 3}, bstrides[] = {0, 1}; /* broadcast rows */
    t = tensor(2, bshape, bstrides, kDLInt, 16);
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.lo, 0);
    assert_int_equal(e.hi, 6);
}

static void negative_strides_reach_below_data(void **state)
{
    (void)state;
    int64_t shape[] = {4}, strides[] = {-2};
    DLTensor t = tensor(1, shape, strides, kDLFloat, 32);
    dls_extent e;
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.lo, -24);
    assert_int_equal(e.hi, 4);
}

/* Tensors with positive dimensions and no negative stride take a shorter computation: it must
 * give what the general one gives. The twin of each tensor has an extra dimension of size 1 with
 * a negative stride (which adds nothing to the extent) and so takes the general one. */
static void forward_strides_match_the_general_computation(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (int n = 0; n < 20000; n++) {
        int64_t shape[5], strides[5], twin_shape[6], twin_strides[6];
        int ndim = (int)(rand_r(&seed) % 5);
        for (int i = 0; i < ndim; i++) {
            shape[i] = 1 + rand_r(&seed) % 6;
            strides[i] = rand_r(&seed) % 12;
        }
        static const uint8_t bits[] = {1, 4, 8, 16, 32, 64};
        DLTensor t = tensor(ndim, shape, rand_r(&seed) % 3 ? strides : NULL, kDLInt, bits[rand_r(&seed) % 6]);
        t.byte_offset = rand_r(&seed) % 4 ? 0 : rand_r(&seed) % 64;
        int64_t implied = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            twin_shape[i] = shape[i];
            twin_strides[i] = t.strides ? strides[i] : implied;
            implied *= shape[i];
        }
        twin_shape[ndim] = 1;
        twin_strides[ndim] = -3;
        DLTensor twin = t;
        twin.ndim = ndim + 1;
        twin.shape = twin_shape;
        twin.strides = twin_strides;
        uint64_t flags = rand_r(&seed) % 2 ? DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED : 0;
        dls_extent e, f;
        assert_null(dls_tensor_check(&t, flags, &e));
        assert_null(dls_tensor_check(&twin, flags, &f));
        assert_int_equal(e.lo, f.lo);
        assert_int_equal(e.hi, f.hi);
    }
}

/* dls_tensor_check's answer for t, and the general computation's: t with one more dimension of
 * size 1 and a negative stride, which only the general computation takes. */
static void assert_same_as_general(const DLTensor *t)
{
    int64_t shape[5], strides[5];
    for (int i = 0; i < t->ndim; i++) {
        shape[i] = t->shape[i];
        strides[i] = t->strides[i];
    }
    shape[t->ndim] = 1;
    strides[t->ndim] = -1;
    DLTensor twin = *t;
    twin.ndim = t->ndim + 1;
    twin.shape = shape;
    twin.strides = strides;
    dls_extent e = {-1, -1}, f = {-1, -1};
    const char *r = dls_tensor_check(t, 0, &e), *g = dls_tensor_check(&twin, 0, &f);
    if (!r || !g) {
        assert_ptr_equal(r, g);
        assert_int_equal(e.lo, f.lo);
        assert_int_equal(e.hi, f.hi);
    } else {
        assert_string_equal(r, g);
    }
}

static void the_inline_measure_agrees_at_its_limits(void **state)
{
    (void)state;
    static const int64_t sizes[] = {1, 2, (1ll << 31) - 1, 1ll << 31, (1ll << 31) + 1, 1ll << 40, INT64_MAX, 0, -1};
    static const int64_t steps[] = {0, 1, (1ll << 31) - 1, 1ll << 31, 1ll << 40, INT64_MAX, -1, INT64_MIN};
    static const uint64_t offsets[] = {0, 8, (1ull << 62) - 8, 1ull << 62, (uint64_t)INT64_MAX};
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (size_t b = 0; b < sizeof steps / sizeof *steps; b++)
            for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++)
                for (int ndim = 1; ndim <= 4; ndim++) {
                    int64_t shape[4] = {sizes[a], 3, sizes[a], 2}, strides[4] = {steps[b], 1, steps[b], 5};
                    DLTensor t = tensor(ndim, shape, strides, kDLFloat, 64);
                    t.byte_offset = offsets[o];
                    assert_same_as_general(&t);
                    t.data = (void *)(UINTPTR_MAX - 4096); /* near the top of the address space */
                    assert_same_as_general(&t);
                }
    /* Every device type: known exactly when it has a log name. */
    int64_t shape[] = {2, 2}, strides[] = {2, 1};
    for (int32_t type = -2; type < 70; type++) {
        DLTensor t = tensor(2, shape, strides, kDLFloat, 32);
        t.device.device_type = (DLDeviceType)type;
        dls_extent e;
        const char *r = dls_tensor_check(&t, 0, &e);
        if (dls_device_type_name(type))
            assert_null(r);
        else
            assert_string_equal(r, "unknown device type");
    }
}

static void empty_and_scalar_tensors(void **state)
{
    (void)state;
    int64_t shape[] = {3, 0};
    DLTensor t = tensor(2, shape, NULL, kDLFloat, 32);
    t.byte_offset = 8;
    dls_extent e;
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.lo, 8);
    assert_int_equal(e.hi, 8);
    t = tensor(0, NULL, NULL, kDLInt, 64);
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.lo, 0);
    assert_int_equal(e.hi, 8);
}

static void sub_byte_elements_round_outward_unless_padded(void **state)
{
    (void)state;
    int64_t shape[] = {3};
    DLTensor t = tensor(1, shape, NULL, kDLInt, 4);
    dls_extent e;
    assert_null(dls_tensor_check(&t, 0, &e));
    assert_int_equal(e.hi, 2); /* 12 bits -> 2 bytes */
    assert_null(dls_tensor_check(&t, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, &e));
    assert_int_equal(e.hi, 3);
}

static void malformed_tensors_are_refused(void **state)
{
    (void)state;
    dls_extent e = {7, 7};
    int64_t shape[] = {2, 2}, neg[] = {2, -1}, huge[] = {INT64_MAX / 2, 4}, hs[] = {1, INT64_MAX};
    assert_string_equal(dls_tensor_check(NULL, 0, &e), "NULL tensor");
    DLTensor t = tensor(-1, shape, NULL, kDLFloat, 32);
    assert_string_equal(dls_tensor_check(&t, 0, &e), "negative ndim");
    t.ndim = DLS_MAX_NDIM + 1;
    assert_string_equal(dls_tensor_check(&t, 0, &e), "ndim larger than 256");
    t = tensor(2, NULL, NULL, kDLFloat, 32);
    assert_string_equal(dls_tensor_check(&t, 0, &e), "NULL shape with ndim > 0");
    t = tensor(2, neg, NULL, kDLFloat, 32);
    assert_string_equal(dls_tensor_check(&t, 0, &e), "negative dimension in shape");
    t = tensor(2, huge, NULL, kDLFloat, 32);
    assert_string_equal(dls_tensor_check(&t, 0, &e), "extent overflows");
    t = tensor(2, shape, hs, kDLFloat, 32);
    assert_string_equal(dls_tensor_check(&t, 0, &e), "extent overflows");
    t = tensor(2, shape, NULL, kDLFloat, 0);
    assert_string_equal(dls_tensor_check(&t, 0, &e), "zero-size element type");
    t = tensor(2, shape, NULL, kDLFloat, 32);
    t.device.device_type = (DLDeviceType)99;
    assert_string_equal(dls_tensor_check(&t, 0, &e), "unknown device type");
    t = tensor(2, shape, NULL, kDLFloat, 32);
    t.byte_offset = UINT64_MAX;
    assert_string_equal(dls_tensor_check(&t, 0, &e), "byte_offset overflows");
    assert_int_equal(e.lo, 7); /* untouched on failure */
}

static void names_for_the_log(void **state)
{
    (void)state;
    char b[48];
    assert_string_equal(dls_device_type_name(kDLCUDA), "cuda");
    assert_string_equal(dls_device_type_name(kDLCUDAManaged), "cuda_managed");
    assert_null(dls_device_type_name(5));
    assert_null(dls_device_type_name(-3));
    assert_string_equal(dls_dtype_name((DLDataType){kDLFloat, 32, 1}, b, sizeof b), "float32");
    assert_string_equal(dls_dtype_name((DLDataType){kDLBfloat, 16, 1}, b, sizeof b), "bfloat16");
    assert_string_equal(dls_dtype_name((DLDataType){6, 8, 1}, b, sizeof b), "bool");
    assert_string_equal(dls_dtype_name((DLDataType){kDLFloat, 32, 4}, b, sizeof b), "float32x4");
    assert_string_equal(dls_dtype_name((DLDataType){kDLFloat, 12, 1}, b, sizeof b), "float12"); /* odd width */
    assert_string_equal(dls_dtype_name((DLDataType){9, 8, 2}, b, sizeof b), "code(9)bits(8)x(2)");
}

static void managed_views_of_both_layouts(void **state)
{
    (void)state;
    DLManagedTensor m;
    DLManagedTensorVersioned v;
    memset(&m, 0, sizeof m);
    memset(&v, 0, sizeof v);
    dls_managed_view mv;
    assert_null(dls_managed_view_of(&m, 0, &mv));
    assert_ptr_equal(mv.tensor, &m.dl_tensor);
    assert_ptr_equal(mv.deleter_slot, (void **)&m.deleter);
    assert_string_equal(dls_managed_view_of(&v, 1, &mv), "unsupported DLPack major version");
    v.version.major = 1;
    v.version.minor = 1;
    v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    assert_null(dls_managed_view_of(&v, 1, &mv));
    assert_ptr_equal(mv.tensor, &v.dl_tensor);
    assert_int_equal(mv.flags, 1);
    assert_int_equal(mv.minor, 1);
    assert_string_equal(dls_managed_view_of(NULL, 0, &mv), "NULL tensor");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compact_row_major_without_strides),
        cmocka_unit_test(transposed_and_broadcast_strides),
        cmocka_unit_test(negative_strides_reach_below_data),
        cmocka_unit_test(forward_strides_match_the_general_computation),
        cmocka_unit_test(the_inline_measure_agrees_at_its_limits),
        cmocka_unit_test(empty_and_scalar_tensors),
        cmocka_unit_test(sub_byte_elements_round_outward_unless_padded),
        cmocka_unit_test(malformed_tensors_are_refused),
        cmocka_unit_test(names_for_the_log),
        cmocka_unit_test(managed_views_of_both_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
