/* Unit tests of the policy layer's model (shim/policy): producer attribution from the
 * per-stream history, host completion, overflow, touch tests, check-mode conflict detection on
 * synthesized operations, observed completion through host-function marks, and report
 * deduplication (shim/report/race). No CUDA is involved: operations are fed to the receivers as
 * the observer would deliver them, and the shim's own driver calls (marks, fix's waits) go to a
 * fake driver table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "test_policy_all.h"
#include "report/race.h"
#include "report/summary.h"
#include "test_policy_export.h"
#include "test_policy_fake_drv.h"
#include "test_policy_forget.h"
#include "policy/thread.h"

static __thread uint64_t TID = 100; /* the delivering thread's id */
static _Atomic uint32_t g_corr;

static dls_cuda_stream stream(uint64_t id, dls_stream_kind kind)
{
    dls_cuda_stream s = {.id = id, .handle = 0x1000 + id, .ctx = 0xc0, .ctx_id = 1, .kind = kind, .resolved = 1};
    return s;
}

/* Delivers a launch of `name` with the given argument words on stream s (ENTER and EXIT). */
static void launch(uint64_t sid, const char *name, const uint64_t *words, uint32_t nwords, unsigned flags)
{
    dls_cuda_op op = {.kind = DLS_OP_LAUNCH,
                      .flags = DLS_OPF_ASYNC | DLS_OPF_HAS_STREAM | flags,
                      .api = "cuLaunchKernel",
                      .name = name,
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = stream(sid, DLS_STREAM_NON_BLOCKING),
                      .words = words,
                      .nwords = nwords};
    op.phase = DLS_PHASE_ENTER;
    dls_pol_on_op(&op);
    op.phase = DLS_PHASE_EXIT;
    dls_pol_on_op(&op);
}

/* Delivers a call `api` of `kind` on stream sid touching ranges[0..n) (ENTER and EXIT), host-ordered
 * unless `flags` has DLS_OPF_ASYNC. */
static void call_with(dls_op_kind kind, const char *api, uint64_t sid, const dls_cuda_range *ranges, uint32_t n,
                      unsigned flags)
{
    dls_cuda_op op = {.kind = kind,
                      .phase = DLS_PHASE_ENTER,
                      .flags = DLS_OPF_HAS_STREAM | flags,
                      .api = api,
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = stream(sid, DLS_STREAM_NON_BLOCKING),
                      .ranges = ranges,
                      .nranges = n};
    dls_pol_on_op(&op);
    op.phase = DLS_PHASE_EXIT;
    dls_pol_on_op(&op);
}

/* Delivers a host-ordered call `api` of `kind` on stream sid touching ranges[0..n). */
static void host_call(dls_op_kind kind, const char *api, uint64_t sid, const dls_cuda_range *ranges, uint32_t n)
{
    call_with(kind, api, sid, ranges, n, 0);
}

/* Delivers a stream synchronize (ENTER and EXIT). */
static void stream_sync(uint64_t sid)
{
    host_call(DLS_OP_STREAM_SYNC, "cuStreamSynchronize", sid, NULL, 0);
}

/* Launches 500 operations on stream 3, touching nothing exchanged (a thread's body). */
static void *launch_untracked(void *arg)
{
    (void)arg;
    TID = 300;
    uint64_t word = 0x700000;
    for (int i = 0; i < 500; i++)
        launch(3, "untracked", &word, 1, 0);
    return NULL;
}

static void a_launch_touching_nothing_watched_takes_no_lock(void **state)
{
    (void)state;
    export_range(0x10000, 0x10100); /* something is watched: each ENTER asks the index */
    dls_pol_lock();                 /* held by this thread while another one launches */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, launch_untracked, NULL), 0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    int joined = pthread_timedjoin_np(t, NULL, &until);
    dls_pol_unlock();
    if (joined != 0)
        pthread_join(t, NULL);
    assert_int_equal(joined, 0); /* the launches did not wait for the lock */
    dls_cuda_stream s3 = stream(3, DLS_STREAM_NON_BLOCKING);
    dls_pol_lock(); /* applies them */
    dls_pol_stream *st = dls_pol_stream_get(&s3, 300);
    assert_non_null(st);
    assert_int_equal(st->last, 500);
    dls_pol_unlock();
}

/* The EXIT of a launch of one word on stream s, as the work lane delivers it. */
static dls_cuda_work lane_launch(const dls_cuda_stream *s, const uint64_t *word)
{
    dls_cuda_work w = {.kind = DLS_OP_LAUNCH,
                       .phase = DLS_PHASE_EXIT,
                       .flags = DLS_OPF_ASYNC,
                       .stream = s,
                       .handle = s->handle,
                       .correlation_id = ++g_corr,
                       .tid = TID,
                       .api = "cuLaunchKernel",
                       .name = "lane",
                       .words = word,
                       .nwords = 1};
    return w;
}

/* 500 launches on stream 4 through the work lane (a thread's body). */
static void *lane_launches(void *arg)
{
    (void)arg;
    TID = 400;
    uint64_t word = 0x700000;
    dls_cuda_stream s4 = stream(4, DLS_STREAM_NON_BLOCKING);
    for (int i = 0; i < 500; i++) {
        dls_cuda_work w = lane_launch(&s4, &word);
        dls_pol_on_work(&w);
    }
    return NULL;
}

/* A thread's launches on a stream the policy has not added yet take no lock either: their records
 * carry the stream as resolved, which applying the first one adds and the others find. */
static void the_work_lane_takes_no_lock_for_a_new_stream(void **state)
{
    (void)state;
    export_range(0x10000, 0x10100);
    dls_pol_lock();
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, lane_launches, NULL), 0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    int joined = pthread_timedjoin_np(t, NULL, &until);
    assert_null(dls_pol_stream_find(4)); /* not added while the lock was held */
    dls_pol_unlock();
    if (joined != 0)
        pthread_join(t, NULL);
    assert_int_equal(joined, 0); /* the launches did not wait for the lock */
    dls_pol_lock();              /* applies the queue: the records add stream 4 */
    dls_pol_stream *st = dls_pol_stream_find(4);
    assert_non_null(st);
    assert_int_equal(st->last, 500);
    dls_pol_unlock();
    uint64_t word = 0x700000;
    dls_cuda_stream s4 = stream(4, DLS_STREAM_NON_BLOCKING);
    dls_cuda_work w = lane_launch(&s4, &word);
    dls_pol_on_work(&w);
    dls_pol_lock();
    assert_ptr_equal(dls_pol_stream_find(4), st); /* found, not added again */
    assert_int_equal(st->last, 501);
    dls_pol_unlock();
}

/* Delivers an event record or a stream's wait for event ev on stream sid (ENTER and EXIT). */
static void event_call(dls_op_kind kind, uint64_t sid, uint64_t ev)
{
    dls_cuda_op op = {.kind = kind,
                      .phase = DLS_PHASE_ENTER,
                      .flags = DLS_OPF_HAS_STREAM | DLS_OPF_HAS_EVENT,
                      .api = kind == DLS_OP_EVENT_RECORD ? "cuEventRecord" : "cuStreamWaitEvent",
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = stream(sid, DLS_STREAM_NON_BLOCKING),
                      .event_id = ev};
    dls_pol_on_op(&op);
    op.phase = DLS_PHASE_EXIT;
    dls_pol_on_op(&op);
}

