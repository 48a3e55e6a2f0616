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

#endif
