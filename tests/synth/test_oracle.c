/* test_oracle.c: the reference's rules (tests/synth/oracle.h) on small hand-written traces. Each
 * trace is written without stamps (they are the line numbers, from 1, as the simulator writes
 * them); the tests ask which operations are guaranteed after which, and what pairs an exchange
 * has. Streams: 1 is context 1's legacy stream, 2 a blocking stream and 3 a non-blocking one of
 * context 1, 4 a per-thread stream of context 1, 5 a legacy stream of context 2 (another device). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "oracle.h"

#define STREAMS          \
    "S 1 1 0 legacy 1\n" \
    "S 2 1 0 user 1\n"   \
    "S 3 1 0 user 0\n"   \
    "S 4 1 0 ptds 1\n"   \
    "S 5 2 1 legacy 1\n"

/* The trace `lines` (one fact a line, no stamps) judged with host order of the given
 * granularity; fails the test when it cannot be. */
static oracle *judge_in(oracle_order order, const char *lines)
{
    size_t n = strlen(lines), cap = 2 * n + 64, len = 0, stamp = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (const char *p = lines; *p;) {
        size_t k = strcspn(p, "\n");
        len += (size_t)snprintf(text + len, cap - len, "%zu %.*s\n", ++stamp, (int)k, p);
        p += k + (p[k] == '\n');
        assert_true(len + 32 < cap);
    }
    char err[256] = "";
    oracle *o = oracle_parse(text, order, err, sizeof err);
    free(text);
    if (!o)
        fail_msg("trace not judged: %s", err);
    return o;
}

/* The same with call order (the program's own host order). */
static oracle *judge(const char *lines)
{
    return judge_in(ORACLE_CALL_ORDER, lines);
}

/* Pair k of exchange `label` (fails when there is none). */
static const oracle_pair *pair_of(const oracle *o, const char *label, size_t k)
{
    size_t nx, np;
    const oracle_exchange *x = oracle_exchanges(o, &nx);
    const oracle_pair *p = oracle_pairs(o, &np);
    for (size_t i = 0; i < nx; i++)
        if (strcmp(x[i].label, label) == 0) {
            assert_true(k < x[i].npairs);
            return &p[x[i].first_pair + k];
        }
    fail_msg("no exchange %s", label);
    return NULL;
}

static const oracle_exchange *exchange_of(const oracle *o, const char *label)
{
    size_t nx;
    const oracle_exchange *x = oracle_exchanges(o, &nx);
    for (size_t i = 0; i < nx; i++)
        if (strcmp(x[i].label, label) == 0)
            return &x[i];
    fail_msg("no exchange %s", label);
    return NULL;
}

/* ---- host order ---- */

/* Rule 1: one thread's calls on one stream are ordered; two threads' on a shared stream only when
 * one returned before the other began. */
static void stream_order_needs_host_order(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 cuLaunchKernel\n"
                              "O 1 10 1 1 kernel\n"
                              "R 10\n"
                              "C 11 100 cuLaunchKernel\n"
                              "O 2 11 1 2 kernel\n"
                              "C 12 200 cuLaunchKernel\n" /* thread 200 begins while 11 is open */
                              "R 11\n"
                              "O 3 12 1 3 kernel\n"
                              "R 12\n"
                              "C 13 200 cuLaunchKernel\n"
                              "O 4 13 1 4 kernel\n"
                              "R 13\n");
    assert_int_equal(oracle_guaranteed(o, 1, 2), 1); /* same thread */
    assert_int_equal(oracle_guaranteed(o, 1, 3), 1); /* 10 returned before 12 began */
    assert_int_equal(oracle_guaranteed(o, 2, 3), 0); /* 11 and 12 overlap: seq order is this run's */
    assert_int_equal(oracle_guaranteed(o, 2, 4), 1); /* 11 returned before 13 began */
    assert_int_equal(oracle_guaranteed(o, 3, 4), 1);
    assert_int_equal(oracle_guaranteed(o, 4, 1), 0);
    assert_int_equal(oracle_guaranteed(o, 1, 99), -1);
    oracle_free(o);
}

/* A call a hook makes and that returns before the outer call's operation (dlsync asking a
 * stream's id in an ENTER callback) does not move the operation's begin: what returned after the
 * program's call began, a legacy operation or another thread's host wait, still overlaps it. */
