/* The soak benchmark's short run, for CI (make test): bench_soak with BENCH_SOAK=300 (300 and
 * 3,000 exchanges of its hand-synchronized pipeline, without the shim, in fix and in check)
 * runs to its end, every probe completing its exchanges, and prints both memory figures
 * measured. Skipped under ThreadSanitizer, whose allocator is not the one measured and whose
 * runtime does not carry the 3,000 simulator stream threads the probe makes, with or without
 * dlsync. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dls_test.h"

static void the_short_soak_completes_and_measures_both_modes(void **state)
{
    (void)state;
    if (strstr(DLS_SAN, "thread"))
        skip();
    char soak[1024];
    dls_build_path(soak, sizeof soak, "tests/bench_soak");
    const char *argv[] = {soak, NULL};
    const char *env[] = {"BENCH_SOAK=300", NULL};
    dls_run_result r;
    assert_int_equal(dls_run(argv, env, &r), 0);
    printf("%s", r.out);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "budget fix-soak-growth ("));
    assert_non_null(strstr(r.out, "budget check-soak-growth ("));
    assert_null(strstr(r.out, "not measured"));
    dls_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_short_soak_completes_and_measures_both_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
