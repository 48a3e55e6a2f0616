/* Unit tests of shim/report/history.c: the ring of injected orderings the query API reads, their
 * texts cut to their fields, and the ring's reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "report/history.h"

/* Texts are kept as given, cut to their field (a NUL always ends them); a missing text is empty. */
static void an_injection_keeps_its_texts_cut_to_fit(void **state)
{
    (void)state;
    char long_reason[300];
    memset(long_reason, 'r', sizeof long_reason - 1);
    long_reason[sizeof long_reason - 1] = '\0';
    uint64_t before = dls_history_injections();
    dls_history_inject(7, "event-wait", 2, 3, "first use on this stream");
    dls_history_inject(8, NULL, 4, 0, long_reason);
    assert_int_equal(dls_history_injections(), before + 2);
    dls_history_injection e;
    assert_int_equal(dls_history_get_injection(before + 1, &e), 0);
    assert_int_equal(e.seq, before + 1);
    assert_int_equal(e.xid, 7);
    assert_string_equal(e.what, "event-wait");
    assert_string_equal(e.reason, "first use on this stream");
    assert_int_equal(e.from_stream, 2);
    assert_int_equal(e.to_stream, 3);
    assert_int_equal(dls_history_get_injection(before + 2, &e), 0);
    assert_string_equal(e.what, "");
    assert_int_equal(strlen(e.reason), sizeof e.reason - 1);
    assert_int_equal(strspn(e.reason, "r"), sizeof e.reason - 1);
    assert_int_equal(dls_history_get_injection(before + 3, &e), -1); /* not made yet */
}

/* The ring keeps the latest orderings only; the oldest are no longer found. */
static void the_ring_keeps_the_latest_injections(void **state)
{
    (void)state;
    uint64_t first = dls_history_injections() + 1;
    for (uint64_t i = 0; i < 3000; i++)
        dls_history_inject(i, "host-wait", 1, 0, "reuse");
    dls_history_injection e;
    assert_int_equal(dls_history_get_injection(first, &e), -1);
    assert_int_equal(dls_history_get_injection(first + 2999, &e), 0);
    assert_int_equal(e.xid, 2999);
    assert_int_equal(dls_history_get_injection(0, &e), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_injection_keeps_its_texts_cut_to_fit),
        cmocka_unit_test(the_ring_keeps_the_latest_injections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
