/* Unit tests of the happens-before engine (shim/hb): each ordering rule with a case where it
 * orders and one where it does not, host syncs and captures, waits for a frontier, and errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hb/hb.h"

enum { CTX = 1, CTX2 = 2, T1 = 11, T2 = 12, T3 = 13 };
enum { LEG = 100, BLK = 101, PTD = 102, NB = 103, NB2 = 104, LEG2 = 200, BLK2 = 201 };

static int setup(void **state)
{
    dls_hb *e = dls_hb_create();
    assert_non_null(e);
    assert_int_equal(dls_hb_stream_add(e, LEG, CTX, DLS_HB_LEGACY), 0);
    assert_int_equal(dls_hb_stream_add(e, BLK, CTX, DLS_HB_BLOCKING), 0);
    assert_int_equal(dls_hb_stream_add(e, PTD, CTX, DLS_HB_PER_THREAD), 0);
    assert_int_equal(dls_hb_stream_add(e, NB, CTX, DLS_HB_NON_BLOCKING), 0);
    assert_int_equal(dls_hb_stream_add(e, NB2, CTX, DLS_HB_NON_BLOCKING), 0);
    assert_int_equal(dls_hb_stream_add(e, LEG2, CTX2, DLS_HB_LEGACY), 0);
    assert_int_equal(dls_hb_stream_add(e, BLK2, CTX2, DLS_HB_BLOCKING), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    dls_hb_destroy(*state);
    return 0;
}

/* Host stamps of a call made after every earlier one (one thread, or threads taking turns). */
static dls_hb_when serial(void)
{
    static uint64_t now = 1;
    now++;
    return (dls_hb_when){now, now};
}

/* The stamps of a call that began when `began` was taken and returns now: calls told in between
 * (other threads') may have been enqueued before or after it. */
static dls_hb_when overlapping(dls_hb_when began)
{
    dls_hb_when w = serial();
    w.begin = began.begin;
    return w;
}

static uint64_t op(dls_hb *e, uint64_t thread, uint64_t stream)
{
    uint64_t pos = 0;
    assert_int_equal(dls_hb_op(e, thread, stream, serial(), &pos), 0);
    return pos;
}

/* Whether the next operation of `thread` on stream s is ordered after position p of x. */
static int after_by(dls_hb *e, uint64_t thread, uint64_t s, uint64_t x, uint64_t p)
{
    int o = -1;
    assert_int_equal(dls_hb_ordered(e, thread, s, x, p, &o), 0);
    return o;
}

/* The same for thread T1. */
static int after(dls_hb *e, uint64_t s, uint64_t x, uint64_t p)
{
    return after_by(e, T1, s, x, p);
}

static void stream_order(void **state)
{
    dls_hb *e = *state;
    uint64_t p = op(e, T1, NB);
    assert_int_equal(p, 1);
    assert_int_equal(op(e, T1, NB), 2);
    assert_true(after(e, NB, NB, p));
    assert_false(after(e, NB2, NB, p)); /* other stream: concurrent */
    assert_true(after(e, NB2, NB, 0));  /* position 0 is nothing */
}

static void thread_observation_orders_its_later_ops(void **state)
{
    dls_hb *e = *state;
    uint64_t p = op(e, T1, NB);
    assert_int_equal(dls_hb_sync_stream(e, T1, NB), 0);
    int o;
    assert_int_equal(dls_hb_ordered(e, T2, NB2, NB, p, &o), 0);
    assert_false(o); /* T2 observed nothing */
    assert_true(after(e, NB2, NB, p));
    uint64_t q = op(e, T1, NB2); /* enqueued by T1: carries T1's knowledge */
    assert_int_equal(dls_hb_ordered(e, T2, NB2, NB, p, &o), 0);
    assert_true(o);
    assert_int_equal(q, 1);
    uint64_t p2 = op(e, T1, NB); /* not yet observed */
    assert_false(after(e, NB2, NB, p2));
}

static void legacy_waits_for_blocking_streams(void **state)
{
    dls_hb *e = *state;
    uint64_t b = op(e, T1, BLK), t = op(e, T1, PTD), n = op(e, T1, NB);
    assert_true(after(e, LEG, BLK, b));
    assert_true(after(e, LEG, PTD, t));
    assert_false(after(e, LEG, NB, n)); /* non-blocking exempt */
    op(e, T1, LEG);
    assert_true(after(e, NB2, NB, 0));
    assert_false(after(e, LEG, NB, n));
    assert_false(after(e, LEG2, BLK, b)); /* other context's legacy stream */
}

