/* What a set of logs holds, counted for every output of `dlsync report` (the text summary, its
 * JSON form and the HTML page): the processes and their start records, exchanges per framework
 * pair and device, injected orderings, distinct races (by key, with occurrences over processes),
 * suppressed races, fallbacks, warnings, summary and log_capped records, and whether each
 * check-mode process was checked. */
#ifndef DLT_ANALYSIS_H
#define DLT_ANALYSIS_H

#include <stddef.h>

#include "logread.h"
#include "tally.h"

typedef struct {
    dlt_tally pids;       /* pid -> first record (its start record when there is one) */
    dlt_tally pairs;      /* "export -> import\tdevice" */
    dlt_tally injects;    /* what */
    dlt_tally race_pid;   /* "pid\tkey": aux = occurrences in that process */
    dlt_tally races;      /* key: count = occurrences over processes, first = first record */
    dlt_tally fixes;      /* fix id of the races: count = occurrences, aux = distinct races */
    dlt_tally fallbacks;  /* reason */
    dlt_tally warnings;   /* reason */
    dlt_tally summaries;  /* pid -> its last summary record */
    dlt_tally capped;     /* pid -> its log_capped record */
    dlt_tally suppressed; /* key of a suppressed race: count = occurrences, first = first record */
    long long exports, imports, unmatched_imports, injected, fallback_records;
    long long releases, double_releases, malformed, warning_records;
} dlt_analysis;

/* Counts what set holds into *a (free it with dlt_analysis_free). Returns 0, or -1 when memory
 * runs out (*a is then freed). `fixes` is left empty for the printer that groups races by fix. */
int dlt_analyse(const dlt_log_set *set, dlt_analysis *a);

/* Frees every table of *a. */
void dlt_analysis_free(dlt_analysis *a);

/* Whether the process of pid entry p (of a->pids) was checked: -1 it did not run in check mode,
 * 1 checked, 0 not (why, n bytes, says why). */
int dlt_check_state(const dlt_log_set *set, const dlt_analysis *a, const dlt_tally_entry *p, char *why, size_t n);

/* The fix named in a race record ("(none)" in logs written before races had one). */
const char *dlt_race_fix_id(const dlt_json_value *race);

/* The heading of the races fixed by `id` (shim/report/advice.def). */
const char *dlt_fix_title(const char *id);

#endif
