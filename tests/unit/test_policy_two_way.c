/* Unit tests of the two-way rule (docs/architecture.md, "The two-way rule"): the
 * access record's direction (access.h, dls_pol_direction) and, in fix, the orderings it makes
 * between the producer's or another stream's operations and the consumer's accesses after the
 * handover, before and after the release. Operations are fed to the op lane as the observer
 * delivers them; fix's waits go to a fake driver table that counts them. No CUDA is involved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/config.h"
#include "test_policy_all.h"
#include "report/race.h"
#include "report/summary.h"
#include "policy/policy.h"
#include "policy/sink.h"
#include "test_policy_export.h"
#include "test_policy_fake_drv.h"
#include "test_policy_forget.h"

enum { PRODUCER = 1, CONSUMER = 3, OTHER = 4 }; /* non-blocking streams */
enum { TID = 100 };

static _Atomic uint32_t g_corr;

static int setup(void **state)
{
    (void)state;
    dls_test_policy_new_hb(DLS_MODE_FIX);
    dls_race_reset_for_tests();
    fake_drv_install();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dls_test_policy_end();
    fake_drv_remove();
    dls_pol_g.mode = DLS_MODE_CHECK;
    return 0;
}

static CUstream handle_of(uint64_t sid)
{
    return (CUstream)(uintptr_t)(0x1000 + sid);
}

/* An operation of `kind` on stream sid, as the observer delivers it. */
static dls_cuda_op op_on(dls_op_kind kind, uint64_t sid)
{
    return (dls_cuda_op){.kind = kind,
                         .flags = DLS_OPF_ASYNC | DLS_OPF_HAS_STREAM,
                         .api = kind == DLS_OP_LAUNCH   ? "cuLaunchKernel"
                                : kind == DLS_OP_MEMSET ? "cuMemsetD8Async"
                                                        : "cuMemcpyAsync",
                         .name = kind == DLS_OP_LAUNCH ? "kernel" : NULL,
                         .tid = TID,
                         .correlation_id = ++g_corr,
                         .stream = {.id = sid,
                                    .handle = 0x1000 + sid,
                                    .ctx = 0xc0,
                                    .ctx_id = 1,
                                    .kind = DLS_STREAM_NON_BLOCKING,
                                    .resolved = 1}};
}

static void deliver(dls_cuda_op *op)
{
    op->phase = DLS_PHASE_ENTER;
    dls_pol_on_op(op);
    op->phase = DLS_PHASE_EXIT;
    dls_pol_on_op(op);
}

/* A launch on stream sid given the word `word`. */
static void launch(uint64_t sid, uint64_t word)
{
    dls_cuda_op op = op_on(DLS_OP_LAUNCH, sid);
    op.words = &word;
    op.nwords = 1;
    deliver(&op);
}

/* A copy on stream sid of 64 bytes from `from` to `to`. */
static void copy(uint64_t sid, uintptr_t from, uintptr_t to)
{
    dls_cuda_range r[2] = {{.addr = from, .len = 64, .access = DLS_ACCESS_READ},
                           {.addr = to, .len = 64, .access = DLS_ACCESS_WRITE}};
    dls_cuda_op op = op_on(DLS_OP_MEMCPY, sid);
    op.ranges = r;
    op.nranges = 2;
    deliver(&op);
}

/* A set of 64 bytes at `at` on stream sid. */
static void set(uint64_t sid, uintptr_t at)
{
    dls_cuda_range r = {.addr = at, .len = 64, .access = DLS_ACCESS_WRITE};
    dls_cuda_op op = op_on(DLS_OP_MEMSET, sid);
    op.ranges = &r;
    op.nranges = 1;
    deliver(&op);
}

static const uintptr_t X = 0x10000, OUT = 0x90000; /* the tensor is [X, X + 0x100) */

/* The producer writes the tensor on its stream and exports it; the consumer reads it on its own
 * (first use: one wait). */
static dls_pol_x *handed_over_and_read(int read_only)
{
    set(PRODUCER, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    x->read_only = read_only;
    copy(CONSUMER, X, OUT);
    assert_int_equal(g_waits, 1);
    assert_ptr_equal(g_waiting, handle_of(CONSUMER));
    return x;
}

/* The access record's direction: copies and sets say theirs, everything else may write, and the
 * consumer of a read-only tensor only reads it. */
static void the_access_record_says_the_direction(void **state)
{
    (void)state;
    set(PRODUCER, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    dls_cuda_range r[2] = {{.addr = X, .len = 8, .access = DLS_ACCESS_READ},
                           {.addr = OUT, .len = 8, .access = DLS_ACCESS_WRITE}};
    uint64_t word = X;
    dls_pol_access a;
    dls_cuda_op op = op_on(DLS_OP_MEMCPY, CONSUMER);
    op.ranges = r;
    op.nranges = 2;
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_READS); /* the copy's source */
    r[0].addr = OUT;
    r[1].addr = X;
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_WRITES); /* its destination */
    op = op_on(DLS_OP_MEMSET, CONSUMER);
    op.ranges = &r[1];
    op.nranges = 1;
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_WRITES);
    op.flags |= DLS_OPF_CONSERVATIVE; /* unknown layout */
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_MAY_WRITE);
    op = op_on(DLS_OP_LAUNCH, CONSUMER);
    op.words = &word;
    op.nwords = 1;
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_MAY_WRITE);
    op.kind = DLS_OP_GRAPH_LAUNCH;
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_MAY_WRITE);
    x->read_only = 1; /* the consumer's kernels read; the producer's may still write */
    op.kind = DLS_OP_LAUNCH;
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_READS);
    assert_int_equal(dls_pol_direction(&a, x, PRODUCER), DLS_POL_MAY_WRITE);
    op = op_on(DLS_OP_FREE, CONSUMER);
    op.ranges = &r[1];
    op.nranges = 1;
    dls_pol_access_of_op(&a, &op);
    assert_int_equal(dls_pol_direction(&a, x, CONSUMER), DLS_POL_WRITES);
}

/* Each stream's use keeps its latest access, its latest that may write and its latest known
 * write, by position. */
