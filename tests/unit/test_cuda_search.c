/* Unit tests of where shim/cuda looks for CUPTI, and of the observer's fallback when it cannot
 * load it (no CUDA in this process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/config.h"
#include "cuda/cupti_search.h"
#include "cuda/observer.h"
#include "report/warn.h"

static char out[16][DLS_PATH_MAX];

static void candidates_start_beside_the_loaded_cuda_libraries(void **state)
{
    (void)state;
    const char *loaded[] = {"/opt/cuda/lib64/libcuda.so.1", "/opt/cuda/lib64/libcudart.so.13",
                            "/usr/lib/x86_64-linux-gnu/libcuda.so.1"};
    size_t n = dls_cupti_candidates(loaded, 3, out, 16);
    assert_int_equal(n, 8); /* 3 beside each of 2 distinct folders, then 2 sonames */
    assert_string_equal(out[0], "/opt/cuda/lib64/libcupti.so.13");
    assert_string_equal(out[1], "/opt/cuda/lib64/libcupti.so");
    assert_string_equal(out[2], "/opt/cuda/lib64/../extras/CUPTI/lib64/libcupti.so.13");
    assert_string_equal(out[3], "/usr/lib/x86_64-linux-gnu/libcupti.so.13");
    assert_string_equal(out[6], "libcupti.so.13");
    assert_string_equal(out[7], "libcupti.so");
}

static void candidates_without_cuda_are_the_sonames_and_respect_the_cap(void **state)
{
    (void)state;
    assert_int_equal(dls_cupti_candidates(NULL, 0, out, 16), 2);
    assert_string_equal(out[0], "libcupti.so.13");
    const char *loaded[] = {"/a/libcuda.so.1", "relative-name"};
    assert_int_equal(dls_cupti_candidates(loaded, 2, out, 2), 2);
    assert_string_equal(out[1], "/a/libcupti.so");
}

static void no_cuda_library_is_loaded_here(void **state)
{
    (void)state;
    assert_int_equal(dls_cuda_loaded_libs(out, 16), 0);
}

static void observer_without_cupti_stays_inactive_with_a_reason(void **state)
{
    (void)state;
    assert_int_equal(dls_cuda_observer_active(), 0);
    assert_non_null(strstr(dls_cuda_observer_reason(), "not initialized"));
    setenv("DLSYNC_CUPTI", "/nonexistent/libcupti.so.13", 1);
    dls_config_reset_for_tests();
    assert_int_equal(dls_cuda_observer_start(), 0);
    assert_non_null(strstr(dls_cuda_observer_reason(), "/nonexistent/libcupti.so.13"));
    /* It warned once already; a second start neither retries nor warns. */
    assert_int_equal(dls_warn_once("cuda-no-cupti", "again"), 0);
    assert_int_equal(dls_cuda_observer_start(), 0);
    dls_cuda_observer_set_reason("ignored after the start");
    assert_null(strstr(dls_cuda_observer_reason(), "ignored"));
    unsetenv("DLSYNC_CUPTI");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(candidates_start_beside_the_loaded_cuda_libraries),
        cmocka_unit_test(candidates_without_cuda_are_the_sonames_and_respect_the_cap),
        cmocka_unit_test(no_cuda_library_is_loaded_here),
        cmocka_unit_test(observer_without_cupti_stays_inactive_with_a_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
