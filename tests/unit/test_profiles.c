/* Unit tests of shim/hooks/profiles.c: the built-in table and the text-row parser; and the
 * reading of a DLSYNC_PROFILES file (shim/hooks/profile_file.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/config.h"
#include "hooks/profile_file.h"
#include "hooks/profiles.h"
#include "test_profile_find.h"

static void builtin_rows_cover_the_known_frameworks(void **state)
{
    (void)state;
    const dls_profile *p = builtin_profile("_ZN2at8toDLPackERKNS_6TensorE");
    assert_non_null(p);
    assert_int_equal(p->role, DLS_ROLE_EXPORT);
    assert_int_equal(p->where, DLS_WHERE_RET);
    assert_int_equal(p->versioned, 0);
    assert_string_equal(p->framework, "pytorch");
    p = builtin_profile("_ZN2at10fromDLPackEPK15DLManagedTensor");
    assert_non_null(p);
    assert_int_equal(p->role, DLS_ROLE_IMPORT);
    assert_int_equal(p->where, DLS_WHERE_ARG);
    assert_int_equal(p->index, 1); /* hidden return slot for at::Tensor */
    p = builtin_profile("_ZN2at19fromDLPackVersionedEP24DLManagedTensorVersionedSt8functionIFvPvEE");
    assert_non_null(p);
    assert_int_equal(p->versioned, 1);
    p = builtin_profile("_ZN6paddle9framework10FromDLPackEP15DLManagedTensor");
    assert_non_null(p);
    assert_int_equal(p->index, 1); /* hidden return slot for phi::DenseTensor */
    assert_string_equal(p->framework, "paddle");
    p = builtin_profile("_ZN6paddle9framework19FromDLPackVersionedEP24DLManagedTensorVersioned");
    assert_non_null(p);
    assert_int_equal(p->index, 1);
    assert_int_equal(p->versioned, 1);
    p = builtin_profile("_ZN6paddle9framework17ToDLPackVersionedERKN3phi11DenseTensorEm");
    assert_non_null(p);
    assert_int_equal(p->role, DLS_ROLE_EXPORT);
    assert_int_equal(p->where, DLS_WHERE_RET);
    assert_int_equal(p->versioned, 1);
    p = builtin_profile("MXNDArrayToDLPack");
    assert_non_null(p);
    assert_int_equal(p->where, DLS_WHERE_OUT);
    assert_int_equal(p->index, 1);
    const char *more[] = {"TVMArrayToDLPack",
                          "TVMArrayFromDLPack",
                          "TVMFFITensorToDLPack",
                          "TVMFFITensorToDLPackVersioned",
                          "TVMFFITensorFromDLPack",
                          "TVMFFITensorFromDLPackVersioned",
                          "MXNDArrayFromDLPack",
                          "MXNDArrayFromDLPackEx",
                          "_ZN2at17toDLPackVersionedERKNS_6TensorE",
                          "_ZN2at10fromDLPackEP15DLManagedTensorSt8functionIFvPvEE",
                          "_ZN10tensorflow18TFE_HandleToDLPackEP16TFE_TensorHandleP9TF_Status",
                          "_ZN10tensorflow20TFE_HandleFromDLPackEPvP9TF_Status",
                          "_ZN10tensorflow18TFE_HandleToDLPackEP16TFE_TensorHandleP10TSL_Status",
                          "_ZN10tensorflow20TFE_HandleFromDLPackEPvP10TSL_StatusP11TFE_Context"};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        assert_non_null(builtin_profile(more[i]));
}

static void every_builtin_row_round_trips_through_text(void **state)
{
    (void)state;
    size_t n;
    const dls_profile *t = dls_profiles_builtin(&n);
    assert_true(n >= 18);
    for (size_t i = 0; i < n; i++) {
        char line[512], err[128];
        dls_profile back;
        assert_true(dls_profile_format_line(&t[i], line, sizeof line) < (int)sizeof line);
        assert_int_equal(dls_profile_parse_line(line, &back, err, sizeof err), 1);
        assert_string_equal(back.symbol, t[i].symbol);
        assert_string_equal(back.framework, t[i].framework);
        assert_int_equal(back.role, t[i].role);
        assert_int_equal(back.where, t[i].where);
        assert_int_equal(back.index, t[i].index);
        assert_int_equal(back.versioned, t[i].versioned);
        assert_string_equal(back.display, "");
        assert_string_equal(dls_profile_name(&back), t[i].symbol);
        assert_int_equal(t[i].scalar, 1); /* known signatures: no vector-register argument or result */
        assert_int_equal(back.scalar, 0); /* a text row's signature is not known */
    }
}