static void blocking_streams_wait_for_legacy(void **state)
{
    dls_hb *e = *state;
    uint64_t l = op(e, T1, LEG);
    assert_true(after(e, BLK, LEG, l));
    assert_true(after(e, PTD, LEG, l));
    assert_false(after(e, NB, LEG, l));
    assert_false(after(e, BLK2, LEG, l)); /* other context */
    /* Transitive: blocking work before the legacy op is before later blocking work. */
    uint64_t t = op(e, T1, PTD);
    op(e, T1, LEG);
    assert_true(after(e, BLK, PTD, t));
    uint64_t t2 = op(e, T1, PTD);
    assert_false(after(e, BLK, PTD, t2)); /* two blocking streams do not order each other */
}

/* Wary queries do not count another thread's work on a user-created blocking stream that no
 * legacy operation has joined yet (that thread may destroy the stream before the asking operation
 * is enqueued); the asking thread's own, per-thread streams, and work a legacy operation already
 * joined still count. */
static void wary_queries_leave_out_unjoined_user_streams(void **state)
{
    dls_hb *e = *state;
    uint64_t b = op(e, T1, BLK), t = op(e, T1, PTD);
    dls_hb_set_wary(e, 1);
    assert_false(after_by(e, T2, LEG, BLK, b));
    assert_true(after_by(e, T1, LEG, BLK, b));
    assert_true(after_by(e, T2, LEG, PTD, t));
    op(e, T1, LEG); /* joins both */
    assert_true(after_by(e, T2, LEG, BLK, b));
    uint64_t b2 = op(e, T1, BLK);
    assert_false(after_by(e, T2, LEG, BLK, b2));
    dls_hb_set_wary(e, 0);
    assert_true(after_by(e, T2, LEG, BLK, b2));
}

static void removed_streams_leave_the_legacy_rules(void **state)
{
    dls_hb *e = *state;
    uint64_t b = op(e, T1, BLK);
    assert_int_equal(dls_hb_stream_remove(e, BLK), 0);
    assert_false(after(e, LEG, BLK, b));
    assert_int_equal(dls_hb_op(e, T1, BLK, serial(), NULL), ENOENT);
    assert_int_equal(dls_hb_stream_remove(e, BLK), ENOENT);
    /* A new legacy stream waits for blocking work done before it was added. */
    uint64_t t = op(e, T1, PTD);
    assert_int_equal(dls_hb_stream_remove(e, LEG), 0);
    assert_int_equal(dls_hb_stream_add(e, 105, CTX, DLS_HB_LEGACY), 0);
    assert_true(after(e, 105, PTD, t));
    assert_int_equal(dls_hb_stream_add(e, 106, CTX, DLS_HB_LEGACY), EINVAL);
    assert_int_equal(dls_hb_stream_add(e, 105, CTX2, DLS_HB_BLOCKING), EEXIST);
    assert_int_equal(dls_hb_stream_add(e, LEG, CTX, DLS_HB_BLOCKING), EEXIST); /* ids never reused */
}

/* A forgotten stream is unknown; the stream that takes its slot continues its positions, so
 * what other streams and threads knew of the old one (here: NB2 waited for it, T1 synchronized
 * with it) never orders anything after the new one; a context capture no longer holds it. */
static void a_forgotten_streams_slot_is_reused_without_its_knowledge(void **state)
{
    dls_hb *e = *state;
    uint64_t p = 0;
    for (int i = 0; i < 3; i++)
        p = op(e, T1, NB);
    assert_int_equal(dls_hb_event_record(e, T1, NB, 7, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T1, NB2, 7, serial(), NULL), 0);
    assert_int_equal(dls_hb_sync_stream(e, T1, NB), 0);
    assert_int_equal(dls_hb_stream_forget(e, NB), ENOENT); /* not removed */
    assert_int_equal(dls_hb_stream_remove(e, NB), 0);
    assert_int_equal(dls_hb_stream_forget(e, NB), 0);
    int o;
    assert_int_equal(dls_hb_ordered(e, T1, NB2, NB, p, &o), ENOENT);
    assert_int_equal(dls_hb_stream_forget(e, NB), ENOENT);
    assert_int_equal(dls_hb_stream_add(e, 300, CTX, DLS_HB_NON_BLOCKING), 0); /* takes NB's slot */
    uint64_t q = op(e, T2, 300);
    assert_true(q > p + 1); /* after the old stream's positions (the record was one) */
    assert_int_equal(dls_hb_ordered(e, T2, NB2, 300, q, &o), 0);
    assert_false(o);                     /* NB2 waited for the old stream, not for the new one */
    assert_false(after(e, BLK, 300, q)); /* nor did T1 synchronize with it */
    assert_int_equal(dls_hb_sync_stream(e, T1, 300), 0);
    assert_true(after(e, BLK, 300, q));
    assert_int_equal(dls_hb_capture_context(e, 8, CTX, DLS_HB_NOW), 0);
    assert_int_equal(dls_hb_event_covers(e, 8, 300), q);
    assert_int_equal(dls_hb_stream_add(e, NB, CTX, DLS_HB_NON_BLOCKING), 0); /* a forgotten id is unknown */
}

