/* The summary `dlsync report` prints for a set of logs: first, the check-mode processes that
 * could not be checked (their summary record says so, or they have none); then processes,
 * exchanges per framework pair and device, injected syncs, races (deduplicated by key, with
 * counts, grouped by fix, with both stacks), suppressed races with their rules, fallbacks, warnings, refused inputs
 * and the logs that reached their size limit. Every value from a log is printed escaped
 * (textesc.h). The same summary as one JSON object for --json. */
#ifndef DLT_SUMMARY_H
#define DLT_SUMMARY_H

#include <stdio.h>

#include "logread.h"
#include "symbolize.h"

/* Counts the summary reports (what the tests and `dlsync run --fail-on-race` look at). */
typedef struct {
    long long processes;       /* distinct pids */
    long long exchanges;       /* export records plus imports without a matching export */
    long long injected;        /* inject records */
    long long races;           /* distinct race keys */
    long long race_total;      /* occurrences over all keys */
    long long fallbacks;       /* fallback records */
    long long suppressed;      /* distinct suppressed race keys */
    long long check_processes; /* processes that ran in check mode */
    long long not_checked;     /* of those, the ones that could not be checked */
} dlt_summary_counts;

/* Computes the counts for set into *c. Returns 0, or -1 when memory runs out. */
int dlt_summary_count(const dlt_log_set *set, dlt_summary_counts *c);

/* Prints the summary of set to out, each race with both sides' stacks (stacks.h: the Python
 * frames first, then the native ones, those sym resolved with their source lines; sym NULL: as
 * logged). Returns 0, or -1 when memory runs out. */
int dlt_summary_print(const dlt_log_set *set, const dlt_symbolizer *sym, FILE *out);

/* Prints the summary of set to out as one JSON object on one line: the counts above, "checked"
 * (true, false, or null without a check-mode process), "not_checked" ([{"pid", "exe", "why"}]),
 * "capped" ([{"pid", "limit"}]) and "race_reports", the distinct races, the most frequent first:
 * [{"key", "kind", "count", "pid", "xid", "framework", "symbol", "producer", "consumer", "why",
 * "fix": {"id", "text"}}], each side {"op", "stream" (as logged), "stack": [frames as shown, in
 * the log's order, with sym's source lines]}. Returns 0, or -1 when memory runs out. */
int dlt_summary_print_json(const dlt_log_set *set, const dlt_symbolizer *sym, FILE *out);

#endif
