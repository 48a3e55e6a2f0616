/* Unit tests of the policy: forgetting what one test left in the process-wide policy state. */
#ifndef DLS_TEST_POLICY_FORGET_H
#define DLS_TEST_POLICY_FORGET_H

#include "test_policy_all.h"

#include <stdlib.h>

/* Applies what is still queued, then drops every live exchange (and every released one when
 * `released`) and frees the stream table, so the next test starts with none. The hb engine is
 * the caller's. */
static inline void dls_test_policy_forget(int released)
{
    dls_pol_lock(); /* applies what is still queued */
    dls_pol_unlock();
    while (dls_pol_g.live)
        dls_pol_x_drop(dls_pol_g.live);
    while (released && dls_pol_g.released)
        dls_pol_x_drop(dls_pol_g.released);
    dls_pol_stream_table_reset_for_tests();
}

#endif