static void event_wait_orders_after_the_record(void **state)
{
    dls_hb *e = *state;
    uint64_t p = op(e, T1, NB), r = 0, w = 0;
    assert_int_equal(dls_hb_event_wait(e, T1, NB2, 9, serial(), &w), 0); /* never recorded: nothing */
    assert_false(after(e, NB2, NB, p));
    assert_int_equal(dls_hb_event_record(e, T1, NB, 9, serial(), &r), 0);
    assert_int_equal(r, p + 1);
    assert_false(after(e, NB2, NB, p)); /* recorded but not waited */
    assert_int_equal(dls_hb_event_wait(e, T1, NB2, 9, serial(), &w), 0);
    assert_int_equal(w, 2);
    assert_true(after(e, NB2, NB, r));
    uint64_t p2 = op(e, T1, NB); /* after the record: not covered */
    assert_false(after(e, NB2, NB, p2));
}

static void rerecording_replaces_the_capture(void **state)
{
    dls_hb *e = *state;
    uint64_t a = op(e, T1, NB);
    assert_int_equal(dls_hb_event_record(e, T1, NB, 9, serial(), NULL), 0);
    uint64_t b = op(e, T1, BLK2);
    assert_int_equal(dls_hb_event_record(e, T1, BLK2, 9, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T1, NB2, 9, serial(), NULL), 0);
    assert_true(after(e, NB2, BLK2, b));
    assert_false(after(e, NB2, NB, a));
    dls_hb_event_remove(e, 9);
    assert_int_equal(dls_hb_event_wait(e, T1, NB, 9, serial(), NULL), 0); /* removed: never recorded */
    assert_false(after(e, NB, BLK2, b + 1));
}

static void event_knowledge_is_transitive(void **state)
{
    dls_hb *e = *state;
    uint64_t a = op(e, T1, NB);
    assert_int_equal(dls_hb_event_record(e, T1, NB, 1, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T1, NB2, 1, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_record(e, T1, NB2, 2, serial(), NULL), 0);
    assert_false(after(e, BLK2, NB, a));
    assert_int_equal(dls_hb_event_wait(e, T1, BLK2, 2, serial(), NULL), 0);
    assert_true(after(e, BLK2, NB, a));
}

/* One operation ordered before another, at the other's own position: a fill made after a wait
 * for a read is ordered after the read; the fill's stream's later wait teaches the fill nothing;
 * a removed stream's last operation is still asked about. */
static void an_operation_is_ordered_before_another_at_its_position(void **state)
{
    dls_hb *e = *state;
    int before = -1;
    uint64_t read = op(e, T1, NB);
    assert_int_equal(dls_hb_event_record(e, T1, NB, 1, serial(), NULL), 0);
    assert_int_equal(dls_hb_stream_remove(e, NB), 0);
    uint64_t early = op(e, T1, NB2);
    assert_int_equal(dls_hb_event_wait(e, T1, NB2, 1, serial(), NULL), 0);
    uint64_t fill = op(e, T1, NB2);
    op(e, T1, NB2);
    assert_int_equal(dls_hb_op_before(e, NB, read, NB2, fill, &before), 0);
    assert_true(before);
    assert_int_equal(dls_hb_op_before(e, NB, read, NB2, early, &before), 0);
    assert_false(before); /* NB2's clock now knows the read, its earlier operation did not */
    assert_int_equal(dls_hb_op_before(e, NB2, fill, NB, read, &before), 0);
    assert_false(before);
    assert_int_equal(dls_hb_op_before(e, NB2, early, NB2, fill, &before), 0);
    assert_true(before);
    assert_int_equal(dls_hb_op_before(e, NB, read, 999, 1, &before), ENOENT);
}

static void host_syncs(void **state)
{
    dls_hb *e = *state;
    uint64_t a = op(e, T1, NB), b = op(e, T1, BLK2);
    int o;
    enum { SNAP_C = 900, SNAP_A = 901 };
    assert_int_equal(dls_hb_capture_context(e, SNAP_C, CTX, DLS_HB_NOW), 0); /* a context synchronize */
    assert_int_equal(dls_hb_sync_event(e, T2, SNAP_C), 0);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, NB, a, &o), 0);
    assert_true(o);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, BLK2, b, &o), 0);
    assert_false(o); /* other context */
    assert_int_equal(dls_hb_event_record(e, T1, BLK2, 4, serial(), NULL), 0);
    assert_int_equal(dls_hb_sync_event(e, T2, 4), 0);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, BLK2, b, &o), 0);
    assert_true(o);
    uint64_t c = op(e, T1, LEG2);
    assert_int_equal(dls_hb_sync_event(e, T2, 77), 0); /* never recorded: nothing */
    assert_int_equal(dls_hb_ordered(e, T2, NB2, LEG2, c, &o), 0);
    assert_false(o);
    assert_int_equal(dls_hb_capture_all(e, SNAP_A, DLS_HB_NOW), 0); /* a device synchronize */
    assert_int_equal(dls_hb_sync_event(e, T2, SNAP_A), 0);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, LEG2, c, &o), 0);
    assert_true(o);
    dls_hb_thread_remove(e, T2); /* a reused thread id starts with no knowledge */
    assert_int_equal(dls_hb_ordered(e, T2, NB2, LEG2, c, &o), 0);
    assert_false(o);
    assert_int_equal(dls_hb_sync_stream(e, T2, 424242), ENOENT);
}

