/* Unit tests of the policy: a fresh hb engine for each test, and forgetting what one test left in
 * the process-wide policy state. */
#ifndef DLS_TEST_POLICY_FORGET_H
#define DLS_TEST_POLICY_FORGET_H

#include "report/race.h"
#include "test_policy_all.h"

#include <stdlib.h>

/* Applies what is still queued, then drops every live exchange (and every released one when
 * `released`) and forgets the due after points, the streams, graphs and host-function marks,
 * so the next test starts with none. The hb engine is the caller's. */
static inline void dls_test_policy_forget(int released)
{
    dls_pol_lock(); /* applies what is still queued */
    dls_pol_unlock();
    while (dls_pol_g.live)
        dls_pol_x_drop(dls_pol_g.live);
    while (released && dls_pol_g.released)
        dls_pol_x_drop(dls_pol_g.released);
    dls_pol_after_reset_for_tests(); /* the due points name the streams about to be freed */
    dls_pol_reset_for_tests();
}

/* Replaces the policy's hb engine (the one the library's constructor made for the environment's
 * mode, or the last test's) with a new one holding only the host stream, and sets the mode. */
static inline void dls_test_policy_new_hb(dls_mode mode)
{
    dls_hb_destroy(dls_pol_g.hb);
    dls_pol_g.hb = dls_hb_create();
    assert_non_null(dls_pol_g.hb);
    dls_pol_g.mode = mode;
    assert_int_equal(dls_hb_stream_add(dls_pol_g.hb, DLS_POL_HOST_STREAM, DLS_POL_HOST_CTX, DLS_HB_NON_BLOCKING), 0);
}

/* What a test's teardown does: forgets everything (dls_test_policy_forget(1)) and destroys the
 * hb engine. */
static inline void dls_test_policy_end(void)
{
    dls_test_policy_forget(1);
    dls_hb_destroy(dls_pol_g.hb);
    dls_pol_g.hb = NULL;
}

/* The cmocka fixtures of a check-mode test: it starts with a fresh hb engine
 * (dls_test_policy_new_hb) and no race reported, and ends with dls_test_policy_end. */
static inline int dls_test_policy_setup_check(void **state)
{
    (void)state;
    dls_test_policy_new_hb(DLS_MODE_CHECK);
    dls_race_reset_for_tests();
    return 0;
}

static inline int dls_test_policy_teardown(void **state)
{
    (void)state;
    dls_test_policy_end();
    return 0;
}

#endif