static void a_hooks_own_call_does_not_move_the_begin(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 200 cuLaunchKernel\n"
                              "O 1 10 1 1 kernel\n"       /* legacy, thread 200 */
                              "C 11 100 cuLaunchKernel\n" /* thread 100 begins while 10 is open */
                              "R 10\n"
                              "C 12 100 cuStreamGetId\n" /* its hook's own call, after 10 returned */
                              "R 12\n"
                              "O 2 11 2 1 kernel\n" /* blocking stream 2 */
                              "R 11\n");
    assert_int_equal(oracle_guaranteed(o, 1, 2), 0);
    oracle_free(o);
    o = judge(STREAMS "C 20 300 cuLaunchKernel\n"
                      "O 1 20 3 1 kernel\n" /* non-blocking stream 3 */
                      "R 20\n"
                      "C 21 200 cuStreamSynchronize\n"
                      "H 21 3 1\n"
                      "C 22 100 cuLaunchKernel\n" /* begins while the synchronize is open */
                      "R 21\n"
                      "C 23 100 cuStreamGetId\n"
                      "R 23\n"
                      "O 2 22 2 1 kernel\n"
                      "R 22\n"
                      "C 24 100 cuLaunchKernel\n" /* its next call began after it returned */
                      "O 3 24 2 2 kernel\n"
                      "R 24\n");
    assert_int_equal(oracle_guaranteed(o, 1, 2), 0);
    assert_int_equal(oracle_guaranteed(o, 1, 3), 1);
    oracle_free(o);
}

/* Nor does a call a hook makes after the operation (dlsync resolving a stream in an EXIT callback)
 * return the program's call: what begins after the hook's call returned but before the program's
 * call did still overlaps it, for its operation and for its host wait. */
static void a_hooks_own_call_does_not_return_the_programs_call(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 200 cuLaunchKernel\n"
                              "O 1 10 2 1 kernel\n"      /* blocking stream 2, thread 200 */
                              "C 11 200 cuStreamGetId\n" /* in its EXIT hook */
                              "R 11\n"
                              "C 12 100 cuLaunchKernel\n" /* thread 100 begins while 10 is open */
                              "O 2 12 1 1 kernel\n"       /* legacy */
                              "R 12\n"
                              "R 10\n");
    assert_int_equal(oracle_guaranteed(o, 1, 2), 0);
    oracle_free(o);
    o = judge(STREAMS "C 20 300 cuLaunchKernel\n"
                      "O 1 20 3 1 kernel\n" /* non-blocking stream 3 */
                      "R 20\n"
                      "C 21 200 cuStreamSynchronize\n"
                      "H 21 3 1\n"
                      "C 22 200 cuStreamGetId\n" /* in its EXIT hook */
                      "R 22\n"
                      "C 23 100 cuLaunchKernel\n" /* begins while the synchronize is open */
                      "O 2 23 2 1 kernel\n"
                      "R 23\n"
                      "R 21\n"
                      "C 24 100 cuLaunchKernel\n"
                      "O 3 24 2 2 kernel\n"
                      "R 24\n");
    assert_int_equal(oracle_guaranteed(o, 1, 2), 0);
    assert_int_equal(oracle_guaranteed(o, 1, 3), 1);
    oracle_free(o);
}

/* A call nested in the ENTER hook of a user's call (dlsync's injected wait) is before the outer
 * call's own operation when it returned first; one in the EXIT hook, after it, is not. */
static void nested_calls_order_by_their_returns(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 200 cuLaunchKernel\n"
                              "O 1 10 2 1 kernel\n" /* thread 200 writes on stream 2 */
                              "R 10\n"
                              "C 11 200 cuEventRecord\n"
                              "O 2 11 2 2 record\n"
                              "E 2 7\n"
                              "R 11\n"
                              "C 12 100 cuLaunchKernel\n" /* thread 100's launch on stream 3 */
                              "C 13 100 cuStreamWaitEvent\n"
                              "O 3 13 3 1 wait\n"
                              "W 3 7\n"
                              "R 13\n"
                              "O 4 12 3 2 kernel\n"
                              "C 14 100 cuEventRecord\n" /* in the EXIT hook */
                              "O 5 14 3 3 record\n"
                              "E 5 8\n"
                              "R 14\n"
                              "R 12\n");
    assert_int_equal(oracle_guaranteed(o, 1, 3), 1); /* the wait is after the record's past */
    assert_int_equal(oracle_guaranteed(o, 1, 4), 1); /* the outer launch after its nested wait */
    assert_int_equal(oracle_guaranteed(o, 3, 4), 1);
    assert_int_equal(oracle_guaranteed(o, 4, 5), 1); /* the EXIT hook's record covers the launch */
    oracle_free(o);
    /* the same, but the nested wait returns after the outer call's operation: the operation is
     * the nested call's, and the outer call's own one before it is not after the wait */
    o = judge(STREAMS "C 10 200 cuLaunchKernel\n"
                      "O 1 10 2 1 kernel\n"
                      "R 10\n"
                      "C 11 200 cuEventRecord\n"
                      "O 2 11 2 2 record\n"
                      "E 2 7\n"
                      "R 11\n"
                      "C 12 100 cuLaunchKernel\n"
                      "O 4 12 3 1 kernel\n"
                      "C 13 100 cuStreamWaitEvent\n"
                      "O 3 13 3 2 wait\n"
                      "W 3 7\n"
                      "R 13\n"
                      "R 12\n");
    assert_int_equal(oracle_guaranteed(o, 1, 4), 0);
    assert_int_equal(oracle_guaranteed(o, 1, 3), 1);
    oracle_free(o);
}

