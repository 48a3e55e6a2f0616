/* Unit tests of the policy: every internal header of shim/policy, for tests that reach into the
 * model. */
#ifndef DLS_TEST_POLICY_ALL_H
#define DLS_TEST_POLICY_ALL_H

#include "policy/access.h"
#include "policy/attribute.h"
#include "policy/check.h"
#include "policy/complete.h"
#include "policy/events.h"
#include "policy/exch.h"
#include "policy/fix.h"
#include "policy/graphs.h"
#include "policy/hostfn.h"
#include "policy/index.h"
#include "policy/lock.h"
#include "policy/order.h"
#include "policy/queue.h"
#include "policy/ring.h"
#include "policy/sink.h"
#include "policy/stream_table.h"
#include "policy/types.h"

/* 1 when the index clears the access of op (of work w), *cleared the clearance it answers with. */
static inline int test_clears_op(const dls_cuda_op *op, uint64_t *cleared)
{
    dls_pol_access a;
    dls_pol_access_of_op(&a, op);
    return dls_pol_index_clears(&a, cleared);
}

static inline int test_clears_work(const dls_cuda_work *w, uint64_t *cleared)
{
    dls_pol_access a;
    dls_pol_access_of_work(&a, w);
    return dls_pol_index_clears(&a, cleared);
}

/* 1 when op may touch a watched range: certain while no writer runs. */
static inline int test_may_touch_op(const dls_cuda_op *op)
{
    uint64_t cleared;
    return !test_clears_op(op, &cleared);
}

#endif
