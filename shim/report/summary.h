/* Process-wide counters and the summary written at exit.
 *
 * Every part of the shim counts what it did here (exchanges seen, ops observed, races reported
 * and suppressed, injected orderings, fallbacks). When the process ends (exit, or _exit: see the
 * start-up file) the totals become the log's `summary` record, the `end` line of the run's
 * manifest (report/run.h) and, on stderr:
 *   - in check, unless DLSYNC_QUIET=1, one line like a sanitizer's error summary:
 *       dlsync: check summary: 1 race reported, 0 suppressed, 2 exchanges checked; observer active (pid 42)
 *     (with ", N kernel pairs not listed (DLSYNC_KERNEL_PAIRS=1 lists them)" after "suppressed" when
 *     check counted kernel-pair races it did not list)
 *     or, for a process that could not be checked:
 *       dlsync: check summary: NOT CHECKED: <why>; 0 races reported, 0 suppressed, 2 exchanges seen (pid 42)
 *   - in fix, unless DLSYNC_QUIET=1, when it injected an ordering or fell back:
 *       dlsync: fix summary: 3 waits injected, 0 fallbacks, 2 exchanges (pid 42)
 *   - with DLSYNC_VERBOSE=1, the line of every counter.
 * A forked child counts from the fork on. Counting is a relaxed atomic add, inline. */
#ifndef DLS_SUMMARY_H
#define DLS_SUMMARY_H

#include "../common/export.h"

#include <stdatomic.h>
#include <stdint.h>

typedef enum {
    DLS_COUNT_EXCHANGES = 0, /* distinct exchange ids */
    DLS_COUNT_EXPORTS,
    DLS_COUNT_IMPORTS,
    DLS_COUNT_RELEASES,
    DLS_COUNT_DOUBLE_RELEASES,
    DLS_COUNT_MALFORMED,
    DLS_COUNT_OPS,        /* CUDA operations observed */
    DLS_COUNT_RACES,      /* distinct races reported */
    DLS_COUNT_SUPPRESSED, /* distinct races a suppression rule matched */
    DLS_COUNT_INJECTED,
    DLS_COUNT_FALLBACKS,
    DLS_COUNT_KERNEL_PAIRS, /* distinct kernel pairs check found and did not list (DLSYNC_KERNEL_PAIRS) */
    DLS_COUNT_N_
} dls_counter;

/* The counters (written through the functions below only). */
extern _Atomic uint64_t dls_summary_counts[DLS_COUNT_N_] DLS_HIDDEN;

/* Adds n to counter c (thread-safe; inline, one atomic add). */
static inline void dls_summary_add(dls_counter c, uint64_t n)
{
    if ((unsigned)c < DLS_COUNT_N_)
        atomic_fetch_add_explicit(&dls_summary_counts[c], n, memory_order_relaxed);
}

/* Counts one more exchange and returns its id: the number of exchanges counted so far, so ids
 * are unique, from 1, and the count of exchanges is that of the ids handed out. */
static inline uint64_t dls_summary_new_exchange(void)
{
    return atomic_fetch_add_explicit(&dls_summary_counts[DLS_COUNT_EXCHANGES], 1, memory_order_relaxed) + 1;
}

/* Current value of counter c. */
uint64_t dls_summary_get(dls_counter c);

/* Records how CUDA is observed, for the summary's `cupti` field: "shared" (CUPTI's
 * multi-subscriber mode), "exclusive" (CUPTI's only subscriber); "none" (not observing) until set;
 * and why (`cupti_why`, and in parentheses after it on the verbose line). Both strings must stay
 * valid for the life of the process. */
void dls_summary_set_cupti(const char *sharing, const char *why);

/* The sharing recorded by dls_summary_set_cupti ("none" until set). */
const char *dls_summary_cupti(void);

/* How the process was observed, which the start-up file works out at exit (report/ does not
 * know cuda/). */
typedef struct {
    const char *observer;  /* "active" (CUPTI callbacks delivered), "failed" (it could not start),
                              "unused" (CUDA never started it) */
    const char *unchecked; /* in check: why the process could not be checked; NULL when it was */
} dls_summary_coverage;

/* Writes the summary: the `summary` record when the log is enabled, the run's `end` line, and
 * the lines on stderr above (nothing with DLSYNC_MODE=off). Called at exit by the shim's start-up
 * file; only the first call writes anything. */
void dls_summary_emit(const dls_summary_coverage *cov);

/* In a forked child: its summary counts from now on. */
void dls_summary_fork_child(void);

#endif