/* Body order: a call whose body ended (D) before another's body began (B) enqueued its work first,
 * though the calls overlap (the later call began during the earlier one's EXIT hook); bodies
 * that overlap order nothing in either granularity. */
static void body_order_counts_what_a_callback_saw(void **state)
{
    (void)state;
    const char *trace = STREAMS "C 10 100 cuLaunchKernel\n"
                                "B 10\n"
                                "O 1 10 4 1 kernel\n" /* thread 100 writes on its per-thread stream */
                                "D 10\n"
                                "R 10\n"
                                "C 11 100 cuLaunchKernel\n"
                                "B 11\n"
                                "O 2 11 1 1 kernel\n" /* then launches on the legacy stream */
                                "D 11\n"
                                "C 12 200 cuLaunchKernel\n" /* thread 200 begins in 11's EXIT hook */
                                "C 13 100 cuEventRecord\n"
                                "B 13\n"
                                "O 3 13 1 2 record\n"
                                "E 3 7\n"
                                "D 13\n"
                                "R 13\n"
                                "B 12\n"
                                "O 4 12 2 1 kernel\n" /* a blocking stream: after the legacy one */
                                "D 12\n"
                                "C 14 100 cuLaunchKernel\n"
                                "B 14\n"
                                "R 11\n"
                                "C 15 200 cuLaunchKernel\n"
                                "B 15\n"
                                "O 5 14 1 3 kernel\n" /* 14's and 15's bodies overlap */
                                "D 14\n"
                                "R 14\n"
                                "O 6 15 2 2 kernel\n"
                                "D 15\n"
                                "R 12\n"
                                "R 15\n";
    oracle *o = judge_in(ORACLE_CALL_ORDER, trace);
    assert_int_equal(oracle_guaranteed(o, 2, 4), 0);
    assert_int_equal(oracle_guaranteed(o, 1, 4), 0);
    assert_int_equal(oracle_guaranteed(o, 5, 6), 0);
    oracle_free(o);
    o = judge_in(ORACLE_BODY_ORDER, trace);
    assert_int_equal(oracle_guaranteed(o, 2, 4), 1); /* 11's body ended before 12's began */
    assert_int_equal(oracle_guaranteed(o, 1, 4), 1); /* through the legacy stream */
    assert_int_equal(oracle_guaranteed(o, 3, 4), 1);
    assert_int_equal(oracle_guaranteed(o, 5, 6), 0); /* overlapping bodies */
    assert_int_equal(oracle_guaranteed(o, 4, 6), 1); /* one thread's stream order */
    oracle_free(o);
    char err[128];
    assert_null(oracle_parse("1 C 1 5 a\n2 R 1\n", ORACLE_BODY_ORDER, err, sizeof err));
    assert_non_null(strstr(err, "B and D"));
}

/* ---- the legacy stream ---- */

/* Rule 2: the legacy stream waits for blocking and per-thread streams of its context enqueued
 * host-before, blocking streams wait for the legacy stream; non-blocking streams and other
 * contexts are exempt. */
static void legacy_stream_orders_blocking_streams(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 2 1 kernel\n" /* blocking */
                              "O 2 10 3 1 kernel\n" /* non-blocking */
                              "O 3 10 4 1 kernel\n" /* per-thread */
                              "O 4 10 5 1 kernel\n" /* legacy of context 2 */
                              "R 10\n"
                              "C 11 200 b\n"
                              "O 5 11 1 1 kernel\n" /* legacy of context 1, another thread */
                              "R 11\n"
                              "C 12 300 c\n"
                              "O 6 12 2 2 kernel\n" /* blocking again, after the legacy op */
                              "O 7 12 3 2 kernel\n" /* non-blocking again */
                              "C 13 400 d\n"        /* overlaps 12 */
                              "O 8 13 1 2 kernel\n"
                              "R 13\n"
                              "R 12\n");
    assert_int_equal(oracle_guaranteed(o, 1, 5), 1);
    assert_int_equal(oracle_guaranteed(o, 3, 5), 1);
    assert_int_equal(oracle_guaranteed(o, 2, 5), 0); /* non-blocking exempt */
    assert_int_equal(oracle_guaranteed(o, 4, 5), 0); /* another context */
    assert_int_equal(oracle_guaranteed(o, 5, 6), 1); /* blocking after legacy */
    assert_int_equal(oracle_guaranteed(o, 1, 6), 1); /* and so after what the legacy op waited for */
    assert_int_equal(oracle_guaranteed(o, 5, 7), 0);
    assert_int_equal(oracle_guaranteed(o, 6, 8), 0); /* 12 and 13 overlap */
    assert_int_equal(oracle_guaranteed(o, 5, 8), 1); /* stream order on the legacy stream */
    oracle_free(o);
}

