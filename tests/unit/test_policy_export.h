/* Unit tests of the policy: a live exchange made the way an export makes one (cmocka asserts;
 * include after cmocka.h). */
#ifndef DLS_TEST_POLICY_EXPORT_H
#define DLS_TEST_POLICY_EXPORT_H

#include "test_policy_all.h"

/* A live exchange of [lo, hi) with its frontier attributed now. */
static inline dls_pol_x *export_range(uintptr_t lo, uintptr_t hi)
{
    static _Atomic uint64_t xid;
    static __thread int64_t shape[1] = {4};
    static __thread DLManagedTensor mt;
    mt.dl_tensor.ndim = 1;
    mt.dl_tensor.shape = shape;
    mt.dl_tensor.data = (void *)lo;
    dls_exchange x = {.xid = ++xid,
                      .tensor = &mt,
                      .data = (void *)lo,
                      .lo = lo,
                      .hi = hi,
                      .device = {kDLCUDA, 0},
                      .dtype = {kDLFloat, 32, 1}};
    dls_pol_lock();
    dls_pol_x *p = dls_pol_x_new(&x);
    assert_non_null(p);
    dls_pol_attribute(p);
    dls_pol_x_link(p);
    dls_pol_unlock();
    return p;
}

/* Thread tid releases x the way on_release does in fix. */
static inline void release_fix_by(dls_pol_x *x, uint64_t tid)
{
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, tid);
    dls_pol_lock();
    if (!dls_pol_fix_release(&plan, x))
        dls_pol_x_drop(x);
    dls_pol_plan_carry_out(&plan);
    dls_pol_unlock();
}

#endif
