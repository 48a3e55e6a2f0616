/* test_judge.c: the tester's verdict (tests/synth/judge.h) on a hand-written trace and dlsync log:
 * log exchanges are matched to the trace's by data address in export order, and check must
 * report exactly the unguaranteed exchanges and kinds; fix must leave none; the generator's
 * claims (synced, racy) are held to the reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "judge.h"
#include "oracle.h"

/* Two exchanges of the same memory: x1's read races its fill (stream 3 waits for nothing), x2's
 * read follows a stream synchronize of the fill. */
static const char g_trace[] = "1 S 2 1 0 user 1\n"
                              "2 S 3 1 0 user 0\n"
                              "3 C 10 100 cuLaunchKernel\n"
                              "4 O 1 10 2 1 kernel m:0x1000:256\n"
                              "5 R 10\n"
                              "6 N 0 100 export x1 0x1000 256\n"
                              "7 C 11 200 cuLaunchKernel\n"
                              "8 O 2 11 3 1 kernel m:0x1000:256\n"
                              "9 R 11\n"
                              "10 C 12 200 cuStreamSynchronize\n"
                              "11 H 12 3 1\n"
                              "12 R 12\n"
                              "13 N 0 200 release x1\n"
                              "14 C 13 100 cuLaunchKernel\n"
                              "15 O 3 13 2 2 kernel m:0x1000:256\n"
                              "16 R 13\n"
                              "17 C 14 100 cuStreamSynchronize\n"
                              "18 H 14 2 2\n"
                              "19 R 14\n"
                              "20 N 0 100 export x2 0x1000 256\n"
                              "21 C 15 200 cuLaunchKernel\n"
                              "22 O 4 15 3 2 kernel m:0x1000:256\n"
                              "23 R 15\n"
                              "24 N 0 200 release x2\n";

#define EXPORT(xid) "{\"ev\":\"export\",\"t\":1,\"pid\":1,\"tid\":1,\"xid\":" #xid ",\"data\":\"0x1000\"}\n"
#define RACE(ev, xid, kind) \
    "{\"ev\":\"" ev "\",\"t\":1,\"pid\":1,\"tid\":1,\"xid\":" #xid ",\"key\":\"k\",\"kind\":\"" kind "\"}\n"

/* A host-read record of the handover itself (dlsync could not watch the host's access), or of a
 * host read caught on watched pages. */
#define HOST_RACE(xid, op)                                       \
    "{\"ev\":\"race\",\"t\":1,\"pid\":1,\"tid\":1,\"xid\":" #xid \
    ",\"key\":\"k\",\"kind\":\"host-read\",\"producer\":{\"op\":\"k\"},\"consumer\":{\"op\":\"" op " after f\"}}\n"

static oracle *reference(void)
{
    char err[256];
    oracle *o = oracle_parse(g_trace, ORACLE_CALL_ORDER, err, sizeof err);
    if (!o)
        fail_msg("%s", err);
    return o;
}

static void check_must_name_exactly_the_unguaranteed_exchanges(void **state)
{
    (void)state;
    oracle *o = reference();
    judge_program racy = {.strict_check = 1};
    judge_totals t = {0};
    judge_text out = {0};
    /* right: x1 (xid 5) reported, x2 (xid 9) not */
    assert_int_equal(judge_run(o, EXPORT(5) EXPORT(9) RACE("race", 5, "write-read"), JUDGE_CHECK, &racy, &t, &out, 9),
                     0);
    assert_int_equal(t.check_fp + t.check_fn, 0);
    /* wrong: x1 missed and x2 reported (a repeat of a hazard names x2) */
    assert_int_equal(
        judge_run(o, EXPORT(5) EXPORT(9) RACE("race_again", 9, "write-read"), JUDGE_CHECK, &racy, &t, &out, 9), 2);
    assert_int_equal(t.check_fp, 1);
    assert_int_equal(t.check_fn, 1);
    assert_int_equal(t.check_fn_exchange, 1);
    assert_non_null(strstr(out.text, "false positive: exchange x2 (xid 9"));
    assert_non_null(strstr(out.text, "false negative: exchange x1 (xid 5) has no write-read race record (none at all); "
                                     "the reference: write-read pair op 1"));
    /* a race of an exchange no export names is a false positive too */
    assert_int_equal(judge_run(o, EXPORT(5) EXPORT(9) RACE("race", 5, "write-read") RACE("race", 7, "host-read"),
                               JUDGE_CHECK, &racy, &t, &out, 9),
                     1);
    assert_int_equal(t.check_fp_kind[JUDGE_DLSYNC_KINDS - 1], 1);
    free(out.text);
    oracle_free(o);
}

/* The consumer's call begins before the producer's returns, but its body begins after the
 * producer's body is done: unguaranteed in call order, guaranteed in body order (what callbacks
 * can see). */