/* A stream destroyed with work pending takes no part in the legacy rule unless the destroy began
 * after the legacy operation's call returned (CUDA does not say that the legacy stream waits for
 * a destroyed stream's work); a destroy overlapping that call orders nothing either. */
static void a_destroyed_stream_leaves_the_legacy_rule(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 2 1 kernel\n" /* blocking */
                              "O 2 10 4 1 kernel\n" /* per-thread */
                              "R 10\n"
                              "C 11 100 cuStreamDestroy_v2\n"
                              "X 2 11\n"
                              "R 11\n"
                              "C 12 200 b\n"
                              "O 3 12 1 1 kernel\n" /* legacy, after the destroy returned */
                              "R 12\n"
                              "C 13 100 cuStreamDestroy_v2\n"
                              "X 4 13\n"
                              "R 13\n"
                              "C 14 100 a\n"
                              "O 4 14 5 1 kernel\n" /* context 2: user stream 6 and its legacy stream 5 */
                              "R 14\n"
                              "C 15 300 b\n"
                              "C 16 100 cuStreamDestroy_v2\n"
                              "O 5 15 5 2 kernel\n"
                              "X 6 16\n"
                              "R 16\n"
                              "R 15\n");
    assert_int_equal(oracle_guaranteed(o, 1, 3), 0);
    assert_int_equal(oracle_guaranteed(o, 2, 3), 1);
    oracle_free(o);
}

/* A host synchronize of the legacy stream (the simulator's mark) waits for the legacy stream's
 * operations and what they wait for, not for a blocking stream's work enqueued after them. */
static void a_legacy_synchronize_waits_for_the_legacy_streams_work(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 1 1 kernel\n" /* legacy */
                              "O 2 10 2 1 kernel\n" /* blocking, after the legacy op */
                              "R 10\n"
                              "C 11 200 cuStreamSynchronize\n"
                              "O 3 11 1 2 mark\n"
                              "H 11 1 2\n"
                              "R 11\n"
                              "C 12 300 b\n"
                              "O 4 12 4 1 kernel\n" /* per-thread: after the legacy stream's mark */
                              "R 12\n");
    assert_int_equal(oracle_guaranteed(o, 1, 4), 1);
    assert_int_equal(oracle_guaranteed(o, 2, 3), 0);
    assert_int_equal(oracle_guaranteed(o, 2, 4), 0);
    oracle_free(o);
}

/* ---- events ---- */

/* Rule 3: the latest record host-before the wait; an earlier one it follows does not count. */
static void event_wait_follows_latest_record(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 2 1 record\n"
                              "E 1 7\n"
                              "O 2 10 2 2 kernel\n" /* the write, after the first record */
                              "O 3 10 2 3 record\n"
                              "E 3 7\n"
                              "R 10\n"
                              "C 11 200 b\n"
                              "O 4 11 3 1 wait\n"
                              "W 4 7\n"
                              "O 5 11 3 2 kernel\n"
                              "R 11\n");
    assert_int_equal(oracle_guaranteed(o, 2, 5), 1);
    assert_int_equal(oracle_guaranteed(o, 3, 4), 1);
    oracle_free(o);
    /* the wait before the second record: only the first counts, the write is not covered */
    o = judge(STREAMS "C 10 100 a\n"
                      "O 1 10 2 1 record\n"
                      "E 1 7\n"
                      "O 2 10 2 2 kernel\n"
                      "R 10\n"
                      "C 11 200 b\n"
                      "O 4 11 3 1 wait\n"
                      "W 4 7\n"
                      "O 5 11 3 2 kernel\n"
                      "R 11\n"
                      "C 12 100 c\n"
                      "O 3 12 2 3 record\n"
                      "E 3 7\n"
                      "R 12\n");
    assert_int_equal(oracle_guaranteed(o, 1, 5), 1);
    assert_int_equal(oracle_guaranteed(o, 2, 5), 0);
    oracle_free(o);
}

/* Rule 3: a record whose call overlaps the wait's is a candidate too: the wait guarantees only
 * what every candidate does; with no record host-before the wait, nothing. The actual
 * dependency (P line) shows this run's order, which is not guaranteed. */