static void parses_a_row_with_blanks_and_comment(void **state)
{
    (void)state;
    dls_profile r;
    char err[128];
    assert_int_equal(dls_profile_parse_line("  my_to_dl\tmyfw export  out:2 v1   # trailing\n", &r, err, sizeof err),
                     1);
    assert_string_equal(r.symbol, "my_to_dl");
    assert_string_equal(r.framework, "myfw");
    assert_int_equal(r.role, DLS_ROLE_EXPORT);
    assert_int_equal(r.where, DLS_WHERE_OUT);
    assert_int_equal(r.index, 2);
    assert_int_equal(r.versioned, 1);
}

static void blank_and_comment_lines_are_not_rows(void **state)
{
    (void)state;
    dls_profile r;
    memset(&r, 0x5a, sizeof r);
    char err[64];
    assert_int_equal(dls_profile_parse_line("", &r, err, sizeof err), 0);
    assert_int_equal(dls_profile_parse_line("   \t\n", &r, err, sizeof err), 0);
    assert_int_equal(dls_profile_parse_line("# sym fw export ret v0", &r, err, sizeof err), 0);
    assert_int_equal(((unsigned char *)&r)[0], 0x5a);
}

static void bad_rows_are_rejected_with_a_reason(void **state)
{
    (void)state;
    struct {
        const char *line, *reason;
    } bad[] = {
        {"sym fw export ret", "expected 5 fields"},
        {"sym fw export ret v0 extra", "more than 5"},
        {"sym fw produce ret v0", "role"},
        {"sym fw export out:6 v0", "0..5"},
        {"sym fw export out:x v0", "0..5"},
        {"sym fw export out:12 v0", "0..5"},
        {"sym fw export stack v0", "location"},
        {"sym fw export ret v2", "version"},
        {"sym fw import ret v0", "import"},
        {"sym fw export arg:0 v0", "export"},
        {"9sym fw export ret v0", "symbol name"},
        {"s(y)m fw export ret v0", "symbol name"},
        {"sym a_framework_name_that_is_far_too_long export ret v0", "framework"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        dls_profile r;
        char err[160];
        assert_int_equal(dls_profile_parse_line(bad[i].line, &r, err, sizeof err), -1);
        if (!strstr(err, bad[i].reason))
            fail_msg("line '%s': reason '%s' lacks '%s'", bad[i].line, err, bad[i].reason);
    }
}

static void overlong_symbol_is_rejected(void **state)
{
    (void)state;
    char line[600];
    memset(line, 'a', 300);
    snprintf(line + 300, sizeof line - 300, " fw export ret v0");
    dls_profile r;
    char err[128];
    assert_int_equal(dls_profile_parse_line(line, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "longer"));
}

/* A string of n copies of c (static storage, n < 8192). */
static const char *repeat(char c, size_t n)
{
    static char buf[2][8192];
    static int k;
    k ^= 1;
    memset(buf[k], c, n);
    buf[k][n] = '\0';
    return buf[k];
}

/* DLSYNC_PROFILES lines of any length: a comment longer than any buffer stays a comment (its
 * tail is not read as a row), and a long line holding a row is that row. */
static void file_lines_of_any_length(void **state)
{
    (void)state;
    char path[] = "/tmp/dlsync-profiles-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fprintf(fp, "# %s fwc_to_dlpack mxnet export out:1 v0\n", repeat('x', 1021));
    fprintf(fp, "%s fwc_from_dlpack mxnet import arg:0 v0\n", repeat(' ', 5000));
    fclose(fp);
    setenv("DLSYNC_PROFILES", path, 1);
    dls_config_reset_for_tests();
    size_t n;
    const dls_profile *rows = dls_file_rows(&n);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].symbol, "fwc_from_dlpack");
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(file_lines_of_any_length),
        cmocka_unit_test(builtin_rows_cover_the_known_frameworks),
        cmocka_unit_test(every_builtin_row_round_trips_through_text),
        cmocka_unit_test(parses_a_row_with_blanks_and_comment),
        cmocka_unit_test(blank_and_comment_lines_are_not_rows),
        cmocka_unit_test(bad_rows_are_rejected_with_a_reason),
        cmocka_unit_test(overlong_symbol_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