/* A capture as of a synchronize's begin leaves out what calls that overlapped it told: they may
 * have been enqueued after the synchronize began. */
static void captures_as_of_a_begin_leave_out_overlapping_calls(void **state)
{
    dls_hb *e = *state;
    enum { SNAP_S = 910, SNAP_C = 911, SNAP_A = 912 };
    uint64_t a = op(e, T1, NB);
    dls_hb_when began = serial(); /* T2's synchronize begins */
    uint64_t b = op(e, T1, NB);   /* T1's call returns while it is under way */
    uint64_t l = op(e, T1, LEG2);
    assert_int_equal(dls_hb_capture_stream(e, SNAP_S, NB, began.begin), 0);
    assert_int_equal(dls_hb_capture_context(e, SNAP_C, CTX, began.begin), 0);
    assert_int_equal(dls_hb_capture_all(e, SNAP_A, began.begin), 0);
    assert_int_equal(dls_hb_event_covers(e, SNAP_S, NB), a);
    assert_int_equal(dls_hb_event_covers(e, SNAP_C, NB), a);
    assert_int_equal(dls_hb_event_covers(e, SNAP_A, NB), a);
    assert_int_equal(dls_hb_event_covers(e, SNAP_A, LEG2), 0);
    assert_true(b > a && l > 0);
    assert_int_equal(dls_hb_capture_stream(e, SNAP_S, NB, DLS_HB_NOW), 0); /* now: all of it */
    assert_int_equal(dls_hb_event_covers(e, SNAP_S, NB), b);
}

/* A host synchronize completes what its capture at its start held, never work enqueued after. */
static void captures_complete_only_work_enqueued_before_them(void **state)
{
    dls_hb *e = *state;
    enum { SNAP_S = 900, SNAP_C = 901, SNAP_A = 902, SNAP_E = 903, EV = 5 };
    uint64_t a = op(e, T1, NB);
    assert_int_equal(dls_hb_capture_stream(e, SNAP_S, NB, DLS_HB_NOW), 0);
    assert_int_equal(dls_hb_capture_context(e, SNAP_C, CTX, DLS_HB_NOW), 0);
    assert_int_equal(dls_hb_capture_all(e, SNAP_A, DLS_HB_NOW), 0);
    assert_int_equal(dls_hb_event_record(e, T1, NB2, EV, serial(), NULL), 0);
    uint64_t n2 = op(e, T1, NB2);
    assert_int_equal(dls_hb_capture_event(e, SNAP_E, EV), 0);
    uint64_t b = op(e, T1, NB), c = op(e, T1, LEG2); /* enqueued during the synchronizes */
    assert_int_equal(dls_hb_event_covers(e, SNAP_S, NB), a);
    assert_int_equal(dls_hb_event_covers(e, SNAP_C, NB2), 0);
    assert_int_equal(dls_hb_event_covers(e, SNAP_E, NB2), n2 - 1);
    int o;
    assert_int_equal(dls_hb_sync_event(e, T2, SNAP_S), 0);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, NB, a, &o), 0);
    assert_true(o);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, NB, b, &o), 0);
    assert_false(o);
    assert_int_equal(dls_hb_sync_event(e, T2, SNAP_A), 0);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, LEG2, c, &o), 0);
    assert_false(o);
    assert_int_equal(dls_hb_ordered(e, T2, NB2, NB, b, &o), 0);
    assert_false(o);
    /* A wait on a capture orders a stream after the captured work only. */
    assert_int_equal(dls_hb_event_wait(e, T1, BLK2, SNAP_C, serial(), NULL), 0);
    assert_true(after(e, BLK2, NB, a));
    assert_false(after(e, BLK2, NB, b));
    /* Capture of a never-recorded event, of an unknown context: nothing; of an unknown stream. */
    assert_int_equal(dls_hb_capture_event(e, SNAP_E, 4242), 0);
    assert_int_equal(dls_hb_event_covers(e, SNAP_E, NB2), 0);
    assert_int_equal(dls_hb_capture_context(e, SNAP_C, 4242, DLS_HB_NOW), 0);
    assert_int_equal(dls_hb_event_covers(e, SNAP_C, NB), 0);
    assert_int_equal(dls_hb_capture_stream(e, SNAP_S, 424242, DLS_HB_NOW), ENOENT);
    dls_hb_event_remove(e, SNAP_A);
    assert_int_equal(dls_hb_event_covers(e, SNAP_A, NB), 0);
}