static void overlapping_records_intersect(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 2 1 kernel\n" /* a write on stream 2 */
                              "O 2 10 2 2 record\n"
                              "E 2 7\n"
                              "R 10\n"
                              "C 11 300 b\n"
                              "O 3 11 4 1 kernel\n" /* another write, on a per-thread stream */
                              "C 12 200 c\n"
                              "O 4 11 4 2 record\n" /* recorded while 12 is open */
                              "E 4 7\n"
                              "O 5 12 3 1 wait\n"
                              "W 5 7\n"
                              "P 5 4 2\n" /* this run: the wait resolved to the second record */
                              "O 6 12 3 2 kernel\n"
                              "R 12\n"
                              "R 11\n");
    assert_int_equal(oracle_guaranteed(o, 1, 6), 0); /* the second record might be the latest */
    assert_int_equal(oracle_guaranteed(o, 3, 6), 0); /* or the first: this run's order is luck */
    assert_int_equal(oracle_guaranteed(o, 4, 6), 0);
    oracle_free(o);
    /* the same event recorded first on the same stream before both: the intersection keeps it */
    o = judge(STREAMS "C 9 100 z\n"
                      "O 1 9 2 1 kernel\n"
                      "R 9\n"
                      "C 10 300 a\n"
                      "O 7 10 4 1 wait\n"
                      "R 10\n"
                      "C 11 300 b\n"
                      "O 2 11 2 2 record\n" /* host-before the wait */
                      "E 2 7\n"
                      "R 11\n"
                      "C 12 300 c\n"
                      "C 13 200 d\n"
                      "O 3 12 2 3 record\n" /* overlaps 13 */
                      "E 3 7\n"
                      "O 4 13 3 1 wait\n"
                      "W 4 7\n"
                      "O 5 13 3 2 kernel\n"
                      "R 13\n"
                      "R 12\n");
    assert_int_equal(oracle_guaranteed(o, 1, 5), 1); /* in both candidates' pasts */
    assert_int_equal(oracle_guaranteed(o, 2, 5), 1); /* in the second's past, and the first itself */
    assert_int_equal(oracle_guaranteed(o, 3, 5), 0);
    oracle_free(o);
    /* no record host-before the wait: "never recorded" is a candidate */
    o = judge(STREAMS "C 10 100 a\n"
                      "O 1 10 2 1 kernel\n"
                      "C 11 200 b\n"
                      "O 2 10 2 2 record\n"
                      "E 2 7\n"
                      "O 3 11 3 1 wait\n"
                      "W 3 7\n"
                      "P 3 2 2\n"
                      "O 4 11 3 2 kernel\n"
                      "R 10\n"
                      "R 11\n");
    assert_int_equal(oracle_guaranteed(o, 1, 4), 0);
    assert_int_equal(oracle_guaranteed(o, 2, 4), 0);
    oracle_free(o);
}

/* A candidate record enqueued after the wait (its call overlaps the wait's) is judged by its own
 * past, known only after a second sweep. */
static void late_candidate_takes_another_sweep(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 9 100 z\n"
                              "O 1 9 2 1 kernel\n"
                              "O 2 9 2 2 record\n"
                              "E 2 7\n"
                              "R 9\n"
                              "C 10 300 a\n"
                              "C 11 200 b\n"
                              "O 3 11 3 1 wait\n" /* before the overlapping call's record */
                              "W 3 7\n"
                              "O 4 11 3 2 kernel\n"
                              "O 5 10 2 3 record\n" /* host-after 1, overlapping 11 */
                              "E 5 7\n"
                              "R 10\n"
                              "R 11\n");
    assert_int_equal(oracle_guaranteed(o, 1, 4), 1); /* both candidates cover the write */
    assert_int_equal(oracle_guaranteed(o, 2, 4), 1);
    assert_int_equal(oracle_guaranteed(o, 5, 4), 0);
    assert_true(oracle_get_stats(o).passes >= 2);
    oracle_free(o);
}

/* ---- host waits ---- */

/* Rule 4: a stream synchronize completes the stream's operations enqueued host-before it (not one
 * another thread enqueued meanwhile, even at a lower position than the wait's); the host
 * knows it from the wait's return on. An HE line completes the intersection of its candidates. */
