/* Unit tests of shim/report/warn.c: once per key, for any number of keys and any key length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "report/warn.h"

/* Far more distinct keys than a fixed table would hold: each warns once, never again. */
static void every_key_warns_once_however_many(void **state)
{
    (void)state;
    dls_warn_reset_for_tests();
    char key[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 3000; i++) {
            snprintf(key, sizeof key, "key-%d", i);
            assert_int_equal(dls_warn_once(key, "test warning %d", i), round == 0);
        }
}

/* Keys are whole strings: two long keys that differ only at the end are two keys. */
static void long_keys_are_compared_whole(void **state)
{
    (void)state;
    dls_warn_reset_for_tests();
    char a[300], b[300];
    memset(a, 'k', sizeof a - 2);
    a[sizeof a - 2] = 'a';
    a[sizeof a - 1] = '\0';
    memcpy(b, a, sizeof b);
    b[sizeof b - 2] = 'b';
    assert_int_equal(dls_warn_once(a, "first"), 1);
    assert_int_equal(dls_warn_once(b, "second"), 1);
    assert_int_equal(dls_warn_once(a, "first again"), 0);
    assert_int_equal(dls_warn_once(b, "second again"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_key_warns_once_however_many),
        cmocka_unit_test(long_keys_are_compared_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