static void a_use_keeps_its_latest_access_write_and_known_write(void **state)
{
    (void)state;
    dls_pol_x *x = handed_over_and_read(0);
    launch(CONSUMER, X);
    copy(CONSUMER, X, OUT);
    dls_pol_lock();
    const dls_pol_use *u = NULL;
    for (unsigned i = 0; i < x->nuse; i++)
        if (x->use[i].stream == CONSUMER)
            u = &x->use[i];
    assert_non_null(u);
    uint64_t pos = u->pos, write = u->write, known = u->known;
    dls_pol_unlock();
    assert_true(pos > write); /* the last copy reads */
    assert_true(write > 0);   /* the launch may write */
    assert_int_equal(known, 0);
    set(CONSUMER, X);
    dls_pol_lock();
    assert_true(u->known == u->pos && u->write == u->pos && u->pos > pos);
    assert_string_equal(u->kname, "cuMemsetD8Async");
    dls_pol_unlock();
}

/* The producer recycles the buffer (a set on its stream) while the consumer's copy of it is
 * pending: the set waits on the event recorded right after the copy. */
static void a_producer_write_waits_for_the_pending_consumer_read(void **state)
{
    (void)state;
    handed_over_and_read(0);
    CUevent after_read = g_recorded;
    set(PRODUCER, X);
    assert_int_equal(g_waits, 2);
    assert_ptr_equal(g_waiting, handle_of(PRODUCER));
    assert_ptr_equal(g_waited, after_read);
    set(PRODUCER, X); /* ordered already */
    assert_int_equal(g_waits, 2);
}

/* Any other stream writing the tensor is ordered the same way. */
static void another_stream_writing_waits_for_the_consumer(void **state)
{
    (void)state;
    handed_over_and_read(0);
    set(OTHER, X);
    assert_int_equal(g_waits, 3); /* its first use: after the producer's write, and after the read */
    assert_ptr_equal(g_waiting, handle_of(OTHER));
}

/* The consumer writes the tensor in place; the producer's later read of its own array waits for
 * that write. */
static void a_producer_read_waits_for_the_consumer_in_place_write(void **state)
{
    (void)state;
    handed_over_and_read(0);
    set(CONSUMER, X);
    copy(PRODUCER, X, OUT + 0x1000);
    assert_int_equal(g_waits, 2);
    assert_ptr_equal(g_waiting, handle_of(PRODUCER));
}

/* Both sides only reading after the handover: nothing is ordered. */
static void reads_on_both_sides_are_not_ordered(void **state)
{
    (void)state;
    handed_over_and_read(0);
    copy(PRODUCER, X, OUT + 0x1000);
    copy(CONSUMER, X, OUT);
    copy(PRODUCER, X + 64, OUT + 0x1000);
    assert_int_equal(g_waits, 1);
}

/* Kernels may write: a producer kernel after a consumer kernel is ordered after it. */
static void a_kernel_after_a_kernel_is_ordered(void **state)
{
    (void)state;
    handed_over_and_read(0);
    launch(CONSUMER, X);
    launch(PRODUCER, X);
    assert_int_equal(g_waits, 2);
    assert_ptr_equal(g_waiting, handle_of(PRODUCER));
}

/* A producer that synchronized before exporting is still the producer's side (its history held
 * the write): its recycling kernel waits for the consumer's pending read kernel. */
static void a_synchronized_producer_kernel_still_waits_for_the_consumer(void **state)
{
    (void)state;
    launch(PRODUCER, X);
    dls_cuda_op sync = op_on(DLS_OP_STREAM_SYNC, PRODUCER);
    sync.flags = DLS_OPF_HAS_STREAM;
    deliver(&sync);
    dls_pol_x *x = export_range(X, X + 0x100);
    dls_pol_lock();
    assert_int_equal(x->nfront, 0);
    assert_true(dls_pol_x_produced_on(x, PRODUCER));
    assert_false(dls_pol_x_produced_on(x, CONSUMER));
    dls_pol_unlock();
    launch(CONSUMER, X);
    assert_int_equal(g_waits, 0); /* nothing pending at the export */
    launch(PRODUCER, X);
    assert_int_equal(g_waits, 1);
    assert_ptr_equal(g_waiting, handle_of(PRODUCER));
}

/* Two kernels on two streams of the consumer's side (neither produced the tensor) are the
 * consumer's own business: not ordered; a known write there is. */
static void kernels_on_two_consumer_streams_are_not_ordered(void **state)
{
    (void)state;
    handed_over_and_read(0);
    launch(CONSUMER, X);
    launch(OTHER, X); /* its first use: after the producer's write only */
    assert_int_equal(g_waits, 2);
    set(CONSUMER, X); /* a known write after the other stream's kernel */
    assert_int_equal(g_waits, 3);
    assert_ptr_equal(g_waiting, handle_of(CONSUMER));
    launch(OTHER, X); /* a kernel after that known write */
    assert_int_equal(g_waits, 4);
    assert_ptr_equal(g_waiting, handle_of(OTHER));
}

/* A read-only tensor: the consumer's kernels are reads, so the producer's read is not ordered
 * after them; its kernel still is (the producer may write its own tensor). */
static void a_read_only_consumer_kernel_is_a_read(void **state)
{
    (void)state;
    handed_over_and_read(1);
    launch(CONSUMER, X);
    copy(PRODUCER, X, OUT + 0x1000);
    assert_int_equal(g_waits, 1);
    launch(PRODUCER, X);
    assert_int_equal(g_waits, 2);
    assert_ptr_equal(g_waiting, handle_of(PRODUCER));
}

/* A use the host saw complete needs no ordering. */
static void a_completed_use_is_not_waited_for(void **state)
{
    (void)state;
    handed_over_and_read(0);
    dls_cuda_op sync = op_on(DLS_OP_STREAM_SYNC, CONSUMER);
    sync.flags = DLS_OPF_HAS_STREAM;
    deliver(&sync);
    set(PRODUCER, X);
    assert_int_equal(g_waits, 1);
}

/* The consumer releases x the way on_release does (fix). */
static void release_fix(dls_pol_x *x)
{
    release_fix_by(x, TID);
}

/* The consumer calls the deleter and only then launches the kernel that reads the tensor: the
 * producer's reuse of the memory still waits for that kernel. */