/* 0: the thread's first record and wait are told; 1: the lock is held; 2: its 200 more are told. */
static atomic_int g_events_step;

/* Stream 5 records event 9000 + i and stream 6 waits for it, once, then 200 times once the lock is
 * held (a thread's body). */
static void *record_and_wait(void *arg)
{
    (void)arg;
    TID = 500;
    event_call(DLS_OP_EVENT_RECORD, 5, 9000);
    event_call(DLS_OP_STREAM_WAIT_EVENT, 6, 9000);
    atomic_store(&g_events_step, 0);
    while (atomic_load(&g_events_step) != 1)
        sched_yield();
    for (uint64_t i = 1; i <= 200; i++) {
        event_call(DLS_OP_EVENT_RECORD, 5, 9000 + i);
        event_call(DLS_OP_STREAM_WAIT_EVENT, 6, 9000 + i);
    }
    atomic_store(&g_events_step, 2);
    return NULL;
}

/* The program's event records and waits are queued like its launches: after a thread's first
 * (which makes it known), none waits for the lock, and the model learns them in their order: the
 * waiting stream's next operation is ordered after the last record. */
static void the_programs_event_records_and_waits_take_no_lock(void **state)
{
    (void)state;
    atomic_store(&g_events_step, -1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_and_wait, NULL), 0);
    while (atomic_load(&g_events_step) != 0)
        sched_yield();
    dls_pol_lock();
    atomic_store(&g_events_step, 1);
    int told = 0;
    for (int i = 0; i < 10000 && !told; i++) {
        told = atomic_load(&g_events_step) == 2;
        if (!told)
            usleep(1000);
    }
    dls_pol_unlock();
    pthread_join(t, NULL);
    assert_true(told); /* they did not wait for the lock */
    dls_pol_lock();    /* applies them */
    dls_pol_stream *s5 = dls_pol_stream_find(5), *s6 = dls_pol_stream_find(6);
    assert_non_null(s5);
    assert_non_null(s6);
    assert_int_equal(s5->last, 201);
    assert_int_equal(s6->last, 201);
    int ordered = 0;
    assert_int_equal(dls_hb_ordered(dls_pol_g.hb, 500, 6, 5, s5->last, &ordered), 0);
    assert_true(ordered);
    dls_pol_unlock();
}

/* Delivers the creation (EXIT) or destruction (ENTER and EXIT) of stream sid. */
static void stream_life(dls_op_kind kind, uint64_t sid)
{
    dls_cuda_op op = {.kind = kind,
                      .phase = kind == DLS_OP_STREAM_CREATE ? DLS_PHASE_EXIT : DLS_PHASE_ENTER,
                      .flags = DLS_OPF_HAS_STREAM,
                      .api = kind == DLS_OP_STREAM_CREATE ? "cuStreamCreate" : "cuStreamDestroy_v2",
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = stream(sid, DLS_STREAM_NON_BLOCKING)};
    dls_pol_on_op(&op);
    if (kind == DLS_OP_STREAM_DESTROY) {
        op.phase = DLS_PHASE_EXIT;
        dls_pol_on_op(&op);
    }
}

/* A stream is modelled from its first operation: one created and destroyed without any (code
 * that makes a stream per call often does) leaves nothing in the stream table or the model; one
 * used after its creation is in both, and leaves them at its destruction once its work is
 * complete. */
/* Whether stream sid is in the stream table and in the model (asked under the lock; asserted
 * after it). */
static void modelled(uint64_t sid, int *in_table, int *in_model)
{
    int ordered;
    dls_pol_lock();
    *in_table = dls_pol_stream_find(sid) != NULL;
    *in_model = dls_hb_ordered(dls_pol_g.hb, TID, DLS_POL_HOST_STREAM, sid, 1, &ordered) != ENOENT;
    dls_pol_unlock();
}

static void a_stream_is_modelled_from_its_first_operation(void **state)
{
    (void)state;
    int table, model;
    stream_life(DLS_OP_STREAM_CREATE, 8);
    modelled(8, &table, &model);
    assert_false(table || model);
    stream_life(DLS_OP_STREAM_DESTROY, 8);
    modelled(8, &table, &model);
    assert_false(table || model);

    stream_life(DLS_OP_STREAM_CREATE, 9);
    uint64_t word = 0x700000;
    launch(9, "first", &word, 1, 0);
    modelled(9, &table, &model);
    assert_true(table && model);
    stream_sync(9);
    stream_life(DLS_OP_STREAM_DESTROY, 9);
    modelled(9, &table, &model);
    assert_false(table || model); /* complete: forgotten (under fix, out of hb at once) */
}

/* Delivers an operation of `kind` on stream sid of kind `sk` (its ENTER, and its EXIT when
 * `exit`). */
static void op_of_kind(dls_op_kind kind, uint64_t sid, dls_stream_kind sk, int exit)
{
    uint64_t word = 0x760000;
    dls_cuda_op op = {.kind = kind,
                      .phase = DLS_PHASE_ENTER,
                      .flags = DLS_OPF_HAS_STREAM | (kind == DLS_OP_LAUNCH ? DLS_OPF_ASYNC : 0),
                      .api = kind == DLS_OP_LAUNCH ? "cuLaunchKernel" : "cuStreamDestroy_v2",
                      .name = "k",
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = stream(sid, sk),
                      .words = &word,
                      .nwords = 1};
    dls_pol_on_op(&op);
    op.phase = DLS_PHASE_EXIT;
    if (exit)
        dls_pol_on_op(&op);
}

/* A blocking stream leaves the legacy rules at its destruction's ENTER: the driver may destroy
 * it before the EXIT, and CUDA does not say that a legacy-stream operation enqueued then waits
 * for its pending work. */
static void a_stream_leaves_the_legacy_rules_when_its_destruction_begins(void **state)
{
    (void)state;
    op_of_kind(DLS_OP_LAUNCH, 13, DLS_STREAM_BLOCKING, 1);
    op_of_kind(DLS_OP_LAUNCH, 14, DLS_STREAM_BLOCKING, 1);
    op_of_kind(DLS_OP_STREAM_DESTROY, 13, DLS_STREAM_BLOCKING, 0); /* its EXIT is still to come */
    int ordered13 = -1, ordered14 = -1;
    dls_pol_lock();
    dls_pol_stream *legacy = dls_pol_stream_get(
        &(dls_cuda_stream){.id = 1, .handle = 0, .ctx = 0xc0, .ctx_id = 1, .kind = DLS_STREAM_LEGACY, .resolved = 1},
        TID);
    assert_non_null(legacy);
    dls_hb_epoch at13 = {.stream = 13, .pos = 1}, at14 = {.stream = 14, .pos = 1};
    ordered13 = dls_pol_ordered(TID + 1, legacy->id, DLS_HB_NOW, &at13);
    ordered14 = dls_pol_ordered(TID + 1, legacy->id, DLS_HB_NOW, &at14);
    dls_pol_unlock();
    assert_int_equal(ordered14, 1); /* the legacy rule */
    assert_int_equal(ordered13, 0);
}

