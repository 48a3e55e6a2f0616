/* Unit tests of CUPTI's entry points as shim/cuda resolves them (cupti.def): every row from a
 * CUPTI library (the simulator's), and none from a library that has no CUPTI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cuda/cupti.h"

#include <dlfcn.h>

static void every_entry_point_resolves_from_a_cupti_library(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/cudasim/libcupti.so.13", DLS_BUILD_DIR);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    dls_cupti_table t;
    memset(&t, 0, sizeof t);
    dls_cupti_resolve(lib, &t);
    size_t rows = 0;
#define CUPTI(field, function, params)                        \
    assert_non_null(t.field);                                 \
    assert_ptr_equal((void *)t.field, dlsym(lib, #function)); \
    rows++;
#include "cuda/cupti.def"
#undef CUPTI
    assert_int_equal(rows * sizeof(void *), sizeof t); /* every field is a row's */
    uint32_t version = 0;
    assert_int_equal(t.get_version(&version), CUPTI_SUCCESS);
    assert_true(version >= 130000);
}

static void a_library_without_cupti_leaves_every_entry_point_null(void **state)
{
    (void)state;
    void *lib = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    dls_cupti_table t;
    memset(&t, 0xa5, sizeof t); /* what was there before is not kept */
    dls_cupti_resolve(lib, &t);
#define CUPTI(field, function, params) assert_null(t.field);
#include "cuda/cupti.def"
#undef CUPTI
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_entry_point_resolves_from_a_cupti_library),
        cmocka_unit_test(a_library_without_cupti_leaves_every_entry_point_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
