/* The text summary `dlsync report` prints for a set of logs: processes, exchanges per
 * framework pair and device, injected syncs, races (deduplicated by key, with counts),
 * fallbacks, warnings and refused inputs. */
#ifndef DLS_TOOL_SUMMARY_H
#define DLS_TOOL_SUMMARY_H

#include <stdio.h>

#include "logread.h"

/* Counts the summary reports (what the tests and `dlsync run --fail-on-race` look at). */
typedef struct {
    long long processes;  /* distinct pids */
    long long exchanges;  /* export records plus imports without a matching export */
    long long injected;   /* inject records */
    long long races;      /* distinct race keys */
    long long race_total; /* occurrences over all keys */
    long long fallbacks;  /* fallback records */
} dls_summary_counts;

/* Computes the counts for set into *c. Returns 0, or -1 when memory runs out. */
int dls_summary_count(const dls_log_set *set, dls_summary_counts *c);

/* Prints the summary of set to out. Returns 0, or -1 when memory runs out. */
int dls_summary_print(const dls_log_set *set, FILE *out);

#endif
