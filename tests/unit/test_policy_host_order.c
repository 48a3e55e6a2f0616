/* Unit tests of the policy's host order (queue.h, "Host order"; hb.h): orderings that depend on the
 * order of calls on different threads are used only where the host ordered the calls. Each case
 * runs two real threads that deliver their own operations to the op lane, one step at a time in a
 * fixed interleaving (the horizon that stamps each call is per thread), in check mode: a use that
 * is not ordered is reported, one that is ordered is not. No CUDA is involved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>

#include "common/config.h"
#include "test_policy_all.h"
#include "report/race.h"
#include "report/summary.h"
#include "test_policy_export.h"
#include "policy/hostfn.h"
#include "test_policy_fake_drv.h"
#include "test_policy_forget.h"

enum { LEGACY = 1, BLOCKING_A = 2, BLOCKING_B = 3, NB_A = 4, NB_B = 5 };
enum { A = 100, B = 200 }; /* the two threads' ids */

static _Atomic uint32_t g_corr;
static const uint64_t g_word = 0x10000; /* the exchanged tensor is [0x10000, 0x10100) */

static dls_stream_kind kind_of(uint64_t sid)
{
    return sid == LEGACY ? DLS_STREAM_LEGACY : sid <= BLOCKING_B ? DLS_STREAM_BLOCKING : DLS_STREAM_NON_BLOCKING;
}

/* An operation of thread tid on stream sid, as the observer delivers it. */
static dls_cuda_op op_on(dls_op_kind kind, uint64_t sid, uint64_t tid)
{
    dls_cuda_op op = {.kind = kind,
                      .flags = DLS_OPF_HAS_STREAM | (kind == DLS_OP_MEMCPY ? 0 : DLS_OPF_ASYNC),
                      .api = kind == DLS_OP_LAUNCH ? "cuLaunchKernel" : "op",
                      .name = kind == DLS_OP_LAUNCH ? "kernel" : NULL,
                      .tid = tid,
                      .correlation_id = ++g_corr,
                      .stream = {.id = sid,
                                 .handle = sid == LEGACY ? 1 : 0x1000 + sid,
                                 .ctx = 0xc0,
                                 .ctx_id = 1,
                                 .kind = kind_of(sid),
                                 .resolved = 1}};
    if (kind == DLS_OP_LAUNCH) {
        op.words = &g_word;
        op.nwords = 1;
    }
    return op;
}

static void deliver(dls_cuda_op *op, dls_op_phase phase)
{
    op->phase = phase;
    dls_pol_on_op(op);
}

/* A launch touching the tensor (ENTER and EXIT). */
static void launch(uint64_t sid, uint64_t tid)
{
    dls_cuda_op op = op_on(DLS_OP_LAUNCH, sid, tid);
    deliver(&op, DLS_PHASE_ENTER);
    deliver(&op, DLS_PHASE_EXIT);
}

/* Two threads taking turns: step(n) waits until step n is due; done() makes the next one due. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_step;

static void step(int n)
{
    pthread_mutex_lock(&g_lock);
    while (g_step != n)
        pthread_cond_wait(&g_cv, &g_lock);
    pthread_mutex_unlock(&g_lock);
}

static void done(void)
{
    pthread_mutex_lock(&g_lock);
    g_step++;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
}

/* Runs thread b beside the calling thread's a, from step 0. */
static void beside(void *(*a)(void *), void *(*b)(void *), void *arg)
{
    g_step = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, b, arg), 0);
    a(arg);
    pthread_join(t, NULL);
}

static uint64_t races(void)
{
    return dls_summary_get(DLS_COUNT_RACES);
}

/* ---- a legacy call that overlapped the write ---- */

/* Thread B's legacy operation: its call begins at step 0 (or after the write, at step 2, when
 * `*late`), returns at step 2. */
static void *legacy_b(void *arg)
{
    int late = *(int *)arg;
    dls_cuda_op l = op_on(DLS_OP_MEMSET, LEGACY, B);
    l.ranges = &(dls_cuda_range){.addr = 0x900000, .len = 4, .access = DLS_ACCESS_WRITE};
    l.nranges = 1;
    step(late ? 2 : 0);
    if (!late) {
        deliver(&l, DLS_PHASE_ENTER);
        done();
        step(2);
    }
    if (late)
        deliver(&l, DLS_PHASE_ENTER);
    deliver(&l, DLS_PHASE_EXIT);
    done();
    return NULL;
}

/* Thread A: the write on a blocking stream (step 1), then, once B's legacy call returned, the
 * export and a read on another blocking stream, behind the legacy operation. */
static void *writer_a(void *arg)
{
    int late = *(int *)arg;
    step(late ? 0 : 1);
    launch(BLOCKING_A, A);
    if (late)
        done(); /* B's call begins only now */
    done();
    step(3);
    export_range(0x10000, 0x10100);
    launch(BLOCKING_B, A);
    return NULL;
}

static void a_legacy_call_that_overlapped_the_write_does_not_order_the_read(void **state)
{
    (void)state;
    int late = 0;
    uint64_t before = races();
    beside(writer_a, legacy_b, &late);
    assert_int_equal(races(), before + 1);
}