/* Under check, a forgotten stream stays in hb while it is among the latest DLS_POL_RECENT forgotten
 * (a call that began before its work was known complete may still ask about it), then leaves it. */
static void check_keeps_the_latest_forgotten_streams_in_hb(void **state)
{
    (void)state;
    int table, model;
    uint64_t word = 0x750000;
    for (uint64_t sid = 100; sid < 100 + DLS_POL_RECENT + 1; sid++) {
        launch(sid, "k", &word, 1, 0);
        stream_sync(sid);
        stream_life(DLS_OP_STREAM_DESTROY, sid);
        modelled(sid, &table, &model);
        assert_false(table);
        assert_true(model);
    }
    modelled(100, &table, &model);
    assert_false(table || model); /* the oldest left hb when the last one came */
    modelled(101, &table, &model);
    assert_true(model);
}

/* A forgotten stream's record outlives its forgetting while something holds it (a plan or an
 * after point reads it with the lock released), and is freed at the next reap once nothing does. */
static void a_forgotten_streams_record_is_freed_once_nothing_holds_it(void **state)
{
    (void)state;
    uint64_t word = 0x760000;
    launch(20, "k", &word, 1, 0);
    stream_sync(20);
    dls_pol_lock();
    dls_pol_stream *st = dls_pol_stream_hold(dls_pol_stream_find(20));
    dls_pol_unlock();
    assert_non_null(st);
    stream_life(DLS_OP_STREAM_DESTROY, 20); /* complete: forgotten, then a reap */
    dls_pol_lock();
    dls_pol_stream_reap();
    assert_null(dls_pol_stream_find(20));
    assert_ptr_equal(dls_pol_g.forgotten.list, st); /* kept: held */
    assert_int_equal(st->id, 20);
    dls_pol_stream_drop(st);
    dls_pol_stream_reap();
    assert_null(dls_pol_g.forgotten.list);
    dls_pol_unlock();
}

/* A call the lifetime lane tells of (dls_pol_on_lifetime) counts as an operation and brings its
 * thread's horizon up to the host clock; nested in another call, only when the outer call
 * returns. */
static void a_call_with_nothing_to_model_counts_and_moves_the_horizon(void **state)
{
    (void)state;
    uint64_t ops = dls_summary_get(DLS_COUNT_OPS);
    stream_life(DLS_OP_STREAM_CREATE, 10);
    uint64_t word = 0x710000;
    launch(10, "first", &word, 1, 0); /* moves the clock past the thread's horizon */
    dls_pol_horizon_state *h = &dls_pol_thread_self()->horizon;
    uint64_t clock = 2 * atomic_load(&dls_pol_queue_tail);
    h->h = 0;
    dls_pol_on_lifetime(1);
    assert_int_equal(h->h, 0);
    dls_pol_on_lifetime(0);
    assert_true(h->h >= clock);
    dls_pol_lock(); /* applies the deferred launch, which counts then */
    dls_pol_unlock();
    assert_int_equal(dls_summary_get(DLS_COUNT_OPS), ops + 4); /* the creation, the launch, two calls */
}

/* A synchronous copy on a stream that took a forgotten stream's slot in hb, whose positions
 * continue after the old stream's, is seen waited for: the host is ordered after it. */
static void a_synchronous_copy_on_a_stream_in_a_reused_slot_is_waited_for(void **state)
{
    (void)state;
    uint64_t word = 0x720000;
    int table, model, ordered = 0;
    launch(11, "old", &word, 1, 0);
    stream_sync(11);
    stream_life(DLS_OP_STREAM_DESTROY, 11);
    modelled(11, &table, &model);
    assert_false(table || model); /* its work complete: forgotten */
    dls_cuda_range r[2] = {{.addr = 0x730000, .len = 8, .access = DLS_ACCESS_READ},
                           {.addr = 0x740000, .len = 8, .access = DLS_ACCESS_WRITE}};
    host_call(DLS_OP_MEMCPY, "cuMemcpy", 12, r, 2); /* synchronous: no DLS_OPF_ASYNC */
    dls_pol_lock();
    dls_pol_stream *st = dls_pol_stream_find(12);
    int rc = st ? dls_hb_ordered(dls_pol_g.hb, TID, DLS_POL_HOST_STREAM, 12, st->last, &ordered) : ENOENT;
    dls_pol_unlock();
    assert_int_equal(rc, 0);
    assert_true(ordered);
}

/* The stream table grows (doubling several times) and every stream added is found in it, the
 * same object each time; an id never added is not. */
static void the_stream_table_finds_every_stream_as_it_grows(void **state)
{
    (void)state;
    dls_cuda_stream s7 = stream(7, DLS_STREAM_NON_BLOCKING);
    dls_pol_lock();
    dls_pol_stream *st7 = dls_pol_stream_get(&s7, TID);
    assert_non_null(st7);
    for (uint64_t id = 1000; id < 3000; id++) {
        dls_cuda_stream s = stream(id, DLS_STREAM_NON_BLOCKING);
        assert_non_null(dls_pol_stream_get(&s, TID));
    }
    for (uint64_t id = 1000; id < 3000; id++)
        assert_int_equal(dls_pol_stream_find(id)->id, id);
    assert_ptr_equal(dls_pol_stream_find(7), st7);
    assert_null(dls_pol_stream_find(999999));
    dls_pol_unlock();
}

static void unrelated_busy_streams_are_not_producers(void **state)
{
    (void)state;
    uint64_t mine = 0x10000, other = 0x90000;
    launch(1, "producer", &mine, 1, 0);
    launch(2, "busy", &other, 1, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1);
    assert_int_equal(x->front[0].at.stream, 1);
    assert_string_equal(x->front[0].name, "producer");
}

static void the_frontier_is_the_touching_op_not_the_latest(void **state)
{
    (void)state;
    uint64_t mine = 0x10000, other = 0x90000;
    launch(1, "producer", &mine, 1, 0);
    launch(1, "later", &other, 1, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1);
    assert_int_equal(x->front[0].at.pos, 1);
}

static void host_synchronized_work_is_not_pending(void **state)
{
    (void)state;
    uint64_t mine = 0x10000;
    launch(1, "producer", &mine, 1, 0);
    stream_sync(1);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 0);
}

static void a_conservative_launch_touches_everything(void **state)
{
    (void)state;
    launch(1, "opaque", NULL, 0, DLS_OPF_CONSERVATIVE);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1);
}

/* A stream repeating one operation (a kernel writing one buffer every step) keeps one history
 * entry at the latest position, not a full history folded into lost ranges; another operation,
 * or the same kernel on other memory, is an entry of its own. */
