/* Unit tests of the race records (shim/report/race.c) as written to a real log file: a hazard is
 * one `race` record, and each later exchange it is seen in one `race_again` record, so a reader
 * can name every exchange a hazard touched. */
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
#include "report/race.h"

static char g_log[256];

/* Reports the test's hazard in exchange xid. */
static void report(uint64_t xid)
{
    int64_t shape[1] = {4};
    static const dls_stack none;
    dls_race r = {.kind = DLS_RACE_WRITE_READ,
                  .xid = xid,
                  .framework = "mxnet",
                  .symbol = "MXNDArrayToDLPack",
                  .device = "cuda",
                  .dtype = "float32",
                  .ndim = 1,
                  .shape = shape,
                  .data = 0x1000,
                  .lo = 0x1000,
                  .hi = 0x1010,
                  .why = "test"};
    r.producer.op = "w";
    r.producer.stream.kind = "blocking";
    r.producer.stack = &none;
    r.consumer.op = "r";
    r.consumer.stream.kind = "non-blocking";
    r.consumer.stream.id = 3;
    r.consumer.stack = &none;
    dls_race_report(&r);
}

static void a_hazard_names_each_later_exchange_once(void **state)
{
    (void)state;
    report(1);
    report(1); /* the same exchange again: counted only */
    report(2);
    report(2);
    report(1); /* back to the first: its occurrence is named again */
    char *text = dls_read_file(g_log);
    assert_non_null(text);
    assert_int_equal(dls_count(text, "{\"ev\":\"race\""), 1);
    assert_int_equal(dls_count(text, "{\"ev\":\"race_again\""), 2);
    const char *again = strstr(text, "{\"ev\":\"race_again\"");
    assert_non_null(strstr(again, "\"xid\":2,\"key\":\""));
    assert_non_null(strstr(strstr(again, "\n"), "\"xid\":1,\"key\":\""));
    assert_non_null(strstr(again, "\"kind\":\"write-read\"}"));
    free(text);
}

int main(void)
{
    snprintf(g_log, sizeof g_log, "/tmp/dls_test_race_log.%d.jsonl", (int)getpid());
    unlink(g_log);
    setenv("DLSYNC_LOG", g_log, 1);
    setenv("DLSYNC_MODE", "check", 1);
    setenv("DLSYNC_QUIET", "1", 1);
    dls_config_reset_for_tests();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_hazard_names_each_later_exchange_once),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(g_log);
    return rc;
}