static void a_legacy_call_made_after_the_write_orders_the_read(void **state)
{
    (void)state;
    int late = 1;
    uint64_t before = races();
    beside(writer_a, legacy_b, &late);
    assert_int_equal(races(), before);
}

/* ---- a host-function mark not yet recorded ---- */

/* Inside the mark's cuEventRecord: lets thread A read (step 2) and waits until it has (step 3). */
static void read_while_the_mark_records(void)
{
    done();
    step(3);
}

/* Thread B: a host function launched on the legacy stream after A's export; its mark's record is
 * held until A's read was delivered. */
static void *host_function_b(void *arg)
{
    (void)arg;
    step(1);
    g_during_record = read_while_the_mark_records;
    dls_cuda_op h = op_on(DLS_OP_HOST_FUNC, LEGACY, B);
    h.api = "cuLaunchHostFunc";
    deliver(&h, DLS_PHASE_ENTER);
    deliver(&h, DLS_PHASE_EXIT);
    return NULL;
}

static void *write_export_then_read_a(void *arg)
{
    (void)arg;
    launch(BLOCKING_A, A);
    export_range(0x10000, 0x10100);
    done(); /* B launches its host function now */
    step(2);
    launch(BLOCKING_B, A); /* the driver's legacy stream does not hold the mark yet */
    done();
    return NULL;
}

static void a_host_function_mark_still_being_recorded_orders_nothing(void **state)
{
    (void)state;
    fake_drv_install();
    uint64_t before = races();
    g_step = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, host_function_b, NULL), 0);
    write_export_then_read_a(NULL);
    pthread_join(t, NULL);
    assert_int_equal(g_records, 1); /* the mark */
    assert_int_equal(races(), before + 1);
    fake_drv_remove();
}

/* ---- a call nested in another ---- */

/* Thread B: a legacy operation whose call begins at step 0; inside it (a callback of it, say) a
 * nested call that returns after A's write; then the outer call returns. */
static void *nesting_b(void *arg)
{
    (void)arg;
    dls_cuda_op outer = op_on(DLS_OP_MEMSET, LEGACY, B);
    outer.ranges = &(dls_cuda_range){.addr = 0x900000, .len = 4, .access = DLS_ACCESS_WRITE};
    outer.nranges = 1;
    dls_cuda_op inner = op_on(DLS_OP_MEMSET, NB_B, B);
    inner.ranges = &(dls_cuda_range){.addr = 0x900100, .len = 4, .access = DLS_ACCESS_WRITE};
    inner.nranges = 1;
    inner.nested = 1;
    step(0);
    deliver(&outer, DLS_PHASE_ENTER);
    done();
    step(2);
    deliver(&inner, DLS_PHASE_ENTER);
    deliver(&inner, DLS_PHASE_EXIT); /* after the write returned: its horizon is past it */
    deliver(&outer, DLS_PHASE_EXIT);
    done();
    return NULL;
}

static void *nested_writer_a(void *arg)
{
    (void)arg;
    step(1);
    launch(BLOCKING_A, A);
    done();
    step(3);
    export_range(0x10000, 0x10100);
    launch(BLOCKING_B, A);
    return NULL;
}

static void a_call_nested_in_another_leaves_the_outer_call_begun_before(void **state)
{
    (void)state;
    uint64_t before = races();
    beside(nested_writer_a, nesting_b, NULL);
    assert_int_equal(races(), before + 1); /* the outer legacy operation may precede the write */
}

/* ---- a record of the event in flight ---- */

enum { EV = 77 };

static void event_on(dls_op_kind kind, uint64_t sid, uint64_t tid, dls_op_phase phase, dls_cuda_op *keep)
{
    dls_cuda_op op = op_on(kind, sid, tid);
    op.flags = DLS_OPF_HAS_STREAM | DLS_OPF_HAS_EVENT;
    op.event_id = EV;
    if (keep && phase == DLS_PHASE_EXIT)
        op.correlation_id = keep->correlation_id;
    deliver(&op, phase);
    if (keep)
        *keep = op;
}

/* Thread B records the event again on an unrelated stream: its call is in flight from step 1 to
 * step 3 (or, when `*quiet`, it records nothing). */
static void *recorder_b(void *arg)
{
    int quiet = *(int *)arg;
    step(1);
    dls_cuda_op rec;
    if (!quiet)
        event_on(DLS_OP_EVENT_RECORD, NB_B, B, DLS_PHASE_ENTER, &rec);
    done();
    step(3);
    if (!quiet)
        event_on(DLS_OP_EVENT_RECORD, NB_B, B, DLS_PHASE_EXIT, &rec);
    done();
    return NULL;
}

/* Thread A: the write and a record of the event after it (step 0), a wait on the event while B's
 * record may be in flight (step 2), the export and the read behind the wait. */
