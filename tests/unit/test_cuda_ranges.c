/* Unit tests of shim/cuda/ranges.c: where an allocation starts is asked of the driver once per
 * allocation while the observer sees the calls that free or unmap memory, asked again after any
 * of them, and asked every time while it does not see them. The driver is a fake table with two
 * allocations; the tests move one of them, as a free and a new allocation at the same address
 * would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cuda/drv.h"
#include "cuda/ranges.h"

static CUdeviceptr g_start[2] = {0x100000, 0x900000};
static size_t g_size[2] = {0x10000, 0x10000};
static int g_asked; /* cuPointerGetAttribute calls */

static CUresult fake_pointer_get_attribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    g_asked++;
    for (int i = 0; i < 2; i++) {
        if (p < g_start[i] || p >= g_start[i] + g_size[i])
            continue;
        if (a == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
            *(CUdeviceptr *)data = g_start[i];
        else if (a == CU_POINTER_ATTRIBUTE_RANGE_SIZE)
            *(size_t *)data = g_size[i];
        else
            return CUDA_ERROR_INVALID_VALUE;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static const dls_drv_table g_fake = {.pointer_get_attribute = fake_pointer_get_attribute};

static int setup(void **state)
{
    (void)state;
    dls_drv_set_table_for_tests(&g_fake);
    g_start[0] = 0x100000;
    g_size[0] = 0x10000;
    dls_cuda_ranges_watch(1);
    g_asked = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dls_cuda_ranges_watch(0);
    dls_drv_set_table_for_tests(NULL);
    return 0;
}

static void an_allocation_is_asked_once_while_frees_are_seen(void **state)
{
    (void)state;
    assert_int_equal(dls_cuda_range_start(0x100800), 0x100000);
    int first = g_asked;
    assert_true(first > 0);
    assert_int_equal(dls_cuda_range_start(0x10f000), 0x100000); /* the same allocation */
    assert_int_equal(dls_cuda_range_start(0x100000), 0x100000);
    assert_int_equal(g_asked, first);
    assert_int_equal(dls_cuda_range_start(0x900010), 0x900000); /* another one is asked */
    assert_true(g_asked > first);
}

static void a_free_ages_every_range(void **state)
{
    (void)state;
    assert_int_equal(dls_cuda_range_start(0x104000), 0x100000);
    dls_cuda_ranges_age(); /* freed, and a new allocation at 0x104000 */
    g_start[0] = 0x104000;
    int asked = g_asked;
    assert_int_equal(dls_cuda_range_start(0x104000), 0x104000);
    assert_true(g_asked > asked);
}

static void unseen_frees_leave_every_question_to_the_driver(void **state)
{
    (void)state;
    dls_cuda_ranges_watch(0);
    assert_int_equal(dls_cuda_range_start(0x100800), 0x100000);
    int asked = g_asked;
    g_start[0] = 0x100800; /* moved behind the shim's back */
    assert_int_equal(dls_cuda_range_start(0x100800), 0x100800);
    assert_true(g_asked > asked);
}

static void an_address_the_driver_does_not_know_has_no_start(void **state)
{
    (void)state;
    assert_int_equal(dls_cuda_range_start(0x500000), 0);
    int asked = g_asked;
    assert_int_equal(dls_cuda_range_start(0x500000), 0); /* not kept: asked again */
    assert_true(g_asked > asked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(an_allocation_is_asked_once_while_frees_are_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(a_free_ages_every_range, setup, teardown),
        cmocka_unit_test_setup_teardown(unseen_frees_leave_every_question_to_the_driver, setup, teardown),
        cmocka_unit_test_setup_teardown(an_address_the_driver_does_not_know_has_no_start, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