static void host_waits_complete_what_was_enqueued_before(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 3 1 kernel\n"
                              "R 10\n"
                              "C 11 300 b\n"
                              "C 12 100 cuStreamSynchronize\n"
                              "O 2 11 3 2 kernel\n" /* enqueued while the synchronize was open */
                              "H 12 3 2\n"
                              "R 12\n"
                              "R 11\n"
                              "C 13 200 c\n"
                              "O 3 13 2 1 kernel\n"
                              "R 13\n"
                              "C 14 100 cuEventRecord\n"
                              "O 4 14 2 2 record\n"
                              "E 4 9\n"
                              "R 14\n"
                              "C 15 100 cuEventSynchronize\n"
                              "HE 15 9\n"
                              "R 15\n"
                              "C 16 400 d\n"
                              "O 5 16 5 1 kernel\n"
                              "R 16\n");
    assert_int_equal(oracle_guaranteed(o, 1, 5), 1); /* the synchronize's completion */
    assert_int_equal(oracle_guaranteed(o, 2, 5), 0); /* enqueued during it */
    assert_int_equal(oracle_guaranteed(o, 3, 5), 1); /* the event's record covered it */
    oracle_free(o);
}

/* A context's synchronize completes the work of a stream destroyed before it, though its H lines
 * name only the streams the simulator still held; a stream synchronize does not. */
static void context_waits_cover_destroyed_streams(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "S 6 1 0 user 0\n"
                              "C 10 100 cuLaunchKernel\n"
                              "O 1 10 6 1 kernel\n"
                              "R 10\n"
                              "C 11 100 cuStreamDestroy\n"
                              "X 6 11\n"
                              "R 11\n"
                              "C 12 100 cuLaunchKernel\n"
                              "O 2 12 3 1 kernel\n"
                              "R 12\n"
                              "C 13 100 cuStreamSynchronize\n"
                              "H 13 3 1\n"
                              "R 13\n"
                              "C 14 200 a\n"
                              "O 3 14 5 1 kernel\n"
                              "R 14\n"
                              "C 15 100 cuCtxSynchronize\n"
                              "H 15 3 1\n"
                              "H 15 1 0\n"
                              "R 15\n"
                              "C 16 200 b\n"
                              "O 4 16 5 2 kernel\n"
                              "R 16\n");
    assert_int_equal(oracle_guaranteed(o, 2, 3), 1);
    assert_int_equal(oracle_guaranteed(o, 1, 3), 0); /* the stream synchronize was of stream 3 */
    assert_int_equal(oracle_guaranteed(o, 1, 4), 1); /* the context's synchronize covers stream 6 */
    oracle_free(o);
}

/* A synchronize that ended (H line) after another thread's call began but before that call
 * enqueued its operation does not order the two (the calls overlap), but is the window a tool
 * seeing calls through their callbacks may rightly use (oracle_pair_window). */
static void a_wait_ending_during_a_call_is_a_window(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 cuLaunchKernel\n"
                              "O 1 10 3 1 kernel m:0x1000:256\n"
                              "R 10\n"
                              "N 0 100 export x1 0x1000 256\n"
                              "C 11 100 cuStreamSynchronize\n"
                              "C 12 200 cuLaunchKernel\n"
                              "H 11 3 1\n"
                              "O 2 12 2 1 kernel m:0x1000:256\n"
                              "R 11\n"
                              "R 12\n"
                              "N 0 200 release x1\n");
    const oracle_pair *p = pair_of(o, "x1", 0);
    assert_false(p->guaranteed);
    assert_int_equal(oracle_pair_window(o, p), 1);
    oracle_free(o);
}

/* A host access (hostread) is after what the host knew at the note; a later operation is after
 * the access when the note is host-before it. */
static void host_reads_need_host_knowledge(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 2 1 set w:0x1000:64\n"
                              "R 10\n"
                              "N 0 100 export x1 0x1000 64\n"
                              "N 0 200 hostread x1\n" /* the host reads before synchronizing */
                              "C 11 200 cuStreamSynchronize\n"
                              "H 11 2 1\n"
                              "R 11\n"
                              "N 0 200 hostread x1\n"
                              "N 0 200 release x1\n"
                              "C 12 100 b\n"
                              "O 2 12 3 1 set w:0x1000:64\n"
                              "R 12\n");
    const oracle_pair *p0 = pair_of(o, "x1", 0), *p1 = pair_of(o, "x1", 1);
    assert_int_equal(p0->kind, ORACLE_HOST_READ);
    assert_false(p0->guaranteed);
    assert_int_equal(p1->kind, ORACLE_HOST_READ);
    assert_true(p1->guaranteed);
    const oracle_exchange *x = exchange_of(o, "x1");
    assert_int_equal(x->unguaranteed, 1);
    assert_int_equal(x->kinds, 1u << ORACLE_HOST_READ); /* the reuse after both reads is ordered */
    assert_int_equal(oracle_host_knows(o, 1, 10), 0);
    assert_int_equal(oracle_host_knows(o, 1, 14), 1);
    oracle_free(o);
}

/* A host read that another thread's synchronize orders is guaranteed either way; as of the import
 * only when that synchronize returned before the import (or the reader waited itself). */
