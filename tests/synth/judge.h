/* judge.h: the generated-program tester's verdict on one run (tests/synth/test_generated.c runs
 * the programs): the reference's view of the run's trace (oracle.h) held against what the run
 * was meant to be and against dlsync's log (docs/log-format.md).
 *
 *   plain  a synced program has every pair guaranteed (the generator orders what it says); a
 *          racy one has at least one that is not;
 *   check  dlsync reports exactly the exchanges the reference finds unguaranteed: for each such
 *          exchange and kind, at least one race (or race_again) record of that kind; no race for
 *          an exchange whose pairs are all guaranteed (so none in a synced program). A log xid is
 *          the trace's exchange with the same data address, counted in export order. Its callbacks
 *          see host order between call bodies only: a miss that the reference in body order does
 *          not find (a call that began after another's EXIT callback, before that call returned)
 *          is told apart, and so is a host-read report of a host read that only another thread's
 *          host wait after the import orders;
 *   fix    every pair is guaranteed, dlsync's injected records and waits counted; a synced
 *          program needs none: each wait there is needless (told apart: one for host-visible
 *          memory, which dlsync cannot know the program orders);
 *   every mode: no read saw a wrong value when the program is synced, under fix, or when the
 *          reference guarantees every pair of the run; every deleter call reached the producer
 *          and no double release was reported. */
#ifndef JUDGE_H
#define JUDGE_H

#include "oracle.h"

#include <stddef.h>

typedef enum { JUDGE_PLAIN, JUDGE_CHECK, JUDGE_FIX } judge_mode;

/* dlsync's race kinds (docs/log-format.md), for the false positives' breakdown; the last counts
 * races of an exchange the trace does not note. */
#define JUDGE_DLSYNC_KINDS 11
extern const char *const judge_dlsync_kind[JUDGE_DLSYNC_KINDS];

/* Counts over every run judged (added to by judge_run). */
typedef struct {
    long runs, pairs, unguaranteed; /* pairs judged in every run; plain runs' unguaranteed */
    long check_exchanges, check_racy_exchanges;
    long check_fp;          /* exchanges all guaranteed with a race record */
    long check_fp_import;   /* of those, host-read records only, of the handover of a host read whose
                               pages dlsync could not watch and that only other threads' waits after the
                               import order (oracle_pair_after_import) */
    long check_fp_pages;    /* of those, host-read records only, of a host access caught on the tensor's
                               protected pages (the reference orders it; counted, failed at strict 2 only:
                               a rare disagreement whose cause is not known yet) */
    long check_fn;          /* (exchange, kind) unguaranteed without a race record of it */
    long check_fn_exchange; /* of those, in exchanges with no race record at all */
    long check_fn_window;   /* of those, whose unguaranteed pairs are all windows (oracle_pair_window) */
    long check_fn_seen;     /* of those, a kind body order finds unguaranteed too (judge_program.bodies) */
    long check_fn_host;     /* of those, host reads (counted, failed at strict 2 only: a host access is
                               caught a page at a time, and a rare one is missed, cause not known yet) */
    long check_other_kind;  /* race records of a kind the reference does not find in that racy exchange */
    long check_fp_kind[JUDGE_DLSYNC_KINDS]; /* false positives by the kind of their first race record */
    long fix_pairs, fix_unguaranteed, fix_exchanges, fix_injected;
    long fix_synced_exchanges; /* fix runs of synced programs: their exchanges */
    long fix_synced_injected;  /* and the waits injected there, which the program did not need */
    long fix_synced_host;      /* of those, for host-visible memory, whose host accesses dlsync cannot see */
    long fix_window;           /* unguaranteed pairs that are windows (oracle_pair_window) */
    long fix_legacy;           /* others ordered in the run only through a legacy-stream op (oracle_pair_actual) */
    long wrong_reads;          /* reads that saw a wrong value where they must not */
    long lost_deleters;        /* deleter calls that did not reach the producer */
    long double_releases;      /* double_release records (each a false report) */
    long failures;
} judge_totals;

/* A growing text of failure descriptions. */
typedef struct {
    char *text;
    size_t len, cap;
} judge_text;

/* Appends printf-style text to t. */
void judge_printf(judge_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What the program itself said about its run. */
typedef struct {
    int synced;
    int wrong_reads;   /* reads that saw a value other than their exchange's */
    int lost_deleters; /* deleter calls that did not reach the producer */
    /* Which of the reference's verdicts on check fail the run (fix's always do): 0 none (counted
     * only), 1 false positives and the misses body order finds too (bodies below: what check's
     * callbacks could see), but not host-read reports of the handover of a host read whose pages
     * dlsync could not watch and that only other threads' waits after the import order (what a
     * tool blind to that host load cannot know), nor a report of only a host access caught on
     * watched pages that the reference orders (judge_totals.check_fp_pages), nor a host read
     * missed (check_fn_host), 2 every one. */
    int strict_check;
    /* 1: a synced program's fix run fails on each wait dlsync injected, but one for host-visible
     * memory (its inject reason names it: dlsync cannot see the host's loads and stores, nor so
     * the host wait a program makes after an import); 0: they are counted only. */
    int strict_waits;
    const oracle *bodies; /* check: the same trace judged with body order, or NULL (every miss is seen) */
} judge_program;

/* Judges one run: the reference o of its trace, its log's text (NULL for a plain run), its
 * mode, and what the program said (every deleter call must reach the producer, and no log may
 * report a double release: the programs release each tensor once). Adds to
 * `tot`; appends one paragraph per failure to `out` (each names the pair: operations, streams,
 * threads, kinds), at most `limit` of them. Returns the number of failures. */
int judge_run(const oracle *o, const char *log, judge_mode mode, const judge_program *prog, judge_totals *tot,
              judge_text *out, int limit);

#endif