static const char g_edge_trace[] = "1 S 2 1 0 legacy 1\n"
                                   "2 C 10 100 cuLaunchKernel\n"
                                   "3 B 10\n"
                                   "4 O 1 10 2 1 kernel m:0x1000:256\n"
                                   "5 D 10\n"
                                   "6 C 11 200 cuLaunchKernel\n"
                                   "7 R 10\n"
                                   "8 N 0 100 export x1 0x1000 256\n"
                                   "9 B 11\n"
                                   "10 O 2 11 2 2 kernel m:0x1000:256\n"
                                   "11 D 11\n"
                                   "12 R 11\n"
                                   "13 N 0 200 release x1\n";

/* A miss in such a window fails the run at strictness 2 only; without a body-order view, at 1. */
static void check_misses_at_the_callbacks_edges_fail_only_the_strictest(void **state)
{
    (void)state;
    char err[256];
    oracle *calls = oracle_parse(g_edge_trace, ORACLE_CALL_ORDER, err, sizeof err);
    oracle *bodies = oracle_parse(g_edge_trace, ORACLE_BODY_ORDER, err, sizeof err);
    assert_non_null(calls);
    assert_non_null(bodies);
    judge_program seen = {.strict_check = 1, .bodies = bodies}, all = {.strict_check = 2, .bodies = bodies},
                  blind = {.strict_check = 1};
    judge_totals t = {0};
    judge_text out = {0};
    assert_int_equal(judge_run(calls, EXPORT(5), JUDGE_CHECK, &seen, &t, &out, 9), 0);
    assert_int_equal(t.check_fn, 1);
    assert_int_equal(t.check_fn_seen, 0);
    assert_int_equal(judge_run(calls, EXPORT(5), JUDGE_CHECK, &all, &t, &out, 9), 1);
    assert_int_equal(judge_run(calls, EXPORT(5), JUDGE_CHECK, &blind, &t, &out, 9), 1);
    assert_int_equal(t.check_fn_seen, 1);
    free(out.text);
    oracle_free(calls);
    oracle_free(bodies);
}

/* Thread 200 imports x1 and reads it on the host; thread 100's synchronize of the fill returns
 * between the two: guaranteed, but not as of the import. */
static const char g_import_trace[] = "1 S 2 1 0 user 1\n"
                                     "2 C 10 100 cuLaunchKernel\n"
                                     "3 O 1 10 2 1 kernel m:0x1000:256\n"
                                     "4 R 10\n"
                                     "5 N 0 100 export x1 0x1000 256\n"
                                     "6 N 0 200 import x1\n"
                                     "7 C 11 100 cuStreamSynchronize\n"
                                     "8 H 11 2 1\n"
                                     "9 R 11\n"
                                     "10 N 0 200 hostread x1\n"
                                     "11 N 0 200 release x1\n";

/* A host-read report of the handover of such a read (its pages could not be watched), or of a
 * host read caught on watched pages that the reference orders, fails the run at strictness 2
 * only (each counted apart); a report of another kind at 1. */
static void check_host_reads_ordered_after_the_import_fail_only_the_strictest(void **state)
{
    (void)state;
    char err[256];
    oracle *o = oracle_parse(g_import_trace, ORACLE_CALL_ORDER, err, sizeof err);
    assert_non_null(o);
    judge_program blind = {.strict_check = 1}, all = {.strict_check = 2};
    judge_totals t = {0};
    judge_text out = {0};
    assert_int_equal(judge_run(o, EXPORT(5) HOST_RACE(5, "host access"), JUDGE_CHECK, &blind, &t, &out, 9), 0);
    assert_int_equal(t.check_fp, 1);
    assert_int_equal(t.check_fp_import, 1);
    assert_int_equal(judge_run(o, EXPORT(5) HOST_RACE(5, "host access"), JUDGE_CHECK, &all, &t, &out, 9), 1);
    assert_non_null(strstr(out.text, "only another thread's host wait after the import orders"));
    assert_int_equal(judge_run(o, EXPORT(5) HOST_RACE(5, "host read"), JUDGE_CHECK, &blind, &t, &out, 9), 0);
    assert_int_equal(t.check_fp_import, 2);
    assert_int_equal(t.check_fp_pages, 1);
    assert_int_equal(judge_run(o, EXPORT(5) HOST_RACE(5, "host read"), JUDGE_CHECK, &all, &t, &out, 9), 1);
    assert_non_null(strstr(out.text, "caught on its protected pages"));
    assert_int_equal(judge_run(o, EXPORT(5) RACE("race", 5, "write-read"), JUDGE_CHECK, &blind, &t, &out, 9), 1);
    assert_int_equal(t.check_fp, 5);
    assert_int_equal(t.check_fp_import, 2);
    assert_int_equal(t.check_fp_pages, 2);
    free(out.text);
    oracle_free(o);
}

/* A host read nothing orders: a miss of it (no record) fails the run at strictness 2 only,
 * counted apart; the read reported passes. */
static const char g_host_read_trace[] = "1 S 2 1 0 user 1\n"
                                        "2 C 10 100 cuLaunchKernel\n"
                                        "3 O 1 10 2 1 kernel m:0x1000:256\n"
                                        "4 R 10\n"
                                        "5 N 0 100 export x1 0x1000 256\n"
                                        "6 N 0 200 import x1\n"
                                        "7 N 0 200 hostread x1\n"
                                        "8 N 0 200 release x1\n";