static void host_reads_as_of_the_import(void **state)
{
    (void)state;
    static const char fill[] = STREAMS "C 10 100 a\n"
                                       "O 1 10 2 1 set w:0x1000:64\n"
                                       "R 10\n"
                                       "N 0 100 export x1 0x1000 64\n";
    static const char other_sync[] = "C 11 100 cuStreamSynchronize\n"
                                     "H 11 2 1\n"
                                     "R 11\n";
    char text[1024];
    snprintf(text, sizeof text,
             "%sN 0 200 import x1\n%sN 0 200 hostread x1\n" /* the other thread's wait returns after the import */
             "C 12 200 cuStreamSynchronize\nH 12 2 1\nR 12\nN 0 200 hostread x1\n" /* then the reader waits */
             "N 0 200 release x1\n",
             fill, other_sync);
    oracle *o = judge(text);
    const oracle_pair *p0 = pair_of(o, "x1", 0), *p1 = pair_of(o, "x1", 1);
    assert_int_equal(p0->kind, ORACLE_HOST_READ);
    assert_true(p0->guaranteed);
    assert_int_equal(oracle_pair_after_import(o, p0), 1);
    assert_true(p1->guaranteed);
    assert_int_equal(oracle_pair_after_import(o, p1), 0);
    oracle_free(o);
    snprintf(text, sizeof text, "%s%sN 0 200 import x1\nN 0 200 hostread x1\nN 0 200 release x1\n", fill, other_sync);
    o = judge(text);
    assert_true(pair_of(o, "x1", 0)->guaranteed);
    assert_int_equal(oracle_pair_after_import(o, pair_of(o, "x1", 0)), 0);
    oracle_free(o);
    snprintf(text, sizeof text, "%s%sN 0 200 hostread x1\nN 0 200 release x1\n", fill, other_sync); /* no import note */
    o = judge(text);
    assert_int_equal(oracle_pair_after_import(o, pair_of(o, "x1", 0)), 0);
    oracle_free(o);
}

/* Rule 5 and a trace's P lines: a chain of waits through three streams is guaranteed; the legacy
 * stream's actual dependency on an open call's work is not. */
static void transitivity_and_actual_order(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 3 1 kernel\n"
                              "O 2 10 3 2 record\n"
                              "E 2 1\n"
                              "O 3 10 2 1 wait\n"
                              "W 3 1\n"
                              "O 4 10 2 2 record\n"
                              "E 4 2\n"
                              "R 10\n"
                              "C 11 200 b\n"
                              "O 5 11 4 1 wait\n"
                              "W 5 2\n"
                              "O 6 11 4 2 kernel\n"
                              "R 11\n");
    assert_int_equal(oracle_guaranteed(o, 1, 6), 1);
    oracle_free(o);
    o = judge(STREAMS "C 10 100 cuLaunchKernel\n"
                      "O 1 10 2 1 kernel w:0x1000:64\n"
                      "C 11 200 cuLaunchKernel\n"
                      "O 2 11 1 1 kernel r:0x1000:64\n" /* legacy: waits for stream 2 in this run */
                      "P 2 2 1\n"
                      "R 11\n"
                      "R 10\n");
    assert_int_equal(oracle_guaranteed(o, 1, 2), 0);
    oracle_free(o);
}

/* ---- exchanges and their pairs ---- */

/* A write-read race, a reuse ordered by the consumer's event, the kinds named as dlsync names
 * them; the actual dependency the trace shows does not make a pair guaranteed. */
static void exchange_pairs_and_kinds(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 cuLaunchKernel\n"
                              "O 1 10 2 1 kernel m:0x1000:256\n"
                              "R 10\n"
                              "N 0 100 fill x1\n"
                              "N 0 100 export x1 0x1000 256\n"
                              "C 11 200 cuLaunchKernel\n"
                              "O 2 11 3 1 kernel m:0x1000:256 m:0x9000:256\n"
                              "P 2 2 1\n"
                              "R 11\n"
                              "N 0 200 use x1\n"
                              "C 12 200 cuEventRecord\n"
                              "O 3 12 3 2 record\n"
                              "E 3 5\n"
                              "R 12\n"
                              "N 0 200 release x1\n"
                              "C 13 100 cuStreamWaitEvent\n"
                              "O 4 13 2 2 wait\n"
                              "W 4 5\n"
                              "R 13\n"
                              "C 14 100 cuMemsetD32Async\n"
                              "O 5 14 2 3 set w:0x1000:256\n"
                              "R 14\n"
                              "N 0 100 export x2 0x1000 256\n");
    const oracle_exchange *x = exchange_of(o, "x1");
    assert_int_equal(x->npairs, 3);
    const oracle_pair *wr = pair_of(o, "x1", 0), *rr = pair_of(o, "x1", 1), *ww = pair_of(o, "x1", 2);
    assert_int_equal(wr->kind, ORACLE_WRITE_READ);
    assert_false(wr->guaranteed); /* the P line shows this run's order only */
    char actual[96];
    oracle_describe_actual(o, wr, actual, sizeof actual);
    assert_string_equal(actual, "ordered in this run");
    assert_int_equal(rr->kind, ORACLE_RELEASE_REUSE);
    assert_true(rr->guaranteed);
    assert_int_equal(ww->kind, ORACLE_WRITE_WRITE); /* the reuse is a known write */
    assert_true(ww->guaranteed);
    assert_int_equal(x->kinds, 1u << ORACLE_WRITE_READ);
    char d[256];
    oracle_describe(o, wr->b, d, sizeof d);
    assert_non_null(strstr(d, "op 2 (kernel by cuLaunchKernel, stream 3 non-blocking of device 0, seq 1, thread 200"));
    oracle_free(o);
}