static void a_repeated_operation_keeps_one_history_entry_at_its_latest_position(void **state)
{
    (void)state;
    uint64_t mine = 0x10000, other = 0x90000;
    for (int i = 0; i < 2 * DLS_POL_RING; i++)
        launch(1, "step", &mine, 1, 0);
    launch(1, "step", &other, 1, 0);
    launch(1, "other step", &other, 1, 0);
    dls_pol_lock();
    const dls_pol_stream *st = dls_pol_stream_find(1);
    unsigned count = st->count;
    uint64_t lost = st->lost;
    dls_pol_unlock();
    assert_int_equal(count, 3);
    assert_int_equal(lost, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1);
    assert_int_equal(x->front[0].at.pos, 2 * DLS_POL_RING);
    assert_string_equal(x->front[0].name, "step");
}

static void an_overflowed_history_still_attributes_what_it_lost(void **state)
{
    (void)state;
    uint64_t mine = 0x10000, other = 0x90000;
    launch(1, "producer", &mine, 1, 0);
    for (int i = 0; i < DLS_POL_RING + 4; i++)
        launch(1, "later", &other, 1, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1);
    assert_true(x->front[0].at.pos >= 1);
    dls_pol_x *y = export_range(0xa0000, 0xa0100); /* outside everything the stream touched */
    assert_int_equal(y->nfront, 0);
}

/* Sets (async) one byte at each of n addresses from `at`, `step` bytes apart, on stream sid. */
static void set_bytes(uint64_t sid, uintptr_t at, uintptr_t step, int n)
{
    for (int i = 0; i < n; i++) {
        dls_cuda_range r = {at + (uintptr_t)i * step, 1, DLS_ACCESS_WRITE};
        call_with(DLS_OP_MEMSET, "cuMemsetD8Async", sid, &r, 1, DLS_OPF_ASYNC);
    }
}

/* More buffers lost to a history than it keeps ranges for merge the nearest two: a buffer written
 * between scattered bytes keeps its own range, and memory between them is no one's. */
static void a_lost_buffer_stays_apart_from_distant_ones(void **state)
{
    (void)state;
    int before = DLS_POL_RING + DLS_POL_LOST + 1; /* the lost ranges are full when the buffer's entry is lost */
    set_bytes(1, 0x900000, 2, before);
    set_bytes(1, 0x10000, 1, 1);
    set_bytes(1, 0x900000 + 2 * (uintptr_t)before, 2, 2 * DLS_POL_RING);
    dls_pol_x *between = export_range(0x500000, 0x500100);
    assert_int_equal(between->nfront, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1);
    assert_int_equal(x->front[0].at.pos, before + 1);
    assert_int_equal(x->front[0].write, before + 1);
}

/* A stream that only read a buffer, in entries its history lost, is no writer of it. */
static void what_a_history_lost_that_only_read_is_no_write(void **state)
{
    (void)state;
    dls_cuda_range r[2] = {{0x100ff, 1, DLS_ACCESS_READ}, {0x900000, 1, DLS_ACCESS_WRITE}};
    call_with(DLS_OP_MEMCPY, "cuMemcpyAsync", 1, r, 2, DLS_OPF_ASYNC);
    for (uintptr_t i = 1; i <= 2 * DLS_POL_RING; i++) { /* other buffers' last bytes, scattered */
        dls_cuda_range other[2] = {{0x200ff + i * 0x200, 1, DLS_ACCESS_READ}, {0x900000 + 2 * i, 1, DLS_ACCESS_WRITE}};
        call_with(DLS_OP_MEMCPY, "cuMemcpyAsync", 1, other, 2, DLS_OPF_ASYNC);
    }
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1);
    assert_int_equal(x->front[0].at.pos, 1);
    assert_int_equal(x->front[0].write, 0);
}

static void a_wide_launch_is_attributed_by_its_pointer_words(void **state)
{
    (void)state;
    uint64_t mine[DLS_POL_WORDS + 4] = {0}, other[DLS_POL_WORDS + 4] = {0};
    for (int i = 0; i < DLS_POL_WORDS + 4; i++) {
        mine[i] = i == 7 ? 0x10040 : (uint64_t)i; /* small words are sizes, not pointers */
        other[i] = i == 3 ? 0x90000 : (uint64_t)i;
    }
    launch(1, "wide_producer", mine, DLS_POL_WORDS + 4, 0);
    launch(2, "wide_busy", other, DLS_POL_WORDS + 4, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, 1); /* the busy stream is not a producer */
    assert_int_equal(x->front[0].at.stream, 1);
}