static void check_host_read_misses_fail_only_the_strictest(void **state)
{
    (void)state;
    char err[256];
    oracle *o = oracle_parse(g_host_read_trace, ORACLE_CALL_ORDER, err, sizeof err);
    assert_non_null(o);
    judge_program seen = {.strict_check = 1}, all = {.strict_check = 2}; /* no bodies: every miss is seen */
    judge_totals t = {0};
    judge_text out = {0};
    assert_int_equal(judge_run(o, EXPORT(5), JUDGE_CHECK, &seen, &t, &out, 9), 0);
    assert_int_equal(t.check_fn, 1);
    assert_int_equal(t.check_fn_host, 1);
    assert_int_equal(judge_run(o, EXPORT(5), JUDGE_CHECK, &all, &t, &out, 9), 1);
    assert_int_equal(judge_run(o, EXPORT(5) HOST_RACE(5, "host read"), JUDGE_CHECK, &seen, &t, &out, 9), 0);
    assert_int_equal(t.check_fn_host, 2);
    free(out.text);
    oracle_free(o);
}

static void fix_plain_and_the_program_claims(void **state)
{
    (void)state;
    oracle *o = reference();
    judge_program synced = {.synced = 1}, racy = {0}, lost = {.lost_deleters = 1};
    judge_totals t = {0};
    judge_text out = {0};
    assert_int_equal(judge_run(o, NULL, JUDGE_PLAIN, &racy, &t, &out, 9), 0);
    assert_int_equal(judge_run(o, NULL, JUDGE_PLAIN, &synced, &t, &out, 9), 1); /* not synced at all */
    assert_non_null(strstr(out.text, "leaves exchange x1 unordered"));
    assert_int_equal(judge_run(o, "", JUDGE_FIX, &racy, &t, &out, 9), 1); /* fix's verdicts always fail */
    assert_int_equal(t.fix_unguaranteed, 1);
    assert_int_equal(judge_run(o, EXPORT(5) EXPORT(9), JUDGE_CHECK, &racy, &t, &out, 9), 0); /* check's: counted */
    assert_int_equal(t.check_fn, 1);
    assert_int_equal(judge_run(o, "{\"ev\":\"double_release\",\"xid\":5}\n", JUDGE_PLAIN, &lost, &t, &out, 9), 2);
    assert_int_equal(t.lost_deleters, 1);
    assert_int_equal(t.double_releases, 1);
    free(out.text);
    oracle_free(o);
}

#define INJECT(xid, reason)                                                                                        \
    "{\"ev\":\"inject\",\"t\":1,\"pid\":1,\"tid\":1,\"xid\":" #xid ",\"what\":\"event-wait\",\"reason\":\"" reason \
    "\"}\n"

/* A synced program's fix run: each wait is needless and fails the run when strict_waits is set,
 * but one for host-visible memory; every one is counted. */
static void fix_waits_in_a_synced_program_fail_when_strict(void **state)
{
    (void)state;
    char err[256];
    oracle *bodies = oracle_parse(g_edge_trace, ORACLE_BODY_ORDER, err, sizeof err); /* every pair guaranteed */
    assert_non_null(bodies);
    judge_program strict = {.synced = 1, .strict_waits = 1}, counted = {.synced = 1}, racy = {.strict_waits = 1};
    judge_totals t = {0};
    judge_text out = {0};
    const char *log = EXPORT(5) INJECT(5, "first use on this stream") INJECT(5, "release: host-visible memory");
    assert_int_equal(judge_run(bodies, log, JUDGE_FIX, &counted, &t, &out, 9), 0);
    assert_int_equal(t.fix_synced_injected, 2);
    assert_int_equal(t.fix_synced_host, 1);
    assert_int_equal(judge_run(bodies, log, JUDGE_FIX, &racy, &t, &out, 9), 0); /* a racy program's: counted */
    assert_int_equal(t.fix_injected, 4);
    assert_int_equal(t.fix_synced_injected, 2);
    assert_int_equal(judge_run(bodies, log, JUDGE_FIX, &strict, &t, &out, 9), 1);
    assert_non_null(strstr(out.text, "fix: 1 waits injected in the synced program's 1 exchanges (and 1 for "
                                     "host-visible memory)"));
    assert_int_equal(
        judge_run(bodies, EXPORT(5) INJECT(5, "host-visible tensor imported"), JUDGE_FIX, &strict, &t, &out, 9), 0);
    assert_int_equal(t.fix_synced_exchanges, 3);
    free(out.text);
    oracle_free(bodies);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_must_name_exactly_the_unguaranteed_exchanges),
        cmocka_unit_test(check_misses_at_the_callbacks_edges_fail_only_the_strictest),
        cmocka_unit_test(check_host_reads_ordered_after_the_import_fail_only_the_strictest),
        cmocka_unit_test(check_host_read_misses_fail_only_the_strictest),
        cmocka_unit_test(fix_plain_and_the_program_claims),
        cmocka_unit_test(fix_waits_in_a_synced_program_fail_when_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
