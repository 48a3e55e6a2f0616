/* Unit tests of the exchange records (shim/hooks/record.c) as written to a real log file: every
 * field of a record built from the thread's remembered fragments matches a record built afresh,
 * and a fragment is not used again once the tensor it describes (or the library) changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <unistd.h>

#include "common/config.h"
#include "dls_test.h"
#include "hooks/record.h"

static char g_log[256];
static const dls_profile g_row = {.symbol = "MXNDArrayToDLPack", .framework = "mxnet"};

/* The log's lines after the start record, in a static buffer; line i at lines[i]. */
static int read_lines(char *lines[], int max)
{
    static char *text;
    free(text);
    text = dls_read_file(g_log);
    assert_non_null(text);
    int n = 0;
    for (char *p = strtok(text, "\n"); p && n < max; p = strtok(NULL, "\n"))
        if (!strstr(p, "\"ev\":\"start\""))
            lines[n++] = p;
    return n;
}

/* The part of a record after "tid":N (the fields that do not vary with time and thread). */
static const char *body(const char *line)
{
    const char *p = strstr(line, "\"xid\"");
    assert_non_null(p);
    return p;
}

static void record(const char *ev, DLManagedTensor *mt, const char *lib)
{
    dls_managed_view v;
    dls_extent ext;
    assert_null(dls_managed_view_of(mt, 0, &v));
    assert_null(dls_tensor_check(v.tensor, v.flags, &ext));
    dls_record_exchange(ev, 7, &g_row, lib, mt, &v, &ext, "mxnet");
}

static void fragments_are_reused_only_while_what_they_describe_is_unchanged(void **state)
{
    (void)state;
    int64_t shape[2] = {3, 4}, strides[2] = {4, 1};
    float data[12];
    DLManagedTensor mt = {.dl_tensor = {.data = data,
                                        .device = {kDLCUDA, 0},
                                        .ndim = 2,
                                        .dtype = {kDLFloat, 32, 1},
                                        .shape = shape,
                                        .strides = NULL}};
    record("export", &mt, "/lib/a.so");
    record("import", &mt, "/lib/a.so"); /* from the fragments */
    shape[1] = 2;                       /* the same tensor object, now describing fewer bytes */
    record("import", &mt, "/lib/a.so");
    mt.dl_tensor.strides = strides;
    record("import", &mt, "/lib/b.so");
    char *l[8];
    assert_int_equal(read_lines(l, 8), 4);
    const char *export = body(l[0]), *import = body(l[1]);
    assert_string_equal(export, import);
    assert_non_null(strstr(l[1], "\"ev\":\"import\""));
    assert_non_null(strstr(l[2], "\"shape\":[3,2],\"strides\":null"));
    assert_non_null(strstr(l[2], "\"extent\":{\"lo\":0,\"hi\":24}"));
    assert_non_null(strstr(l[3], "\"lib\":\"/lib/b.so\""));
    assert_non_null(strstr(l[3], "\"strides\":[4,1]"));
    assert_non_null(strstr(l[3], "\"extent\":{\"lo\":0,\"hi\":40}"));
}

int main(void)
{
    snprintf(g_log, sizeof g_log, "/tmp/dls_test_record.%d.jsonl", (int)getpid());
    unlink(g_log);
    setenv("DLSYNC_LOG", g_log, 1);
    setenv("DLSYNC_MODE", "trace", 1);
    dls_config_reset_for_tests();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fragments_are_reused_only_while_what_they_describe_is_unchanged),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(g_log);
    return rc;
}