static void an_access_after_the_release_counts_for_the_fence(void **state)
{
    (void)state;
    set(PRODUCER, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    release_fix(x);
    assert_non_null(dls_pol_g.released); /* watched on */
    launch(CONSUMER, X);
    assert_int_equal(g_waits, 1); /* the kernel after the producer's write */
    launch(PRODUCER, X);
    assert_int_equal(g_waits, 2);
    assert_ptr_equal(g_waiting, handle_of(PRODUCER));
    assert_null(dls_pol_g.released); /* the producer reused it whole: the fence is gone */
}

/* A synchronous free waits for the work of its own context only. The consumer, on another
 * device's stream, released the tensor with its read still pending: the host waits for that read
 * before the producer's free hands the memory back, once. A free of memory no exchange holds
 * waits for nothing. */
static void a_free_waits_for_the_consumers_pending_use(void **state)
{
    (void)state;
    set(PRODUCER, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    dls_cuda_range r[2] = {{.addr = X, .len = 64, .access = DLS_ACCESS_READ},
                           {.addr = OUT, .len = 64, .access = DLS_ACCESS_WRITE}};
    dls_cuda_op read = op_on(DLS_OP_MEMCPY, OTHER);
    read.stream.ctx = 0xc1; /* another device's context */
    read.stream.ctx_id = 2;
    read.ranges = r;
    read.nranges = 2;
    deliver(&read);
    release_fix(x);
    dls_cuda_range freed = {.addr = OUT + 0x1000, .len = 0x100, .access = DLS_ACCESS_WRITE};
    dls_cuda_op free_op = {.kind = DLS_OP_FREE, .api = "cuMemFree_v2", .tid = TID, .ranges = &freed, .nranges = 1};
    free_op.correlation_id = ++g_corr;
    deliver(&free_op);
    assert_int_equal(g_host_waits, 0); /* not the tensor */
    freed.addr = X;
    free_op.correlation_id = ++g_corr;
    deliver(&free_op);
    assert_int_equal(g_host_waits, 1);
    free_op.correlation_id = ++g_corr;
    deliver(&free_op);
    assert_int_equal(g_host_waits, 1); /* the host saw the read complete */
}

static _Atomic int g_other_on_consumer; /* waits of OTHER for the last record on CONSUMER */

/* Run inside every cuStreamWaitEvent (it arms itself again): counts the waits of OTHER on an event
 * whose latest record, the one a wait waits for, was on CONSUMER. */
static void count_other_on_consumer(void)
{
    if (g_waiting == handle_of(OTHER) && g_waited == g_recorded && g_recorded_on == handle_of(CONSUMER))
        g_other_on_consumer++;
    g_during_wait = count_other_on_consumer;
}

/* The consumer's accesses after the release do not end the watch, even when they cover the
 * tensor: a third stream's kernel on that memory still waits for the consumer's stream, once. */
static void a_consumer_kernel_after_the_release_does_not_end_the_fence(void **state)
{
    (void)state;
    set(PRODUCER, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    copy(CONSUMER, X, OUT);
    release_fix(x);
    int waits = g_waits;
    launch(CONSUMER, X);
    assert_int_equal(g_waits, waits); /* the consumer's own kernel stays as it ordered it */
    assert_non_null(dls_pol_g.released);
    g_other_on_consumer = 0;
    g_during_wait = count_other_on_consumer;
    launch(OTHER, X);
    assert_int_equal(g_other_on_consumer, 1);
    assert_non_null(dls_pol_g.released);
    waits = g_waits;
    launch(OTHER, X);
    assert_int_equal(g_waits, waits); /* ordered already */
    g_during_wait = NULL;
}

/* ---- check: the new race kinds ---- */

static size_t g_entries0; /* race entries written before the test (they are never reset) */

static int setup_check(void **state)
{
    setup(state);
    g_entries0 = dls_race_entries();
    dls_pol_g.mode = DLS_MODE_CHECK;
    return 0;
}

static int teardown_check(void **state)
{
    unsetenv("DLSYNC_KERNEL_PAIRS");
    dls_config_reset_for_tests();
    return teardown(state);
}

/* Delivers an operation of `kind` with event `ev` on stream sid (its EXIT). */
static void event_op(dls_op_kind kind, uint64_t sid, uint64_t ev)
{
    dls_cuda_op op = op_on(kind, sid);
    op.phase = DLS_PHASE_EXIT;
    op.flags = DLS_OPF_HAS_STREAM | DLS_OPF_HAS_EVENT;
    op.api = "event";
    op.event_id = ev;
    dls_pol_on_op(&op);
}

/* The producer writes the tensor with a kernel on its stream and exports it; the consumer's
 * stream waits for it (check: no race at the first use). */
static dls_pol_x *handed_over_ordered(void)
{
    launch(PRODUCER, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    event_op(DLS_OP_EVENT_RECORD, PRODUCER, 7);
    event_op(DLS_OP_STREAM_WAIT_EVENT, CONSUMER, 7);
    return x;
}

/* The kind of the only race written (fails unless there is exactly one). */
static const char *only_race(void)
{
    dls_pol_lock(); /* applies the queue */
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0 + 1);
    static dls_race_entry e;
    unsigned count;
    assert_int_equal(dls_race_entry_get(g_entries0, &e, &count), 0);
    return e.kind;
}

static void check_reports_a_write_while_the_consumer_reads_once(void **state)
{
    (void)state;
    handed_over_ordered();
    copy(CONSUMER, X, OUT);
    assert_int_equal(dls_race_entries(), g_entries0);
    set(PRODUCER, X);
    set(PRODUCER, X + 64); /* the same hazard again: not written twice */
    assert_string_equal(only_race(), "write-after-use");
}

static void check_reports_a_use_after_an_in_place_write(void **state)
{
    (void)state;
    handed_over_ordered();
    set(CONSUMER, X);
    copy(PRODUCER, X, OUT + 0x1000);
    assert_string_equal(only_race(), "use-after-write");
}

/* A consumer kernel, then a producer kernel: counted, not listed by default. */
static void check_counts_a_kernel_pair_without_listing_it(void **state)
{
    (void)state;
    uint64_t before = dls_summary_get(DLS_COUNT_KERNEL_PAIRS);
    handed_over_ordered();
    launch(CONSUMER, X);
    launch(PRODUCER, X);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
    assert_int_equal(dls_summary_get(DLS_COUNT_KERNEL_PAIRS), before + 1);
}

static void check_lists_a_kernel_pair_when_asked(void **state)
{
    (void)state;
    setenv("DLSYNC_KERNEL_PAIRS", "1", 1);
    dls_config_reset_for_tests();
    handed_over_ordered();
    launch(CONSUMER, X);
    launch(PRODUCER, X);
    assert_string_equal(only_race(), "kernel-pair");
}

/* Reads on both sides, and a read-only tensor's consumer kernel: nothing to report. */
static void check_reports_no_read_read_pair(void **state)
{
    (void)state;
    dls_pol_x *x = handed_over_ordered();
    x->read_only = 1;
    copy(CONSUMER, X, OUT);
    launch(CONSUMER, X);
    copy(PRODUCER, X, OUT + 0x1000);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* The consumer releases the tensor, then launches a kernel on it; the producer's reuse of the
 * memory is a use-after-release race. */
static void check_reports_an_access_after_the_release(void **state)
{
    (void)state;
    dls_pol_x *x = handed_over_ordered();
    dls_pol_lock();
    dls_pol_x_release(x);
    dls_pol_unlock();
    launch(CONSUMER, X);
    set(PRODUCER, X);
    assert_string_equal(only_race(), "use-after-release");
}

/* 1 when a race of `kind` was written since the test began. */
static int race_written(const char *kind)
{
    dls_pol_lock(); /* applies the queue */
    dls_pol_unlock();
    for (size_t i = g_entries0; i < dls_race_entries(); i++) {
        static dls_race_entry e;
        unsigned count;
        if (dls_race_entry_get(i, &e, &count) == 0 && strcmp(e.kind, kind) == 0)
            return 1;
    }
    return 0;
}

/* Ten producer streams write the tensor and the consumer reads it unordered, then releases it;
 * the reuse races with every write and with the read: more reports than one operation's queue
 * holds, and the release-reuse among them is still written. */
static void check_keeps_each_kind_when_one_access_finds_many_races(void **state)
{
    (void)state;
    for (uint64_t sid = 20; sid < 30; sid++)
        set(sid, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    copy(CONSUMER, X, OUT);
    dls_pol_lock();
    dls_pol_x_release(x);
    dls_pol_unlock();
    set(OTHER, X);
    assert_true(race_written("write-write"));
    assert_true(race_written("release-reuse"));
}

/* Pending at the export: the producer's write and, on another stream after it, a copy out of the
 * tensor. A consumer copy that only reads the tensor, ordered after the write, races with
 * nothing; a consumer kernel, which may write, races with the pending copy's read. */
static void check_lets_a_read_follow_a_pending_read(void **state)
{
    (void)state;
    set(PRODUCER, X);
    event_op(DLS_OP_EVENT_RECORD, PRODUCER, 7);
    event_op(DLS_OP_STREAM_WAIT_EVENT, OTHER, 7);
    copy(OTHER, X, OUT);
    export_range(X, X + 0x100);
    event_op(DLS_OP_EVENT_RECORD, PRODUCER, 8);
    event_op(DLS_OP_STREAM_WAIT_EVENT, CONSUMER, 8);
    copy(CONSUMER, X, OUT + 0x1000);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
    launch(CONSUMER, X);
    assert_string_equal(only_race(), "write-read");
}

/* Thread tid synchronizes stream sid on the host. */
static void stream_sync_by(uint64_t sid, uint64_t tid)
{
    dls_cuda_op op = op_on(DLS_OP_STREAM_SYNC, sid);
    op.flags = DLS_OPF_HAS_STREAM;
    op.api = "cuStreamSynchronize";
    op.tid = tid;
    deliver(&op);
}

/* Another thread's host synchronize saw the producer's write complete before the consumer's read
 * was enqueued: the read runs after it, whichever thread enqueues it. */
static void check_counts_another_threads_host_synchronize(void **state)
{
    (void)state;
    launch(PRODUCER, X);
    export_range(X, X + 0x100);
    stream_sync_by(PRODUCER, 200);
    copy(CONSUMER, X, OUT);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* The consumer's copy of the tensor (thread 300's). */
static dls_cuda_op consumer_copy(void)
{
    static dls_cuda_range r[2] = {{.addr = X, .len = 64, .access = DLS_ACCESS_READ},
                                  {.addr = OUT, .len = 64, .access = DLS_ACCESS_WRITE}};
    dls_cuda_op op = op_on(DLS_OP_MEMCPY, CONSUMER);
    op.ranges = r;
    op.nranges = 2;
    op.tid = 300;
    return op;
}

/* A thread of its own makes call op: its call begins (the observer's begin receiver), then, once
 * `go` is posted (with `wait`; else at once), its ENTER and EXIT are delivered. */
static sem_t g_began, g_go;
typedef struct {
    dls_cuda_op op;
    int wait;
    pthread_t thread;
} call_on_a_thread;

static void *make_the_call(void *arg)
{
    call_on_a_thread *c = arg;
    dls_pol_check_on_begins(c->op.correlation_id, 0);
    sem_post(&g_began);
    if (c->wait)
        sem_wait(&g_go);
    deliver(&c->op);
    return NULL;
}

/* Starts c on its thread and returns once its call began. */
static void begin_call(call_on_a_thread *c)
{
    sem_init(&g_began, 0, 0);
    sem_init(&g_go, 0, 0);
    assert_int_equal(pthread_create(&c->thread, NULL, make_the_call, c), 0);
    sem_wait(&g_began);
}

/* Lets c's ENTER and EXIT be delivered, and waits for them. */
static void end_call(call_on_a_thread *c)
{
    sem_post(&g_go);
    pthread_join(c->thread, NULL);
    sem_destroy(&g_began);
    sem_destroy(&g_go);
    dls_pol_lock(); /* applies what is still queued */
    dls_pol_unlock();
}

/* Thread 200 destroys stream sid, whose work is known complete: it is forgotten. */
static void destroy_complete(uint64_t sid)
{
    dls_cuda_op destroy = op_on(DLS_OP_STREAM_DESTROY, sid);
    destroy.tid = 200;
    deliver(&destroy);
    dls_pol_lock();
    assert_null(dls_pol_stream_find(sid));
    dls_pol_unlock();
}

/* The producer writes the tensor on its stream and exports it; with `synced_before`, thread 200
 * synchronizes the producer's stream; then the consumer's copy begins, `meanwhile` runs while it
 * is under way (its ENTER not delivered yet), and the copy's ENTER and EXIT come. */
static void copy_under_way(int synced_before, void (*meanwhile)(void))
{
    launch(PRODUCER, X);
    export_range(X, X + 0x100);
    if (synced_before)
        stream_sync_by(PRODUCER, 200);
    call_on_a_thread c = {.op = consumer_copy(), .wait = 1};
    begin_call(&c);
    meanwhile();
    end_call(&c);
}

static void synchronize_the_producer(void)
{
    stream_sync_by(PRODUCER, 200);
}

static void write_and_synchronize_the_producer_thrice(void)
{
    for (int i = 0; i < 3; i++) {
        launch(PRODUCER, OUT + 0x1000);
        stream_sync_by(PRODUCER, 200);
    }
}

static void synchronize_and_destroy_the_producer(void)
{
    stream_sync_by(PRODUCER, 200);
    destroy_complete(PRODUCER);
}

static void destroy_the_producer(void)
{
    destroy_complete(PRODUCER);
}

/* check judges a call as of its begin: another thread's host synchronize of the producer's stream
 * that returns while the consumer's copy is under way orders nothing for it, whatever the copy's
 * ENTER finds by then. */
static void check_judges_a_call_as_of_its_begin(void **state)
{
    (void)state;
    copy_under_way(0, synchronize_the_producer);
    assert_string_equal(only_race(), "write-read");
}

/* Another thread's host synchronize saw the producer's write complete before the consumer's copy
 * began; while the copy is under way, three more synchronizes of the producer's stream return,
 * each seeing more of it. The copy is still judged as of its begin: the first synchronize orders
 * it. */
static void check_counts_a_synchronize_before_the_begin_after_several_since(void **state)
{
    (void)state;
    copy_under_way(1, write_and_synchronize_the_producer_thrice);
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* While the consumer's copy is under way, another thread synchronizes the producer's stream and
 * destroys it. The copy is still judged as of its begin, when the producer's write was pending. */
static void check_judges_a_stream_forgotten_since_the_begin_as_of_it(void **state)
{
    (void)state;
    copy_under_way(0, synchronize_and_destroy_the_producer);
    assert_string_equal(only_race(), "write-read");
}

/* The same with the synchronize made before the copy began: it orders the copy, forgotten or not. */
static void check_counts_a_synchronize_before_the_begin_of_a_stream_forgotten_since(void **state)
{
    (void)state;
    copy_under_way(1, destroy_the_producer);
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* The previous consumer's kernel on stream OTHER, then the producer's fill after an event wait for
 * it, and the consumer's stream after an event wait for the fill: the consumer's copy follows both,
 * and still does when stream OTHER is forgotten while the copy is under way (what the streams'
 * clocks know of it stays askable). */
static void check_knows_what_follows_a_stream_forgotten_since_the_begin(void **state)
{
    (void)state;
    launch(OTHER, X);
    event_op(DLS_OP_EVENT_RECORD, OTHER, 7);
    event_op(DLS_OP_STREAM_WAIT_EVENT, PRODUCER, 7);
    set(PRODUCER, X);
    export_range(X, X + 0x100);
    event_op(DLS_OP_EVENT_RECORD, PRODUCER, 8);
    event_op(DLS_OP_STREAM_WAIT_EVENT, CONSUMER, 8);
    call_on_a_thread c = {.op = consumer_copy(), .wait = 1};
    begin_call(&c);
    stream_sync_by(OTHER, 200);
    destroy_complete(OTHER);
    end_call(&c);
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* Thread 200's write of the tensor on blocking stream 21 returned before thread 300's launch on
 * the legacy stream (20) began, so the legacy rule orders the launch after it; with `destroyed`,
 * thread 200 begins to destroy stream 21 while the launch is under way (after its ENTER, before
 * its EXIT). CUDA does not say that the legacy stream waits for a destroyed stream's work. */
static void legacy_launch_after_a_blocking_write(int destroyed)
{
    static uint64_t word = X;
    dls_cuda_op w = op_on(DLS_OP_LAUNCH, 21);
    w.stream.kind = DLS_STREAM_BLOCKING;
    w.words = &word;
    w.nwords = 1;
    w.tid = 200;
    deliver(&w);
    export_range(X, X + 0x100);
    dls_cuda_op r = op_on(DLS_OP_LAUNCH, 20);
    r.stream.kind = DLS_STREAM_LEGACY;
    r.words = &word;
    r.nwords = 1;
    r.tid = 300;
    r.phase = DLS_PHASE_ENTER;
    dls_pol_on_op(&r);
    if (destroyed) {
        dls_cuda_op d = op_on(DLS_OP_STREAM_DESTROY, 21);
        d.stream.kind = DLS_STREAM_BLOCKING;
        d.tid = 200;
        d.phase = DLS_PHASE_ENTER;
        dls_pol_on_op(&d);
    }
    r.phase = DLS_PHASE_EXIT;
    dls_pol_on_op(&r);
    dls_pol_lock();
    dls_pol_unlock();
}

static void check_counts_the_legacy_rule_for_a_blocking_stream_left_alive(void **state)
{
    (void)state;
    legacy_launch_after_a_blocking_write(0);
    assert_int_equal(dls_race_entries(), g_entries0);
}

static void check_drops_the_legacy_rule_for_a_stream_destroyed_during_the_call(void **state)
{
    (void)state;
    legacy_launch_after_a_blocking_write(1);
    assert_string_equal(only_race(), "write-read");
}

/* The consumer's use is complete when it releases the tensor, but a producer-side write on
 * another stream is still pending: the memory's reuse must follow it too (write-write). */
static void check_keeps_a_released_tensor_while_a_producer_write_is_pending(void **state)
{
    (void)state;
    set(OTHER, X);
    dls_pol_x *x = export_range(X, X + 0x100);
    launch(CONSUMER, X); /* a write-read race with the pending set */
    stream_sync_by(CONSUMER, TID);
    dls_pol_lock();
    dls_pol_x_release(x);
    dls_pol_unlock();
    stream_sync_by(CONSUMER, TID); /* the uses are complete and the host synchronized since */
    set(PRODUCER, X);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0 + 2);
    static dls_race_entry e;
    unsigned count;
    assert_int_equal(dls_race_entry_get(g_entries0 + 1, &e, &count), 0);
    assert_string_equal(e.kind, "write-write");
}

/* A pool recycles the memory: the consumer releases x, the producer's next fill waits for the
 * consumer's read and exports the memory again; a second consumer (thread 200) reads it, waits
 * for it on the host and gives it back; a third thread (300), which got the memory through the
 * program's own queue, writes it on a stream of its own. The released x's watch ended at the
 * second export: the fill it saw after its release is the new exchange's producer write, not a
 * use of x for the third thread's write to race with. */
static void check_forgets_a_released_tensor_exported_again(void **state)
{
    (void)state;
    dls_pol_x *x = handed_over_ordered();
    launch(CONSUMER, X);
    event_op(DLS_OP_EVENT_RECORD, CONSUMER, 8);
    dls_pol_lock();
    dls_pol_x_release(x);
    dls_pol_unlock();
    event_op(DLS_OP_STREAM_WAIT_EVENT, PRODUCER, 8);
    set(PRODUCER, X); /* the next fill: ordered after the read */
    dls_pol_x *again = export_range(X, X + 0x100);
    dls_pol_lock();
    dls_pol_x_forget_released(again, TID); /* as an export does */
    dls_pol_unlock();
    event_op(DLS_OP_EVENT_RECORD, PRODUCER, 9);
    dls_cuda_op wait = op_on(DLS_OP_STREAM_WAIT_EVENT, OTHER);
    wait.phase = DLS_PHASE_EXIT;
    wait.flags = DLS_OPF_HAS_STREAM | DLS_OPF_HAS_EVENT;
    wait.event_id = 9;
    wait.tid = 200;
    dls_pol_on_op(&wait);
    dls_cuda_op read = op_on(DLS_OP_LAUNCH, OTHER);
    uint64_t word = X;
    read.words = &word;
    read.nwords = 1;
    read.tid = 200;
    deliver(&read);
    stream_sync_by(OTHER, 200);
    dls_pol_lock();
    assert_true(dls_pol_x_uses_complete(again, 200, DLS_HB_NOW)); /* so its release drops it */
    dls_pol_x_drop(again);
    dls_pol_unlock();
    dls_cuda_op fill = op_on(DLS_OP_MEMSET, 5);
    dls_cuda_range r = {.addr = X, .len = 64, .access = DLS_ACCESS_WRITE};
    fill.ranges = &r;
    fill.nranges = 1;
    fill.tid = 300;
    deliver(&fill);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* Two pages of host memory, the second one mapped too (a host-visible tensor lies in them). */
static unsigned char *g_pages;
static uintptr_t g_page;

static unsigned char *host_pages(void)
{
    g_page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (!g_pages) {
        g_pages = mmap(NULL, 2 * g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(g_pages != MAP_FAILED);
    }
    return g_pages;
}

/* 1 when the host may read the byte at p without a fault (its page is not protected). */
static int readable(const void *p)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int ok = write(fds[1], p, 1) == 1; /* the kernel's access fails, with EFAULT, where the CPU's would fault */
    close(fds[0]);
    close(fds[1]);
    return ok;
}

/* A host-visible tensor of `bytes` at `at` in page-locked memory ending at pinned_end (0: not
 * page-locked), imported while the producer's write is pending. */
static dls_pol_x *imported_on_the_host_at(uintptr_t at, size_t bytes, uintptr_t pinned_end)
{
    set(PRODUCER, at);
    dls_pol_x *x = export_range(at, at + bytes);
    x->host_visible = 1;
    dls_pol_lock();
    dls_pol_check_import(x, TID, "TVMArrayFromDLPack", pinned_end);
    dls_pol_unlock();
    return x;
}

/* The same, the tensor the first 0x100 bytes of a page-locked allocation of its own. */
static dls_pol_x *imported_on_the_host(void)
{
    uintptr_t at = (uintptr_t)host_pages();
    dls_pol_x *x = imported_on_the_host_at(at, 0x100, at + 0x100);
    assert_int_equal(dls_race_entries(), g_entries0); /* the host has not touched it yet */
    assert_false(readable((void *)at));               /* its page is watched */
    return x;
}

/* The host reads the first byte of the tensor. */
static unsigned char host_read(void)
{
    return *(volatile unsigned char *)g_pages;
}

/* The importing thread synchronizes with the producer before it reads: no race, and the page is
 * the CPU's again from the synchronize on. */
static void check_lets_a_host_import_synchronize_before_it_reads(void **state)
{
    (void)state;
    imported_on_the_host();
    stream_sync_by(PRODUCER, TID);
    assert_true(readable(g_pages));
    host_read();
    launch(CONSUMER, (uintptr_t)g_pages);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* The host reads before any synchronize: the read itself is caught, and reported (once) when the
 * next synchronize comes, with the producer's write and the read's own stack. */
static void check_reports_a_host_read_before_the_synchronize(void **state)
{
    (void)state;
    imported_on_the_host();
    host_read();
    host_read();
    stream_sync_by(PRODUCER, TID);
    assert_string_equal(only_race(), "host-read");
    dls_race_entry e;
    unsigned count;
    dls_race_entry_get(g_entries0, &e, &count);
    assert_string_equal(e.consumer_op, "host read after TVMArrayFromDLPack");
    assert_non_null(strstr(e.text, "caught on its protected pages"));
    assert_true(readable(g_pages));
}

/* Another thread's host synchronize completes the producer's write: the page is the CPU's again,
 * and a host read after it is no race. */
static void check_ends_a_watch_at_another_threads_synchronize(void **state)
{
    (void)state;
    imported_on_the_host();
    stream_sync_by(PRODUCER, 200);
    assert_true(readable(g_pages));
    host_read();
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* A release ends the watch whatever the producer's state: nothing read, nothing reported; a read
 * before it is reported at the release. */
static void check_ends_a_watch_at_the_release(void **state)
{
    (void)state;
    dls_pol_x *x = imported_on_the_host();
    dls_pol_lock();
    dls_pol_check_host_of(x);
    dls_pol_unlock();
    assert_true(readable(g_pages));
    assert_int_equal(dls_race_entries(), g_entries0);
    x = imported_on_the_host();
    host_read();
    dls_pol_lock();
    dls_pol_check_host_of(x);
    dls_pol_unlock();
    assert_string_equal(only_race(), "host-read");
}

/* Pages that hold other data, or memory that is not page-locked, are not protected: the handover
 * itself is reported, with the reason. */
static void check_reports_the_handover_of_pages_it_cannot_watch(void **state)
{
    (void)state;
    uintptr_t at = (uintptr_t)host_pages() + 0x100;
    imported_on_the_host_at(at, 0x100, at + 0x200); /* a page shared with other data */
    assert_string_equal(only_race(), "host-read");
    dls_race_entry e;
    unsigned count;
    dls_race_entry_get(g_entries0, &e, &count);
    assert_string_equal(e.consumer_op, "host access after TVMArrayFromDLPack");
    assert_non_null(strstr(e.text, "does not start on a page boundary"));
    assert_true(readable((void *)at));
    dls_race_reset_for_tests(); /* the same hazard at the same site: else one report */
    g_entries0 = dls_race_entries();
    at = (uintptr_t)host_pages();
    imported_on_the_host_at(at + g_page, 0x100, 0); /* pageable memory */
    assert_string_equal(only_race(), "host-read");
    dls_race_entry_get(g_entries0, &e, &count);
    assert_non_null(strstr(e.text, "not page-locked memory"));
}

static volatile sig_atomic_t g_own_faults;

/* The program's own handler: it makes its page readable again. */
static void own_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    g_own_faults++;
    uintptr_t page = (uintptr_t)si->si_addr & ~(g_page - 1);
    mprotect((void *)page, g_page, PROT_READ | PROT_WRITE);
}

/* Faults the program makes on its own protected page. */
static void own_fault(void)
{
    unsigned char *mine = host_pages() + g_page;
    mprotect(mine, g_page, PROT_NONE);
    (void)*(volatile unsigned char *)mine;
}

/* A program's SIGSEGV handler, installed before the first watch or after one, keeps getting its
 * own faults; the watch still catches the host's read. */
static void check_passes_on_the_programs_own_faults(void **state)
{
    (void)state;
    struct sigaction sa = {.sa_sigaction = own_handler, .sa_flags = SA_SIGINFO}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old);
    dls_pol_x *x = imported_on_the_host();
    own_fault();
    assert_int_equal(g_own_faults, 1);
    host_read();
    dls_pol_lock();
    dls_pol_check_host_of(x);
    dls_pol_unlock();
    assert_string_equal(only_race(), "host-read");
    g_entries0 = dls_race_entries();
    sigaction(SIGSEGV, &sa, NULL); /* installed again, after dlsync's */
    own_fault();
    assert_int_equal(g_own_faults, 2);
    x = imported_on_the_host(); /* puts dlsync's in front again */
    own_fault();
    assert_int_equal(g_own_faults, 3);
    dls_pol_lock();
    dls_pol_check_host_of(x);
    dls_pol_unlock();
    sigaction(SIGSEGV, &old, NULL);
}

/* With no handler of the program's, a fault on no watched page ends the process by SIGSEGV, as it
 * would without dlsync. */
static void check_keeps_the_default_action_of_other_faults(void **state)
{
    (void)state;
    dls_pol_x *x = imported_on_the_host();
    pid_t child = fork();
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL); /* then the watch puts dlsync's in front of the default */
        imported_on_the_host_at((uintptr_t)g_pages, 0x100, (uintptr_t)g_pages + 0x100);
        own_fault();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
    dls_pol_lock();
    dls_pol_check_host_of(x);
    dls_pol_unlock();
}

/* Delivers phase `phase` of an operation of `kind` with graph `graph` and executable graph
 * `exec`, on stream sid when sid is not 0. */
static void graph_op_at(dls_op_phase phase, dls_op_kind kind, uint64_t sid, uintptr_t graph, uintptr_t exec)
{
    dls_cuda_op op = op_on(kind, sid);
    op.phase = phase;
    op.flags = sid ? DLS_OPF_HAS_STREAM : 0;
    op.api = "graph";
    op.graph = graph;
    op.exec = exec;
    dls_pol_on_op(&op);
}

/* The same at EXIT. */
static void graph_op(dls_op_kind kind, uint64_t sid, uintptr_t graph, uintptr_t exec)
{
    graph_op_at(DLS_PHASE_EXIT, kind, sid, graph, exec);
}

/* The producer captures `captured` (a set of the tensor, or a copy reading it) into graph 0x91
 * and instantiates it as 0xe1. */
static void capture_into_a_graph(void (*captured)(void))
{
    graph_op(DLS_OP_CAPTURE_BEGIN, PRODUCER, 0, 0);
    captured();
    graph_op(DLS_OP_CAPTURE_END, PRODUCER, 0x91, 0);
    graph_op(DLS_OP_GRAPH_INSTANTIATE, 0, 0x91, 0xe1);
}

static void set_the_tensor(void)
{
    set(PRODUCER, X);
}

static void read_the_tensor(void)
{
    copy(PRODUCER, X, OUT + 0x1000);
}

/* A launch of executable graph 0xe1 on the producer's stream. */
static void launch_the_graph(void)
{
    dls_cuda_op op = op_on(DLS_OP_GRAPH_LAUNCH, PRODUCER);
    op.flags |= DLS_OPF_CONSERVATIVE;
    op.api = "cuGraphLaunch";
    op.exec = 0xe1;
    deliver(&op);
}

/* The graph's launch writes what its capture wrote: launched while the consumer's read is
 * pending, it is a write-after-use race. */
static void check_reports_a_captured_write_at_its_graphs_launch(void **state)
{
    (void)state;
    handed_over_ordered();
    capture_into_a_graph(set_the_tensor);
    copy(CONSUMER, X, OUT);
    launch_the_graph();
    assert_string_equal(only_race(), "write-after-use");
}

/* A graph that only read the tensor, and one whose executable graph was updated (what it writes
 * is no longer known), is only a kernel pair: counted, not listed. */
static void check_counts_other_graph_launches_as_kernel_pairs(void **state)
{
    (void)state;
    uint64_t before = dls_summary_get(DLS_COUNT_KERNEL_PAIRS);
    handed_over_ordered();
    capture_into_a_graph(read_the_tensor);
    copy(CONSUMER, X, OUT);
    launch_the_graph();
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
    assert_int_equal(dls_summary_get(DLS_COUNT_KERNEL_PAIRS), before + 1);
    capture_into_a_graph(set_the_tensor);
    graph_op_at(DLS_PHASE_ENTER, DLS_OP_GRAPH_EXEC_CHANGED, 0, 0, 0xe1);
    graph_op(DLS_OP_GRAPH_EXEC_CHANGED, 0, 0, 0xe1);
    copy(CONSUMER, X, OUT + 64);
    launch_the_graph();
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
}

/* Graph 0x91 is destroyed on one thread while another thread's capture ends with the same handle
 * (the driver freed it inside the destroy): the destroy's EXIT, seen after, forgets nothing of
 * the new graph, whose launch is still a known write. */
static void a_graph_handle_reused_before_the_destroys_exit_keeps_its_writes(void **state)
{
    (void)state;
    handed_over_ordered();
    graph_op_at(DLS_PHASE_ENTER, DLS_OP_GRAPH_DESTROY, 0, 0x91, 0);
    graph_op(DLS_OP_CAPTURE_BEGIN, PRODUCER, 0, 0);
    set_the_tensor();
    graph_op(DLS_OP_CAPTURE_END, PRODUCER, 0x91, 0);
    graph_op(DLS_OP_GRAPH_DESTROY, 0, 0x91, 0);
    graph_op(DLS_OP_GRAPH_INSTANTIATE, 0, 0x91, 0xe1);
    copy(CONSUMER, X, OUT);
    launch_the_graph();
    assert_string_equal(only_race(), "write-after-use");
}

/* A synchronous free of context 0xc0 of the released tensor, with the consumer's copy on stream
 * `sid` of context `ctx` pending (the consumer released the tensor at once). */
static void free_after_a_pending_read(uint64_t sid, uintptr_t ctx, uintptr_t free_ctx)
{
    dls_pol_x *x = handed_over_ordered();
    dls_cuda_op wait = op_on(DLS_OP_STREAM_WAIT_EVENT, sid);
    wait.phase = DLS_PHASE_EXIT;
    wait.flags = DLS_OPF_HAS_STREAM | DLS_OPF_HAS_EVENT;
    wait.api = "event";
    wait.event_id = 7;
    wait.stream.ctx = ctx;
    dls_pol_on_op(&wait); /* the consumer's stream waits for the producer's */
    dls_cuda_range r[2] = {{.addr = X, .len = 64, .access = DLS_ACCESS_READ},
                           {.addr = OUT, .len = 64, .access = DLS_ACCESS_WRITE}};
    dls_cuda_op read = op_on(DLS_OP_MEMCPY, sid);
    read.stream.ctx = ctx;
    read.ranges = r;
    read.nranges = 2;
    deliver(&read);
    dls_pol_lock();
    dls_pol_x_release(x);
    dls_pol_unlock();
    dls_cuda_range freed = {.addr = X, .len = 0x100, .access = DLS_ACCESS_WRITE};
    dls_cuda_op free_op = {.kind = DLS_OP_FREE, .api = "cuMemFree_v2", .tid = TID, .ranges = &freed, .nranges = 1};
    free_op.ctx = free_ctx;
    free_op.correlation_id = ++g_corr;
    deliver(&free_op);
}

/* The free waits for its own context's work only: a read pending on another device's stream is a
 * free-during-use race; the same read on the free's own context is not, and nothing is said when
 * the free's context is not known. */
static void check_reports_a_free_during_another_devices_use(void **state)
{
    (void)state;
    free_after_a_pending_read(OTHER, 0xc1, 0xc0);
    assert_string_equal(only_race(), "free-during-use");
}

static void check_reports_no_free_its_context_waits_for(void **state)
{
    (void)state;
    free_after_a_pending_read(CONSUMER, 0xc0, 0xc0);
    free_after_a_pending_read(OTHER, 0xc1, 0);
    dls_pol_lock();
    dls_pol_unlock();
    assert_int_equal(dls_race_entries(), g_entries0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_access_record_says_the_direction, setup, teardown),
        cmocka_unit_test_setup_teardown(a_use_keeps_its_latest_access_write_and_known_write, setup, teardown),
        cmocka_unit_test_setup_teardown(a_producer_write_waits_for_the_pending_consumer_read, setup, teardown),
        cmocka_unit_test_setup_teardown(another_stream_writing_waits_for_the_consumer, setup, teardown),
        cmocka_unit_test_setup_teardown(a_producer_read_waits_for_the_consumer_in_place_write, setup, teardown),
        cmocka_unit_test_setup_teardown(reads_on_both_sides_are_not_ordered, setup, teardown),
        cmocka_unit_test_setup_teardown(a_kernel_after_a_kernel_is_ordered, setup, teardown),
        cmocka_unit_test_setup_teardown(a_synchronized_producer_kernel_still_waits_for_the_consumer, setup, teardown),
        cmocka_unit_test_setup_teardown(kernels_on_two_consumer_streams_are_not_ordered, setup, teardown),
        cmocka_unit_test_setup_teardown(a_read_only_consumer_kernel_is_a_read, setup, teardown),
        cmocka_unit_test_setup_teardown(a_completed_use_is_not_waited_for, setup, teardown),
        cmocka_unit_test_setup_teardown(an_access_after_the_release_counts_for_the_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(a_consumer_kernel_after_the_release_does_not_end_the_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(a_free_waits_for_the_consumers_pending_use, setup, teardown),
        cmocka_unit_test_setup_teardown(check_reports_a_write_while_the_consumer_reads_once, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_a_use_after_an_in_place_write, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_counts_a_kernel_pair_without_listing_it, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_lists_a_kernel_pair_when_asked, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_no_read_read_pair, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_an_access_after_the_release, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_keeps_each_kind_when_one_access_finds_many_races, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_counts_another_threads_host_synchronize, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_judges_a_call_as_of_its_begin, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_counts_the_legacy_rule_for_a_blocking_stream_left_alive, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_drops_the_legacy_rule_for_a_stream_destroyed_during_the_call, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_judges_a_stream_forgotten_since_the_begin_as_of_it, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_knows_what_follows_a_stream_forgotten_since_the_begin, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_counts_a_synchronize_before_the_begin_of_a_stream_forgotten_since,
                                        setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_counts_a_synchronize_before_the_begin_after_several_since, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_keeps_a_released_tensor_while_a_producer_write_is_pending, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_forgets_a_released_tensor_exported_again, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_lets_a_read_follow_a_pending_read, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_lets_a_host_import_synchronize_before_it_reads, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_a_host_read_before_the_synchronize, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_ends_a_watch_at_another_threads_synchronize, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_ends_a_watch_at_the_release, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_the_handover_of_pages_it_cannot_watch, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_passes_on_the_programs_own_faults, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_keeps_the_default_action_of_other_faults, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_a_free_during_another_devices_use, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(a_graph_handle_reused_before_the_destroys_exit_keeps_its_writes, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_a_captured_write_at_its_graphs_launch, setup_check,
                                        teardown_check),
        cmocka_unit_test_setup_teardown(check_counts_other_graph_launches_as_kernel_pairs, setup_check, teardown_check),
        cmocka_unit_test_setup_teardown(check_reports_no_free_its_context_waits_for, setup_check, teardown_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