/* A capture of a past operation holds what that operation was ordered after, never what its
 * stream learned later; once its stream's points no longer reach back to it, the operation alone. */
static void a_capture_at_a_past_operation_holds_what_it_was_ordered_after(void **state)
{
    dls_hb *e = *state;
    enum { SNAP_A = 920, SNAP_B = 921, EV = 6 };
    uint64_t a = op(e, T1, NB);
    uint64_t n2 = op(e, T1, NB2);
    assert_int_equal(dls_hb_event_record(e, T1, NB2, EV, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T1, NB, EV, serial(), NULL), 0);
    uint64_t b = op(e, T1, NB); /* ordered after n2 */
    op(e, T1, NB);
    assert_int_equal(dls_hb_capture_at(e, SNAP_A, NB, a), 0);
    assert_int_equal(dls_hb_capture_at(e, SNAP_B, NB, b), 0);
    assert_int_equal(dls_hb_event_covers(e, SNAP_A, NB), a);
    assert_int_equal(dls_hb_event_covers(e, SNAP_A, NB2), 0);
    assert_int_equal(dls_hb_event_covers(e, SNAP_B, NB), b);
    assert_true(dls_hb_event_covers(e, SNAP_B, NB2) >= n2);
    assert_int_equal(dls_hb_event_wait(e, T1, BLK2, SNAP_A, serial(), NULL), 0);
    assert_true(after(e, BLK2, NB, a));
    assert_false(after(e, BLK2, NB, b));
    assert_false(after(e, BLK2, NB2, n2));
    assert_int_equal(dls_hb_capture_at(e, SNAP_A, NB, b + 2), EINVAL); /* not reached */
    assert_int_equal(dls_hb_capture_at(e, SNAP_A, NB, 0), EINVAL);
    assert_int_equal(dls_hb_capture_at(e, SNAP_A, 424242, 1), ENOENT);
    for (int i = 0; i < DLS_HB_POINTS + 2; i++)
        op(e, T1, NB);
    assert_int_equal(dls_hb_capture_at(e, SNAP_B, NB, b), 0);
    assert_int_equal(dls_hb_event_covers(e, SNAP_B, NB), b);
    assert_int_equal(dls_hb_event_covers(e, SNAP_B, NB2), 0); /* less known, nothing wrong */
}