static void *waiter_a(void *arg)
{
    (void)arg;
    step(0);
    launch(NB_A, A);
    event_on(DLS_OP_EVENT_RECORD, NB_A, A, DLS_PHASE_ENTER, NULL);
    event_on(DLS_OP_EVENT_RECORD, NB_A, A, DLS_PHASE_EXIT, NULL);
    done();
    step(2);
    event_on(DLS_OP_STREAM_WAIT_EVENT, BLOCKING_B, A, DLS_PHASE_ENTER, NULL);
    event_on(DLS_OP_STREAM_WAIT_EVENT, BLOCKING_B, A, DLS_PHASE_EXIT, NULL);
    export_range(0x10000, 0x10100);
    launch(BLOCKING_B, A);
    done();
    step(4);
    return NULL;
}

static void a_wait_while_another_thread_records_the_event_orders_nothing(void **state)
{
    (void)state;
    int quiet = 0;
    uint64_t before = races();
    beside(waiter_a, recorder_b, &quiet);
    assert_int_equal(races(), before + 1); /* the wait may have found B's record, on another stream */
}

static void a_wait_with_no_record_in_flight_orders_the_read(void **state)
{
    (void)state;
    int quiet = 1;
    uint64_t before = races();
    beside(waiter_a, recorder_b, &quiet);
    assert_int_equal(races(), before);
}

/* ---- a wait right after another thread's record returned ---- */

/* Thread B: the write, a record of the event after it and the export, all returned before A's
 * wait begins (step 0); no operation is deferred between B's record and A's wait. */
static void *handing_b(void *arg)
{
    (void)arg;
    step(0);
    launch(NB_A, B);
    event_on(DLS_OP_EVENT_RECORD, NB_A, B, DLS_PHASE_ENTER, NULL);
    event_on(DLS_OP_EVENT_RECORD, NB_A, B, DLS_PHASE_EXIT, NULL);
    export_range(0x10000, 0x10100);
    done();
    return NULL;
}

/* Thread A: once B returned, a wait on the event and the read behind it. */
static void *taking_a(void *arg)
{
    (void)arg;
    step(1);
    event_on(DLS_OP_STREAM_WAIT_EVENT, NB_B, A, DLS_PHASE_ENTER, NULL);
    event_on(DLS_OP_STREAM_WAIT_EVENT, NB_B, A, DLS_PHASE_EXIT, NULL);
    launch(NB_B, A);
    return NULL;
}

/* A record applied under the lock takes a ticket of its own: a wait that begins after it returned
 * is after it even when no operation was deferred between them (with the end stamp of "applied
 * now", the wait would seem to overlap the record and order nothing). */
static void a_wait_right_after_another_threads_record_orders_the_read(void **state)
{
    (void)state;
    uint64_t before = races();
    beside(taking_a, handing_b, NULL);
    assert_int_equal(races(), before);
}

/* ---- a synchronous copy while another thread uses the legacy stream ---- */

/* Thread B: an operation on the legacy stream that returns while A's synchronous copy is in the
 * driver (step 1). */
static void *legacy_noise_b(void *arg)
{
    (void)arg;
    step(1);
    dls_cuda_op l = op_on(DLS_OP_MEMSET, LEGACY, B);
    l.ranges = &(dls_cuda_range){.addr = 0x900000, .len = 4, .access = DLS_ACCESS_WRITE};
    l.nranges = 1;
    deliver(&l, DLS_PHASE_ENTER);
    deliver(&l, DLS_PHASE_EXIT);
    done();
    return NULL;
}

/* Thread A: the write on a blocking stream, then a synchronous copy on the legacy stream (it
 * waits for the write through the legacy rule) around B's operation; then the export and a read
 * on a non-blocking stream, which only the host's knowledge orders. */
static void *sync_copier_a(void *arg)
{
    (void)arg;
    step(0);
    launch(BLOCKING_A, A);
    dls_cuda_op copy = op_on(DLS_OP_MEMCPY, LEGACY, A);
    dls_cuda_range r[2] = {{.addr = 0x900200, .len = 4, .access = DLS_ACCESS_READ},
                           {.addr = 0x900300, .len = 4, .access = DLS_ACCESS_WRITE}};
    copy.ranges = r;
    copy.nranges = 2;
    deliver(&copy, DLS_PHASE_ENTER);
    done();
    step(2);
    deliver(&copy, DLS_PHASE_EXIT);
    export_range(0x10000, 0x10100);
    launch(NB_A, A);
    return NULL;
}

static void a_synchronous_copy_completes_what_the_legacy_stream_waited_for(void **state)
{
    (void)state;
    uint64_t before = races();
    beside(sync_copier_a, legacy_noise_b, NULL);
    assert_int_equal(races(), before); /* the write is complete to A */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, dls_test_policy_setup_check, dls_test_policy_teardown)
    const struct CMUnitTest tests[] = {
        T(a_host_function_mark_still_being_recorded_orders_nothing),
        T(a_legacy_call_that_overlapped_the_write_does_not_order_the_read),
        T(a_legacy_call_made_after_the_write_orders_the_read),
        T(a_call_nested_in_another_leaves_the_outer_call_begun_before),
        T(a_wait_while_another_thread_records_the_event_orders_nothing),
        T(a_wait_with_no_record_in_flight_orders_the_read),
        T(a_synchronous_copy_completes_what_the_legacy_stream_waited_for),
        T(a_wait_right_after_another_threads_record_orders_the_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