static void a_seventeenth_producer_stream_is_not_dropped(void **state)
{
    (void)state;
    uint64_t mine = 0x10000;
    for (uint64_t s = 1; s <= DLS_POL_FRONT + 1; s++)
        launch(s, "producer", &mine, 1, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    assert_int_equal(x->nfront, DLS_POL_FRONT);
    assert_true(x->overflow & DLS_POL_OVER_PRODUCERS); /* fix then waits for every pending stream */
}

static void a_copy_touches_exactly_its_ranges(void **state)
{
    (void)state;
    dls_cuda_range r[2] = {{0x20000, 0x100, DLS_ACCESS_READ}, {0x30000, 0x100, DLS_ACCESS_WRITE}};
    dls_cuda_op op = {.kind = DLS_OP_MEMCPY, .ranges = r, .nranges = 2};
    dls_pol_access a;
    dls_pol_access_of_op(&a, &op);
    assert_true(dls_pol_touches(&a, 0x200f0, 0x200f0, 0x20200));
    assert_true(dls_pol_touches(&a, 0x30000, 0x30000, 0x30001));
    assert_false(dls_pol_touches(&a, 0x20100, 0x20100, 0x30000));
    assert_true(dls_pol_writes(&a, 0x30000, 0x30001));
    assert_false(dls_pol_writes(&a, 0x200f0, 0x20200)); /* the source is read */
    op.kind = DLS_OP_EVENT_RECORD;
    dls_pol_access_of_op(&a, &op);
    assert_false(dls_pol_touches(&a, 0x20000, 0x20000, 0x30000));
}

static void an_unordered_consumer_is_reported_once(void **state)
{
    (void)state;
    uint64_t mine = 0x10000;
    launch(1, "producer", &mine, 1, 0);
    export_range(0x10000, 0x10100);
    uint64_t before = dls_summary_get(DLS_COUNT_RACES);
    launch(2, "consumer", &mine, 1, 0);
    launch(2, "consumer", &mine, 1, 0);
    assert_int_equal(dls_summary_get(DLS_COUNT_RACES), before + 1);
    assert_int_equal(dls_race_distinct(), 1);
}

static void an_event_wait_orders_the_consumer(void **state)
{
    (void)state;
    uint64_t mine = 0x10000;
    launch(1, "producer", &mine, 1, 0);
    dls_cuda_op rec = {.kind = DLS_OP_EVENT_RECORD,
                       .phase = DLS_PHASE_EXIT,
                       .flags = DLS_OPF_HAS_STREAM | DLS_OPF_HAS_EVENT,
                       .api = "cuEventRecord",
                       .tid = TID,
                       .correlation_id = ++g_corr,
                       .stream = stream(1, DLS_STREAM_NON_BLOCKING),
                       .event_id = 7};
    dls_pol_on_op(&rec);
    dls_cuda_op wait = rec;
    wait.kind = DLS_OP_STREAM_WAIT_EVENT;
    wait.correlation_id = ++g_corr;
    wait.stream = stream(2, DLS_STREAM_NON_BLOCKING);
    dls_pol_on_op(&wait);
    export_range(0x10000, 0x10100);
    launch(2, "consumer", &mine, 1, 0);
    assert_int_equal(dls_race_distinct(), 0);
}

static int setup_hostfn(void **state)
{
    dls_test_policy_setup_check(state);
    fake_drv_install();
    return 0;
}

static int teardown_hostfn(void **state)
{
    fake_drv_remove();
    dls_pol_g.mode = DLS_MODE_CHECK;
    return dls_test_policy_teardown(state);
}

/* Delivers an operation of `kind` with event `ev` on stream sid at EXIT. */
static void event_op(dls_op_kind kind, uint64_t sid, uint64_t ev)
{
    dls_cuda_op op = {.kind = kind,
                      .phase = DLS_PHASE_EXIT,
                      .flags = DLS_OPF_HAS_STREAM | DLS_OPF_HAS_EVENT,
                      .api = "event",
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = stream(sid, DLS_STREAM_NON_BLOCKING),
                      .event_id = ev};
    dls_pol_on_op(&op);
}

/* Streams made per use and destroyed with their work pending, each ordered after the one before
 * by an event (as a consumer orders its output's writes): stream `first` + i writes `word`, records
 * event 5000 + i and is destroyed; the next waits for it. */
static void chained_streams(uint64_t first, int n, uint64_t word)
{
    for (int i = 0; i < n; i++) {
        uint64_t sid = first + (uint64_t)i;
        if (i)
            event_op(DLS_OP_STREAM_WAIT_EVENT, sid, 5000 + first + (uint64_t)i - 1);
        launch(sid, "chained", &word, 1, 0);
        event_op(DLS_OP_EVENT_RECORD, sid, 5000 + first + (uint64_t)i);
        stream_life(DLS_OP_STREAM_DESTROY, sid);
    }
}

/* A destroyed stream whose pending work later work ordered after it superseded (for everything
 * it touched) is forgotten although the host never saw it complete: the table and hb hold about
 * as many streams as the program has at once, not every stream it made, and a walk of the
 * streams finds each of those once. */
static void destroyed_streams_superseded_by_later_work_are_forgotten(void **state)
{
    (void)state;
    int table, model;
    chained_streams(200, 200, 0x780000);
    modelled(200, &table, &model);
    assert_false(table);
    modelled(399, &table, &model);
    assert_true(table && model); /* the latest write: nothing came after it */
    dls_pol_lock();
    size_t held = dls_map_count(&dls_pol_g.streams), walked = 0;
    dls_pol_stream *s;
    DLS_POL_EACH_STREAM (s) { /* the walk's list kept as the forgotten streams left it */
        assert_ptr_equal(dls_pol_stream_find(s->id), s);
        walked++;
    }
    dls_pol_unlock();
    assert_true(held < 40);
    assert_int_equal(walked, held);
}

/* A destroyed stream stays while any of its pending work is not superseded: a write nothing came
 * after, a word only part of its launch's words was touched again, a write only read again, and
 * a stream an exchange names. Attribution then still finds each pending writer (check reports
 * the unordered consumer), which forgetting them would have hidden. */
static void destroyed_streams_with_work_not_superseded_stay(void **state)
{
    (void)state;
    uint64_t alone = 0x800000, both[2] = {0x810000, 0x820000};
    launch(300, "alone", &alone, 1, 0);
    stream_life(DLS_OP_STREAM_DESTROY, 300);
    launch(301, "two words", both, 2, 0);
    event_op(DLS_OP_EVENT_RECORD, 301, 6301);
    stream_life(DLS_OP_STREAM_DESTROY, 301);
    event_op(DLS_OP_STREAM_WAIT_EVENT, 302, 6301);
    launch(302, "second word only", &both[1], 1, 0);
    dls_cuda_range set = {.addr = 0x830000, .len = 0x100, .access = DLS_ACCESS_WRITE};
    call_with(DLS_OP_MEMSET, "cuMemsetD8Async", 303, &set, 1, DLS_OPF_ASYNC);
    event_op(DLS_OP_EVENT_RECORD, 303, 6303);
    stream_life(DLS_OP_STREAM_DESTROY, 303);
    event_op(DLS_OP_STREAM_WAIT_EVENT, 304, 6303);
    dls_cuda_range copy[2] = {{.addr = 0x830000, .len = 0x100, .access = DLS_ACCESS_READ},
                              {.addr = 0x840000, .len = 0x100, .access = DLS_ACCESS_WRITE}};
    call_with(DLS_OP_MEMCPY, "cuMemcpyAsync", 304, copy, 2, DLS_OPF_ASYNC);
    uint64_t used = 0x850000;
    launch(305, "producer", &used, 1, 0);
    dls_pol_x *x = export_range(0x850000, 0x850100);
    launch(306, "consumer", &used, 1, 0); /* a use: x names stream 306 */
    event_op(DLS_OP_EVENT_RECORD, 306, 6306);
    stream_life(DLS_OP_STREAM_DESTROY, 306);
    event_op(DLS_OP_STREAM_WAIT_EVENT, 307, 6306);
    launch(307, "after the consumer", &used, 1, 0);
    chained_streams(400, 100, 0x790000); /* sweeps */
    int table, model;
    for (uint64_t sid = 300; sid <= 306; sid += 3) {
        modelled(sid, &table, &model);
        assert_true(table && model);
    }
    modelled(301, &table, &model);
    assert_true(table && model);
    assert_non_null(x);
    size_t races = dls_race_distinct();
    dls_pol_x *a = export_range(0x800000, 0x800100);
    dls_pol_x *b = export_range(0x810000, 0x810100);
    dls_pol_x *c = export_range(0x830000, 0x830100);
    assert_int_equal(a->nfront, 1);
    assert_int_equal(a->front[0].at.stream, 300);
    assert_int_equal(b->nfront, 1);
    assert_int_equal(b->front[0].at.stream, 301);
    assert_int_equal(c->nfront, 2); /* the copy only read what the set wrote */
    assert_true(c->front[0].at.stream == 303 || c->front[1].at.stream == 303);
    launch(500, "unordered consumer", &alone, 1, 0);
    assert_int_equal(dls_race_distinct(), races + 1);
}

/* Delivers a cuLaunchHostFunc on stream sid (ENTER and EXIT). */
static void host_func(uint64_t sid)
{
    dls_cuda_op op = {.kind = DLS_OP_HOST_FUNC,
                      .flags = DLS_OPF_ASYNC | DLS_OPF_HAS_STREAM,
                      .api = "cuLaunchHostFunc",
                      .tid = TID,
                      .correlation_id = ++g_corr,
                      .stream = stream(sid, DLS_STREAM_NON_BLOCKING)};
    op.phase = DLS_PHASE_ENTER;
    dls_pol_on_op(&op);
    op.phase = DLS_PHASE_EXIT;
    dls_pol_on_op(&op);
}

/* The producer's write of [at, at + 0x100) on stream s, then (as XLA) an event there, stream
 * s + 1 waiting for it and a host function on stream s + 1; the tensor is exported. */
static void write_then_host_function_on(uint64_t at, uint64_t s)
{
    launch(s, "producer", &at, 1, 0);
    event_op(DLS_OP_EVENT_RECORD, s, 1000 + s);
    event_op(DLS_OP_STREAM_WAIT_EVENT, s + 1, 1000 + s);
    host_func(s + 1);
    export_range(at, at + 0x100);
}

/* The same on streams 1 and 2. */
static void write_then_host_function(uint64_t at)
{
    write_then_host_function_on(at, 1);
}

static void a_host_function_that_ran_orders_the_consumer(void **state)
{
    (void)state;
    write_then_host_function(0x10000);
    assert_int_equal(g_records, 1);
    uint64_t mine = 0x10000;
    launch(3, "consumer", &mine, 1, 0);
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(dls_race_distinct(), 0);
    assert_int_equal(g_queries, 1);             /* ordered from then on: never asked again */
    launch(4, "another consumer", &mine, 1, 0); /* the mark is known complete: no new query */
    assert_int_equal(dls_race_distinct(), 0);
    assert_int_equal(g_queries, 1);
}

static void a_host_function_that_has_not_run_leaves_the_race(void **state)
{
    (void)state;
    g_query = CUDA_ERROR_NOT_READY;
    write_then_host_function(0x10000);
    uint64_t mine = 0x10000;
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(dls_race_distinct(), 1);
    assert_int_equal(g_queries, 1);
}

static void a_host_function_not_after_the_write_is_not_asked(void **state)
{
    (void)state;
    uint64_t mine = 0x10000;
    host_func(1); /* before the write on its stream */
    host_func(2); /* on a stream that never waited for the write */
    launch(1, "producer", &mine, 1, 0);
    export_range(0x10000, 0x10100);
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(g_records, 2);
    assert_int_equal(g_queries, 0);
    assert_int_equal(dls_race_distinct(), 1);
}

static void an_ordered_use_never_asks(void **state)
{
    (void)state;
    write_then_host_function(0x10000);
    uint64_t mine = 0x10000;
    launch(1, "same stream", &mine, 1, 0);
    assert_int_equal(g_queries, 0);
    assert_int_equal(dls_race_distinct(), 0);
}

static void fix_injects_nothing_after_a_host_function_that_ran(void **state)
{
    (void)state;
    dls_pol_g.mode = DLS_MODE_FIX;
    write_then_host_function(0x10000);
    uint64_t mine = 0x10000;
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(g_waits, 0);
    g_query = CUDA_ERROR_NOT_READY;
    uint64_t other = 0x20000;
    write_then_host_function(other);
    launch(4, "consumer", &other, 1, 0);
    assert_int_equal(g_waits, 1);
}

/* The consumer releases x the way on_release does (fix). */
static void release_fix(dls_pol_x *x)
{
    release_fix_by(x, TID);
}

/* The handle fix uses for the test's non-blocking stream sid. */
static CUstream handle_of(uint64_t sid)
{
    return (CUstream)(uintptr_t)(0x1000 + sid);
}

/* fix: the consumer reads the tensor on stream 3 (first use: a record on the producer's stream 1
 * and a wait; the point right after the read is due), goes on with other work there, which
 * records the due event first, and releases the tensor; the producer's reuse of the memory waits
 * on the event recorded after the read, not on one recorded now (which would cover the later
 * work too). */
static void the_release_fence_waits_on_the_event_after_the_read(void **state)
{
    (void)state;
    dls_pol_g.mode = DLS_MODE_FIX;
    uint64_t mine = 0x10000, other = 0x90000;
    launch(1, "producer", &mine, 1, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(g_waits, 1);
    assert_int_equal(g_records, 1); /* the after event is due, not recorded */
    for (int i = 0; i < 4; i++)
        launch(3, "later", &other, 1, 0); /* the first records the due event; none touches the tensor */
    assert_int_equal(g_records, 2);
    assert_ptr_equal(g_recorded_on, handle_of(3));
    CUevent after_read = g_recorded;
    release_fix(x);
    assert_int_equal(g_records, 2);
    launch(1, "reuse", &mine, 1, 0);
    assert_int_equal(g_records, 2);
    assert_int_equal(g_waits, 2);
    assert_ptr_equal(g_waited, after_read);
    assert_ptr_equal(g_waiting, handle_of(1));
    assert_null(dls_pol_g.released); /* the reuse covered the range: the fence is gone */
}

/* fix, two consumer streams: the reuse waits once on each stream's event after its read; the
 * events go back to the pool when the fence is dropped, so the next exchange creates none. */
static void each_consumer_stream_is_fenced_by_its_own_event(void **state)
{
    (void)state;
    dls_pol_g.mode = DLS_MODE_FIX;
    uint64_t mine = 0x10000;
    int created = 0;
    for (int round = 0; round < 2; round++) {
        launch(1, "producer", &mine, 1, 0);
        dls_pol_x *x = export_range(0x10000, 0x10100);
        int records = g_records;
        launch(3, "consumer", &mine, 1, 0);
        launch(4, "consumer", &mine, 1, 0);
        int waits = g_waits;
        release_fix(x);
        launch(1, "reuse", &mine, 1, 0);
        assert_int_equal(g_records, records + 4); /* each first use's, and the two after events for the fence */
        assert_int_equal(g_waits, waits + 2);
        assert_ptr_equal(g_waiting, handle_of(1));
        if (round == 1)
            assert_int_equal(g_creates, created); /* the first round's events were reused */
        created = g_creates;
    }
}

/* While the fence's wait is being made (no lock held), another thread drops the released
 * exchange and makes a new exchange and consumer access, which take events from the pool: the
 * event being waited on is not among them (the planned ordering holds a reference until it is
 * committed). */
static void drop_fences_and_exchange_again(void)
{
    assert_ptr_equal(g_waited, g_watched); /* the fence waits on the event after the read */
    dls_pol_lock();
    while (dls_pol_g.released)
        dls_pol_x_drop(dls_pol_g.released);
    dls_pol_unlock();
    uint64_t other = 0x50000;
    launch(1, "producer", &other, 1, 0);
    export_range(0x50000, 0x50100);
    launch(3, "consumer", &other, 1, 0);
}

static void the_event_of_a_wait_being_made_is_not_reused(void **state)
{
    (void)state;
    dls_pol_g.mode = DLS_MODE_FIX;
    uint64_t mine = 0x10000;
    launch(1, "producer", &mine, 1, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    launch(3, "consumer", &mine, 1, 0);
    launch(3, "later", &(uint64_t){0x90000}, 1, 0); /* records the due event after the read */
    g_watched = g_recorded;
    release_fix(x);
    int records = g_records;
    g_during_wait = drop_fences_and_exchange_again;
    launch(1, "reuse", &mine, 1, 0);
    assert_null(g_during_wait);               /* the fence's wait was made */
    assert_int_equal(g_records, records + 1); /* the new exchange's first use (its after event is due) */
    assert_int_equal(g_watched_records, 0);   /* the event after the read was not handed out again */
}

/* fix: a program that orders the producer's reuse after the consumer's read itself (its own event
 * recorded after the read, waited for by the producer's stream) gets no event of the shim's after
 * the read: the point is due until the reuse drops the released exchange's fence, the last that
 * holds it, and is freed then, before the consumer's next operation on its stream. */
static void an_ordered_reuse_records_no_event_after_the_read(void **state)
{
    (void)state;
    dls_pol_g.mode = DLS_MODE_FIX;
    uint64_t mine = 0x10000;
    launch(1, "producer", &mine, 1, 0);
    dls_pol_x *x = export_range(0x10000, 0x10100);
    int records = g_records;
    launch(3, "consumer", &mine, 1, 0);
    int waits = g_waits;
    uint64_t e = 0xe1;
    event_op(DLS_OP_EVENT_RECORD, 3, e); /* the program's own, after the read */
    release_fix(x);
    event_op(DLS_OP_STREAM_WAIT_EVENT, 1, e);
    launch(1, "reuse", &mine, 1, 0);
    assert_int_equal(g_waits, waits); /* ordered by the program */
    assert_null(dls_pol_g.released);
    assert_false(dls_pol_after_any_due()); /* dropped with the fence: nothing holds it */
    launch(3, "next", &mine, 1, 0);
    assert_int_equal(g_records, records + 1); /* the consumer's first use only */
}

/* check records no event after a consumer access. */
static void check_records_no_event_after_an_access(void **state)
{
    (void)state;
    uint64_t mine = 0x10000;
    launch(1, "producer", &mine, 1, 0);
    export_range(0x10000, 0x10100);
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(g_records, 0);
    assert_int_equal(dls_race_distinct(), 1);
}

/* More host functions than there are marks, on a stream of their own. */
static void many_host_functions(void)
{
    for (int i = 0; i < DLS_POL_HOSTFN + 8; i++)
        host_func(50);
}

static void the_oldest_mark_is_reused_and_then_teaches_nothing(void **state)
{
    (void)state;
    write_then_host_function(0x10000);
    many_host_functions();
    uint64_t mine = 0x10000;
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(g_queries, 0);
    assert_int_equal(dls_race_distinct(), 1);
}

static void a_mark_being_asked_is_not_reused(void **state)
{
    (void)state;
    write_then_host_function(0x10000);
    g_during_query = many_host_functions;
    uint64_t mine = 0x10000;
    launch(3, "consumer", &mine, 1, 0);
    assert_int_equal(g_records, 1 + DLS_POL_HOSTFN + 8);
    assert_int_equal(g_queries, 1);
    assert_int_equal(dls_race_distinct(), 0);
}

/* One thread of the test below: its own streams, ranges and thread id; 4 threads make no more
 * marks than there are (an evicted mark would teach nothing, see above). */
static void *hostfn_thread(void *arg)
{
    int k = (int)(intptr_t)arg;
    TID = 200 + (uint64_t)k;
    for (uint64_t i = 0; i < DLS_POL_HOSTFN / 4; i++) {
        uint64_t at = 0x1000000 * (uint64_t)(k + 1) + 0x1000 * i, s = 10 + 4 * (uint64_t)k;
        write_then_host_function_on(at, s);
        launch(s + 2, "consumer", &at, 1, 0);
    }
    return NULL;
}

static void threads_marking_and_asking_at_once_learn_their_own(void **state)
{
    (void)state;
    pthread_t t[4];
    for (int k = 0; k < 4; k++)
        assert_int_equal(pthread_create(&t[k], NULL, hostfn_thread, (void *)(intptr_t)k), 0);
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    assert_int_equal(g_records, DLS_POL_HOSTFN);
    assert_int_equal(g_queries, DLS_POL_HOSTFN);
    assert_int_equal(dls_race_distinct(), 0);
}

static void identical_reports_share_a_key(void **state)
{
    (void)state;
    int64_t shape[1] = {4};
    dls_race r = {.kind = DLS_RACE_WRITE_READ,
                  .framework = "f",
                  .symbol = "s",
                  .device = "cuda",
                  .dtype = "float32",
                  .ndim = 1,
                  .shape = shape,
                  .why = "test"};
    r.producer.op = "w";
    r.producer.stream.kind = "blocking";
    r.consumer.op = "r";
    r.consumer.stream.kind = "non-blocking";
    r.consumer.stream.id = 3;
    uint64_t k = dls_race_key(&r);
    r.xid = 99; /* another exchange from the same site: same hazard */
    assert_int_equal(dls_race_key(&r), k);
    r.consumer.stream.id = 4;
    assert_true(dls_race_key(&r) != k);
    r.kind = DLS_RACE_HOST_READ;
    assert_string_equal(dls_race_kind_name(r.kind), "host-read");
}

/* The driver as the work lane's first sight of a stream asks it: stream 0x1000 + id has id `id`,
 * is non-blocking and belongs to context 0xc0. */
/* Delivers w (ENTER too when `enter`) on stream 1 through the work lane as the observer does, and
 * the same call as the op lane's dls_cuda_op on stream 2. */
static void work_and_op(dls_cuda_work *w, int enter)
{
    static dls_cuda_stream s1;
    s1 = stream(1, DLS_STREAM_NON_BLOCKING);
    w->stream = &s1;
    w->handle = s1.handle;
    w->tid = TID;
    w->correlation_id = ++g_corr;
    dls_cuda_op op = {.kind = w->kind,
                      .phase = DLS_PHASE_ENTER,
                      .flags = w->flags | DLS_OPF_HAS_STREAM,
                      .api = w->api,
                      .name = w->name,
                      .tid = TID,
                      .correlation_id = w->correlation_id,
                      .stream = stream(2, DLS_STREAM_NON_BLOCKING),
                      .ranges = w->ranges,
                      .nranges = w->nranges,
                      .words = w->words,
                      .nwords = w->nwords};
    if (enter) {
        w->phase = DLS_PHASE_ENTER;
        dls_pol_on_work(w);
        dls_pol_on_op(&op);
    }
    w->phase = DLS_PHASE_EXIT;
    dls_pol_on_work(w);
    op.phase = DLS_PHASE_EXIT;
    dls_pol_on_op(&op);
}

/* Copies, sets and launches, some touching the exchange at 0x10000 (ranges and words); their
 * ENTERs too when `enter`. */
static void work_mix(int enter)
{
    static const uint64_t words[] = {0x10040, 7, 0x20000};
    dls_cuda_work set = {.kind = DLS_OP_MEMSET, .flags = DLS_OPF_ASYNC, .api = "cuMemsetD8Async", .nranges = 1};
    dls_cuda_work copy = {.kind = DLS_OP_MEMCPY, .flags = DLS_OPF_ASYNC, .api = "cudaMemcpyAsync", .nranges = 2};
    dls_cuda_work empty = {.kind = DLS_OP_MEMSET, .flags = DLS_OPF_ASYNC, .api = "cuMemsetD32Async"};
    dls_cuda_work kernel = {.kind = DLS_OP_LAUNCH,
                            .flags = DLS_OPF_ASYNC,
                            .api = "cuLaunchKernel",
                            .name = "k",
                            .words = words,
                            .nwords = 3};
    dls_cuda_work anything = {.kind = DLS_OP_MEMCPY, .flags = DLS_OPF_ASYNC | DLS_OPF_CONSERVATIVE, .api = "cuMemcpy"};
    for (uint64_t i = 0; i < 3; i++) {
        set.ranges[0] = (dls_cuda_range){.addr = 0x10000 + 0x100 * i, .len = 64, .access = DLS_ACCESS_WRITE};
        copy.ranges[0] = (dls_cuda_range){.addr = 0x30000, .len = 8, .access = DLS_ACCESS_READ};
        copy.ranges[1] = (dls_cuda_range){.addr = 0x100f8 + 0x10 * i, .len = 8, .access = DLS_ACCESS_WRITE};
        work_and_op(&set, enter);
        work_and_op(&copy, enter);
        work_and_op(&empty, enter);
        work_and_op(&kernel, enter);
        work_and_op(&anything, enter);
    }
}

/* Stream id's latest consumer access of x (its position), or 0. */
static uint64_t access_of(const dls_pol_x *x, uint64_t id)
{
    for (unsigned i = 0; i < x->nuse; i++)
        if (x->use[i].stream == id)
            return x->use[i].pos;
    return 0;
}

/* The work lane builds the model the op lane builds from the same call, at ENTER and EXIT, with
 * nothing watched and with an exchange watched: positions, ring entries and consumer accesses
 * (the first record adds the stream when applied, the others find it at the EXIT). */
static void the_work_lane_defers_what_the_op_lane_would(void **state)
{
    (void)state;
    work_mix(0); /* nothing watched */
    dls_pol_x *x = export_range(0x10000, 0x10100);
    work_mix(0);    /* watched, the ENTERs not seen (the gate was closed at them) */
    work_mix(1);    /* watched */
    dls_pol_lock(); /* applies the queue; copied out so that a failed assertion leaves no lock held */
    dls_pol_stream *sa = dls_pol_stream_find(1), *sb = dls_pol_stream_find(2);
    static dls_pol_stream a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (sa && sb) {
        a = *sa;
        b = *sb;
    }
    uint64_t access_a = access_of(x, 1), access_b = access_of(x, 2);
    dls_pol_unlock();
    assert_int_equal(a.last, 45);
    assert_int_equal(a.last, b.last);
    assert_int_equal(a.count, b.count);
    for (unsigned i = 0; i < a.count; i++) {
        const dls_pol_entry *e = &a.ring[i], *f = &b.ring[i];
        assert_int_equal(e->pos, f->pos);
        assert_int_equal(e->a.op, f->a.op);
        assert_int_equal(e->a.conservative, f->a.conservative);
        assert_int_equal(e->a.nwords, f->a.nwords);
        assert_int_equal(e->a.nranges, f->a.nranges);
        assert_int_equal(e->a.boxed, f->a.boxed);
        assert_memory_equal(e->words, f->words, e->a.nwords * sizeof e->words[0]);
        for (unsigned r = 0; r < e->a.nranges; r++) {
            assert_int_equal(e->a.lo[r], f->a.lo[r]);
            assert_int_equal(e->a.hi[r], f->a.hi[r]);
        }
        assert_string_equal(e->a.api, f->a.api);
        assert_string_equal(e->name, f->name);
    }
    assert_int_not_equal(access_a, 0);
    assert_int_equal(access_a, access_b);
}

/* A fix-mode test starts with a fresh hb engine and no race reported. */
static int setup_fix(void **state)
{
    (void)state;
    dls_test_policy_new_hb(DLS_MODE_FIX);
    dls_race_reset_for_tests();
    return 0;
}

/* A test in check mode, one in fix mode, and one of the host-function tests (their fake driver
 * installed). */
#define CHECK(f) cmocka_unit_test_setup_teardown(f, dls_test_policy_setup_check, dls_test_policy_teardown)
#define FIX(f) cmocka_unit_test_setup_teardown(f, setup_fix, dls_test_policy_teardown)
#define HOSTFN(f) cmocka_unit_test_setup_teardown(f, setup_hostfn, teardown_hostfn)

int main(void)
{
    const struct CMUnitTest tests[] = {
        CHECK(unrelated_busy_streams_are_not_producers),
        CHECK(a_launch_touching_nothing_watched_takes_no_lock),
        CHECK(the_work_lane_takes_no_lock_for_a_new_stream),
        CHECK(the_programs_event_records_and_waits_take_no_lock),
        CHECK(the_stream_table_finds_every_stream_as_it_grows),
        CHECK(a_stream_leaves_the_legacy_rules_when_its_destruction_begins),
        FIX(a_stream_is_modelled_from_its_first_operation),
        FIX(a_synchronous_copy_on_a_stream_in_a_reused_slot_is_waited_for),
        FIX(a_forgotten_streams_record_is_freed_once_nothing_holds_it),
        CHECK(check_keeps_the_latest_forgotten_streams_in_hb),
        CHECK(destroyed_streams_superseded_by_later_work_are_forgotten),
        FIX(destroyed_streams_superseded_by_later_work_are_forgotten),
        CHECK(destroyed_streams_with_work_not_superseded_stay),
        CHECK(a_call_with_nothing_to_model_counts_and_moves_the_horizon),
        CHECK(the_frontier_is_the_touching_op_not_the_latest),
        CHECK(host_synchronized_work_is_not_pending),
        CHECK(a_conservative_launch_touches_everything),
        CHECK(an_overflowed_history_still_attributes_what_it_lost),
        CHECK(a_lost_buffer_stays_apart_from_distant_ones),
        CHECK(what_a_history_lost_that_only_read_is_no_write),
        CHECK(a_repeated_operation_keeps_one_history_entry_at_its_latest_position),
        CHECK(a_wide_launch_is_attributed_by_its_pointer_words),
        CHECK(a_seventeenth_producer_stream_is_not_dropped),
        CHECK(a_copy_touches_exactly_its_ranges),
        CHECK(an_unordered_consumer_is_reported_once),
        CHECK(an_event_wait_orders_the_consumer),
        HOSTFN(a_host_function_that_ran_orders_the_consumer),
        HOSTFN(a_host_function_that_has_not_run_leaves_the_race),
        HOSTFN(a_host_function_not_after_the_write_is_not_asked),
        HOSTFN(an_ordered_use_never_asks),
        HOSTFN(fix_injects_nothing_after_a_host_function_that_ran),
        HOSTFN(the_oldest_mark_is_reused_and_then_teaches_nothing),
        HOSTFN(a_mark_being_asked_is_not_reused),
        HOSTFN(threads_marking_and_asking_at_once_learn_their_own),
        HOSTFN(the_release_fence_waits_on_the_event_after_the_read),
        HOSTFN(each_consumer_stream_is_fenced_by_its_own_event),
        HOSTFN(the_event_of_a_wait_being_made_is_not_reused),
        HOSTFN(an_ordered_reuse_records_no_event_after_the_read),
        HOSTFN(check_records_no_event_after_an_access),
        cmocka_unit_test(identical_reports_share_a_key),
        CHECK(the_work_lane_defers_what_the_op_lane_would),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
