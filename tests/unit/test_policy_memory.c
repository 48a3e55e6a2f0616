/* Allocation failures inside the policy and its model: the test binary is linked with malloc,
 * calloc and realloc wrapped (and dls_warn_once, to count warnings), and each allocation made
 * while a producer writes, other streams wait and synchronize, and the tensor is exported, is
 * made to fail in turn. After each run the export must still name the producer's stream (the
 * write stays ordered), or the policy must be degraded (fix then synchronizes at export) with a
 * warning: never a silent loss of ordering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/config.h"
#include "test_policy_all.h"
#include "test_policy_forget.h"

#define TID 100

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);

static int g_fail_at; /* the allocation to fail, counted from 1 since arming; 0: none */
static int g_count, g_failed, g_warnings;

static int fail_now(void)
{
    if (!g_fail_at || ++g_count != g_fail_at)
        return 0;
    g_failed = 1;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

int __wrap_dls_warn_once(const char *key, const char *fmt, ...)
{
    (void)key;
    (void)fmt;
    g_warnings++;
    return 1;
}

static uint32_t g_corr;

static void fresh_policy(void)
{
    dls_test_policy_new_hb(DLS_MODE_FIX);
    atomic_store(&dls_pol_g.degraded, 0);
}

static dls_cuda_op op_on(dls_op_kind kind, uint64_t sid, dls_op_phase phase)
{
    dls_cuda_op op = {.kind = kind,
                      .phase = phase,
                      .flags = DLS_OPF_HAS_STREAM,
                      .api = "test",
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = {.id = sid,
                                 .handle = 0x1000 + sid,
                                 .ctx = 0xc0,
                                 .ctx_id = 1,
                                 .kind = DLS_STREAM_NON_BLOCKING,
                                 .resolved = 1}};
    return op;
}

/* Delivers op at ENTER and EXIT. */
static void deliver(dls_cuda_op op)
{
    op.phase = DLS_PHASE_ENTER;
    dls_pol_on_op(&op);
    op.phase = DLS_PHASE_EXIT;
    dls_pol_on_op(&op);
}

/* The producer writes [0x10000, 0x10100) on stream 1 among other streams' work, waits and
 * synchronizes; returns 1 when an export of the range then names stream 1. */
static int producer_stays_ordered(void)
{
    uint64_t mine = 0x10000, other = 0x90000;
    for (uint64_t s = 2; s <= 5; s++) {
        dls_cuda_op op = op_on(DLS_OP_LAUNCH, s, DLS_PHASE_ENTER);
        op.words = &other;
        op.nwords = 1;
        deliver(op);
    }
    dls_cuda_op rec = op_on(DLS_OP_EVENT_RECORD, 2, DLS_PHASE_EXIT);
    rec.flags |= DLS_OPF_HAS_EVENT;
    rec.event_id = 7;
    dls_pol_on_op(&rec);
    dls_cuda_op wait = op_on(DLS_OP_STREAM_WAIT_EVENT, 3, DLS_PHASE_EXIT);
    wait.flags |= DLS_OPF_HAS_EVENT;
    wait.event_id = 7;
    dls_pol_on_op(&wait);
    dls_cuda_op write = op_on(DLS_OP_LAUNCH, 1, DLS_PHASE_ENTER);
    write.words = &mine;
    write.nwords = 1;
    deliver(write);
    deliver(op_on(DLS_OP_STREAM_SYNC, 4, DLS_PHASE_ENTER));
    dls_cuda_op ctx = op_on(DLS_OP_CTX_SYNC, 0, DLS_PHASE_ENTER);
    ctx.flags = 0;
    ctx.ctx = 0xd0; /* another context: completes nothing of stream 1 */
    deliver(ctx);
    static DLManagedTensor mt;
    static int64_t shape[1] = {64};
    mt.dl_tensor.ndim = 1;
    mt.dl_tensor.shape = shape;
    dls_exchange x = {
        .xid = 1, .tensor = &mt, .lo = 0x10000, .hi = 0x10100, .device = {kDLCUDA, 0}, .dtype = {kDLFloat, 32, 1}};
    dls_pol_lock();
    dls_pol_x *p = dls_pol_x_new(&x);
    int named = 0;
    if (p) {
        dls_pol_attribute(p);
        for (unsigned i = 0; i < p->nfront; i++)
            named |= p->front[i].at.stream == 1;
        dls_pol_x_link(p);
    }
    dls_pol_unlock();
    return named;
}

static void every_failed_allocation_keeps_ordering_or_degrades_loudly(void **state)
{
    (void)state;
    int runs = 0;
    for (int k = 1;; k++) {
        fresh_policy();
        g_count = g_failed = g_warnings = 0;
        g_fail_at = k;
        int named = producer_stays_ordered();
        g_fail_at = 0;
        int degraded = atomic_load(&dls_pol_g.degraded);
        if (!named && !(degraded && g_warnings))
            fail_msg("allocation %d failed: the producer's stream is lost, degraded %d, warnings %d", k, degraded,
                     g_warnings);
        if (degraded && !g_warnings)
            fail_msg("allocation %d failed: degraded without a warning", k);
        dls_test_policy_forget(0);
        if (!g_failed)
            break; /* the run made fewer than k allocations: every one has failed once */
        runs++;
    }
    assert_true(runs > 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_failed_allocation_keeps_ordering_or_degrades_loudly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