/* Without the consumer's event the reuse races the read (release-reuse); a read-only use does
 * not conflict with a read-only reuse. */
static void release_reuse_without_order(void **state)
{
    (void)state;
    oracle *o = judge(STREAMS "C 10 100 a\n"
                              "O 1 10 2 1 set w:0x1000:256\n"
                              "R 10\n"
                              "N 0 100 export x1 0x1000 256\n"
                              "C 11 200 cuStreamSynchronize\n"
                              "H 11 2 1\n"
                              "R 11\n"
                              "C 12 200 b\n"
                              "O 2 12 3 1 copy r:0x1000:256 w:0x9000:256\n"
                              "R 12\n"
                              "N 0 200 release x1\n"
                              "C 13 100 c\n"
                              "O 3 13 2 2 copy r:0x1000:256 w:0xa000:256\n" /* reads only: no conflict */
                              "O 4 13 2 3 kernel m:0x1000:256\n"
                              "R 13\n");
    const oracle_exchange *x = exchange_of(o, "x1");
    assert_int_equal(x->kinds, 1u << ORACLE_RELEASE_REUSE);
    assert_int_equal(x->unguaranteed, 1);
    size_t found = 0;
    for (size_t k = 0; k < x->npairs; k++) {
        const oracle_pair *p = pair_of(o, "x1", k);
        if (p->kind == ORACLE_RELEASE_REUSE) {
            found++;
            assert_int_equal(p->b.index, 3); /* the kernel (op index 3), not the reading copy */
            assert_false(p->guaranteed);
        }
    }
    assert_int_equal(found, 1);
    oracle_free(o);
}

/* Notes the reference cannot take fail the trace with a reason. */
static void bad_notes_and_lines_are_refused(void **state)
{
    (void)state;
    char err[256];
    assert_null(oracle_parse("1 N 0 1 release x9\n", ORACLE_CALL_ORDER, err, sizeof err));
    assert_non_null(strstr(err, "unknown exchange x9"));
    assert_null(oracle_parse("1 O 1 2\n", ORACLE_CALL_ORDER, err, sizeof err));
    assert_non_null(strstr(err, "line 1"));
    assert_null(oracle_parse("1 C 1 5 a\n2 R 1\n3 N 0 5 export x 0x10 4\n4 N 0 5 fill x\n", ORACLE_CALL_ORDER, err,
                             sizeof err));
    assert_non_null(strstr(err, "does not touch"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_order_needs_host_order),
        cmocka_unit_test(nested_calls_order_by_their_returns),
        cmocka_unit_test(a_hooks_own_call_does_not_move_the_begin),
        cmocka_unit_test(a_hooks_own_call_does_not_return_the_programs_call),
        cmocka_unit_test(body_order_counts_what_a_callback_saw),
        cmocka_unit_test(legacy_stream_orders_blocking_streams),
        cmocka_unit_test(a_destroyed_stream_leaves_the_legacy_rule),
        cmocka_unit_test(a_legacy_synchronize_waits_for_the_legacy_streams_work),
        cmocka_unit_test(event_wait_follows_latest_record),
        cmocka_unit_test(overlapping_records_intersect),
        cmocka_unit_test(late_candidate_takes_another_sweep),
        cmocka_unit_test(host_waits_complete_what_was_enqueued_before),
        cmocka_unit_test(context_waits_cover_destroyed_streams),
        cmocka_unit_test(a_wait_ending_during_a_call_is_a_window),
        cmocka_unit_test(host_reads_need_host_knowledge),
        cmocka_unit_test(host_reads_as_of_the_import),
        cmocka_unit_test(transitivity_and_actual_order),
        cmocka_unit_test(exchange_pairs_and_kinds),
        cmocka_unit_test(release_reuse_without_order),
        cmocka_unit_test(bad_notes_and_lines_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