static void waits_name_current_positions_and_drop_implied_ones(void **state)
{
    dls_hb *e = *state;
    dls_hb_epoch f[2], w[4];
    size_t n = 99;
    f[0] = (dls_hb_epoch){.stream = NB, .pos = op(e, T1, NB)};
    op(e, T1, NB); /* later unrelated work: the wait targets the current position */
    assert_int_equal(dls_hb_frontier_waits(e, T1, BLK2, f, 1, w, 4, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(w[0].stream, NB);
    assert_int_equal(w[0].pos, 2);
    f[1] = (dls_hb_epoch){.stream = NB2, .pos = op(e, T1, NB2)};
    assert_int_equal(dls_hb_frontier_waits(e, T1, BLK2, f, 2, w, 4, &n), 0);
    assert_int_equal(n, 2); /* concurrent: both needed, sorted by stream id */
    assert_int_equal(w[0].stream, NB);
    assert_int_equal(w[1].stream, NB2);
    assert_int_equal(dls_hb_event_record(e, T1, NB, 3, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T1, NB2, 3, serial(), NULL), 0);
    assert_int_equal(dls_hb_frontier_waits(e, T1, BLK2, f, 2, w, 4, &n), 0);
    assert_int_equal(n, 1); /* NB's last op is before NB2's: waiting on NB2 implies NB */
    assert_int_equal(w[0].stream, NB2);
    assert_int_equal(w[0].pos, 2); /* its op, then its event wait */
    /* Once the caller injects the wait, nothing is needed. */
    assert_int_equal(dls_hb_event_record(e, T1, NB2, 4, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T1, BLK2, 4, serial(), NULL), 0);
    assert_int_equal(dls_hb_frontier_waits(e, T1, BLK2, f, 2, w, 4, &n), 0);
    assert_int_equal(n, 0);
}

static void frontier_waits_follow_syncs_and_legacy_rules(void **state)
{
    dls_hb *e = *state;
    dls_hb_epoch f[2], w[8];
    size_t n = 99;
    f[0] = (dls_hb_epoch){.stream = NB, .pos = op(e, T1, NB)};
    op(e, T1, BLK2);
    f[1] = (dls_hb_epoch){.stream = BLK2, .pos = op(e, T1, BLK2)};
    size_t nf = 2;
    assert_int_equal(dls_hb_frontier_waits(e, T2, NB2, f, nf, w, 8, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(dls_hb_sync_stream(e, T2, NB), 0); /* NB is known complete to T2 */
    assert_int_equal(dls_hb_frontier_waits(e, T2, NB2, f, nf, w, 8, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(w[0].stream, BLK2);
    assert_int_equal(dls_hb_frontier_waits(e, T2, LEG2, f, nf, w, 8, &n), 0);
    assert_int_equal(n, 0); /* the legacy stream is already after the blocking stream */
    dls_hb_epoch bad = {.stream = 5555, .pos = 1};
    assert_int_equal(dls_hb_frontier_waits(e, T2, NB2, &bad, 1, w, 8, &n), EINVAL);
}

static void errors_and_truncation(void **state)
{
    dls_hb *e = *state;
    assert_int_equal(dls_hb_stream_add(e, 1, CTX, (dls_hb_stream_kind)9), EINVAL);
    int o;
    assert_int_equal(dls_hb_ordered(e, T1, 999, NB, 1, &o), ENOENT);
    assert_int_equal(dls_hb_ordered(e, T1, NB2, 999, 1, &o), ENOENT);
    assert_int_equal(dls_hb_op(e, T1, 999, serial(), NULL), ENOENT);
    assert_int_equal(dls_hb_stream_remove(e, NB), 0);
    assert_int_equal(dls_hb_stream_remove(e, NB), ENOENT);
    assert_int_equal(dls_hb_op(e, T1, NB, serial(), NULL), ENOENT); /* removed */
    dls_hb_epoch f[2] = {{.stream = BLK, .pos = op(e, T1, BLK)}, {.stream = NB2, .pos = op(e, T1, NB2)}};
    dls_hb_epoch w[1];
    size_t n = 0;
    assert_int_equal(dls_hb_frontier_waits(e, T1, BLK2, f, 2, w, 1, &n), 0);
    assert_int_equal(n, 2); /* total reported even though only one fits */
    assert_int_equal(w[0].stream, BLK);
    assert_int_equal(dls_hb_frontier_waits(e, T1, 999, f, 2, w, 1, &n), ENOENT);
    assert_int_equal(dls_hb_frontier_waits(e, T1, NB, f, 2, w, 1, &n), ENOENT); /* removed */
}

/* A legacy-stream operation orders a blocking stream's work before it only when that work's call
 * returned before the legacy call began (the stale reads: T2's legacy call overlapped
 * T1's write, the driver enqueued it first, and T1's read behind it on a blocking stream read too
 * early). */
static void legacy_rules_need_host_order(void **state)
{
    dls_hb *e = *state;
    dls_hb_when legacy_began = serial();
    uint64_t w = op(e, T1, BLK); /* T1's write returns while T2's legacy call is in the driver */
    assert_int_equal(dls_hb_op(e, T2, LEG, overlapping(legacy_began), NULL), 0);
    assert_false(after(e, PTD, BLK, w)); /* behind the legacy op, but the legacy op may precede the write */
    assert_int_equal(dls_hb_op(e, T2, LEG, serial(), NULL), 0); /* began after the write returned */
    assert_true(after(e, PTD, BLK, w));
    /* The other way: a blocking call that overlapped a legacy write. */
    legacy_began = serial();
    uint64_t l = op(e, T2, LEG);
    assert_int_equal(dls_hb_op(e, T1, BLK2, serial(), NULL), 0); /* another context: no rule */
    assert_int_equal(dls_hb_op(e, T1, BLK, overlapping(legacy_began), NULL), 0);
    dls_hb_epoch f = {.stream = LEG, .pos = l}, out[2];
    size_t n = 0;
    assert_int_equal(dls_hb_event_record(e, T1, BLK, 9, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T1, NB, 9, serial(), NULL), 0);
    /* The record itself began after the legacy write returned: it is behind it. */
    assert_int_equal(dls_hb_frontier_waits(e, T1, NB, &f, 1, out, 2, &n), 0);
    assert_int_equal(n, 0);
}

/* Asked as of a call's begin, the streams joined to the asking one count only as far as the
 * calls that returned before it began: a legacy operation, a blocking stream's work for a legacy
 * asker, another thread's operation on the asker's own stream. */
static void queries_as_of_a_begin_leave_out_overlapping_calls(void **state)
{
    dls_hb *e = *state;
    uint64_t w = op(e, T1, BLK);
    dls_hb_when asked = serial();                               /* T2's call begins */
    assert_int_equal(dls_hb_op(e, T1, LEG, serial(), NULL), 0); /* joins w, returns while T2's call runs */
    int o = -1;
    assert_int_equal(dls_hb_ordered_as_of(e, T2, PTD, asked.begin, BLK, w, &o), 0);
    assert_false(o);
    assert_true(after_by(e, T2, PTD, BLK, w)); /* the next call begins after the legacy one returned */
    assert_int_equal(dls_hb_ordered_as_of(e, T2, PTD, serial().begin, BLK, w, &o), 0);
    assert_true(o);
    /* a legacy asker: a blocking stream's operation that overlapped the call */
    asked = serial();
    uint64_t p = op(e, T1, PTD);
    assert_int_equal(dls_hb_ordered_as_of(e, T2, LEG, asked.begin, PTD, p, &o), 0);
    assert_false(o);
    assert_true(after_by(e, T2, LEG, PTD, p));
    /* the asker's own stream: another thread's operation on it that overlapped the call */
    asked = serial();
    uint64_t n = op(e, T1, NB);
    assert_int_equal(dls_hb_ordered_as_of(e, T2, NB, asked.begin, NB, n, &o), 0);
    assert_false(o);
    assert_int_equal(dls_hb_ordered_as_of(e, T2, NB, DLS_HB_NOW, NB, n, &o), 0);
    assert_true(o);
}

/* A question as of a begin still finds, after more operations of other threads than a stream
 * keeps clocks for: the asking thread's own last operation on the stream, with what it is ordered
 * after (a wait), and another thread's operation on the asker's stream that returned before the
 * begin (from the stream's end stamps). */
static void queries_as_of_a_begin_reach_past_a_busy_stream(void **state)
{
    dls_hb *e = *state;
    int o = -1;
    uint64_t w = op(e, T1, BLK);
    assert_int_equal(dls_hb_event_record(e, T1, BLK, 9, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T2, NB, 9, serial(), NULL), 0); /* T2's own last operation */
    uint64_t n = op(e, T1, NB);                                           /* returns before T3 begins */
    dls_hb_when asked = serial();                                         /* T2's and T3's next calls begin */
    for (int i = 0; i < DLS_HB_POINTS + 8; i++)                           /* others' calls, returning meanwhile */
        assert_int_equal(dls_hb_op(e, T1, NB, overlapping(asked), NULL), 0);
    assert_int_equal(dls_hb_ordered_as_of(e, T2, NB, asked.begin, BLK, w, &o), 0);
    assert_true(o);
    assert_int_equal(dls_hb_ordered_as_of(e, T3, NB, asked.begin, BLK, w, &o), 0);
    assert_false(o); /* T3 made no wait: the wait is T2's, and no clock that old is kept */
    assert_int_equal(dls_hb_ordered_as_of(e, T3, NB, asked.begin, NB, n, &o), 0);
    assert_true(o);
    assert_int_equal(dls_hb_ordered_as_of(e, T3, NB, asked.begin, NB, n + 1, &o), 0);
    assert_false(o); /* that one overlapped the call */
}

/* An event record covers the operations of its stream whose calls returned before it began, not
 * one that overlapped it. */
static void an_event_record_covers_what_returned_before_it(void **state)
{
    dls_hb *e = *state;
    uint64_t before = op(e, T1, NB);
    dls_hb_when record_began = serial();
    uint64_t a = op(e, T1, NB); /* returns while T2's record is in the driver */
    assert_int_equal(dls_hb_event_record(e, T2, NB, 5, overlapping(record_began), NULL), 0);
    assert_int_equal(dls_hb_event_covers(e, 5, NB), before);
    assert_int_equal(dls_hb_event_wait(e, T2, NB2, 5, serial(), NULL), 0);
    assert_true(after(e, NB2, NB, before));
    assert_false(after(e, NB2, NB, a));
    assert_int_equal(dls_hb_event_record(e, T2, NB, 6, serial(), NULL), 0);
    assert_true(dls_hb_event_covers(e, 6, NB) > a);
}

/* An event record covers its thread's own last operation on its stream however many operations
 * other threads told there while the record's call was under way (more than the stream keeps
 * points for): the thread's later call follows its own. */
static void an_event_record_covers_its_threads_own_last_operation(void **state)
{
    dls_hb *e = *state;
    uint64_t mine = op(e, T2, NB); /* the loader's write */
    dls_hb_when record_began = serial();
    for (int i = 0; i < DLS_HB_POINTS + 8; i++) /* other loaders' work, returning meanwhile */
        assert_int_equal(dls_hb_op(e, T1, NB, overlapping(record_began), NULL), 0);
    assert_int_equal(dls_hb_event_record(e, T2, NB, 7, overlapping(record_began), NULL), 0);
    assert_true(dls_hb_event_covers(e, 7, NB) >= mine);
    assert_int_equal(dls_hb_event_wait(e, T3, NB2, 7, serial(), NULL), 0);
    assert_true(after_by(e, T3, NB2, NB, mine));
}

/* A wait whose call overlapped the latest record of its event may have found the record before
 * it: it is ordered after what both cover, and after nothing when two records overlapped it. */
static void a_wait_that_may_precede_the_latest_record_takes_what_both_cover(void **state)
{
    dls_hb *e = *state;
    enum { FRESH = 300, FRESH2 = 301 };
    assert_int_equal(dls_hb_stream_add(e, FRESH, CTX, DLS_HB_NON_BLOCKING), 0);
    assert_int_equal(dls_hb_stream_add(e, FRESH2, CTX, DLS_HB_NON_BLOCKING), 0);
    uint64_t a = op(e, T1, NB);
    assert_int_equal(dls_hb_event_record(e, T1, NB, 7, serial(), NULL), 0);
    uint64_t b = op(e, T1, NB);
    dls_hb_when wait_began = serial();
    assert_int_equal(dls_hb_event_record(e, T1, NB, 7, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T2, NB2, 7, overlapping(wait_began), NULL), 0);
    assert_true(after(e, NB2, NB, a)); /* either record covers a */
    assert_false(after(e, NB2, NB, b));
    /* The latest record on another stream: nothing in common with the one before. */
    uint64_t c = op(e, T1, BLK2);
    wait_began = serial();
    assert_int_equal(dls_hb_event_record(e, T1, BLK2, 7, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T2, FRESH, 7, overlapping(wait_began), NULL), 0);
    assert_false(after(e, FRESH, NB, a));
    assert_false(after(e, FRESH, BLK2, c));
    /* Two records overlapping the wait: it may have found either, or the one before both. */
    wait_began = serial();
    assert_int_equal(dls_hb_event_record(e, T1, BLK2, 7, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_record(e, T1, BLK2, 7, serial(), NULL), 0);
    assert_int_equal(dls_hb_event_wait(e, T2, FRESH2, 7, overlapping(wait_began), NULL), 0);
    assert_false(after(e, FRESH2, BLK2, c));
    /* A wait that began after the latest record returned waits for it. */
    assert_int_equal(dls_hb_event_wait(e, T2, FRESH2, 7, serial(), NULL), 0);
    assert_true(after(e, FRESH2, BLK2, c));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(stream_order),
        T(thread_observation_orders_its_later_ops),
        T(legacy_waits_for_blocking_streams),
        T(blocking_streams_wait_for_legacy),
        T(wary_queries_leave_out_unjoined_user_streams),
        T(removed_streams_leave_the_legacy_rules),
        T(a_forgotten_streams_slot_is_reused_without_its_knowledge),
        T(event_wait_orders_after_the_record),
        T(rerecording_replaces_the_capture),
        T(event_knowledge_is_transitive),
        T(an_operation_is_ordered_before_another_at_its_position),
        T(host_syncs),
        T(captures_complete_only_work_enqueued_before_them),
        T(a_capture_at_a_past_operation_holds_what_it_was_ordered_after),
        T(captures_as_of_a_begin_leave_out_overlapping_calls),
        T(waits_name_current_positions_and_drop_implied_ones),
        T(frontier_waits_follow_syncs_and_legacy_rules),
        T(errors_and_truncation),
        T(legacy_rules_need_host_order),
        T(queries_as_of_a_begin_leave_out_overlapping_calls),
        T(queries_as_of_a_begin_reach_past_a_busy_stream),
        T(an_event_record_covers_what_returned_before_it),
        T(an_event_record_covers_its_threads_own_last_operation),
        T(a_wait_that_may_precede_the_latest_record_takes_what_both_cover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
