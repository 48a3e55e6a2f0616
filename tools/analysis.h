/* What a set of logs holds, counted for every output of `dlsync report` (the text summary, its
 * JSON form and the HTML page): the processes and their start records, exchanges per framework
 * pair and device, injected orderings, distinct races (by key, with occurrences over processes),
 * suppressed races, fallbacks, warnings, summary and log_capped records, and whether each
 * check-mode process was checked. */
#ifndef DLS_TOOL_ANALYSIS_H
#define DLS_TOOL_ANALYSIS_H

#include <stddef.h>

#include "logread.h"
#include "tally.h"

typedef struct {
    dls_tally pids;       /* pid -> first record (its start record when there is one) */
    dls_tally pairs;      /* "export -> import\tdevice" */
    dls_tally injects;    /* what */
    dls_tally race_pid;   /* "pid\tkey": aux = occurrences in that process */
    dls_tally races;      /* key: count = occurrences over processes, first = first record */
    dls_tally fixes;      /* fix id of the races: count = occurrences, aux = distinct races */
    dls_tally fallbacks;  /* reason */
    dls_tally warnings;   /* reason */
    dls_tally summaries;  /* pid -> its last summary record */
    dls_tally capped;     /* pid -> its log_capped record */
    dls_tally suppressed; /* key of a suppressed race: count = occurrences, first = first record */
    long long exports, imports, unmatched_imports, injected, fallback_records;
    long long releases, double_releases, malformed, warning_records;
} dls_analysis;

/* Counts what set holds into *a (free it with dls_analysis_free). Returns 0, or -1 when memory
 * runs out (*a is then freed). `fixes` is left empty for the printer that groups races by fix. */
int dls_analyse(const dls_log_set *set, dls_analysis *a);

/* Frees every table of *a. */
void dls_analysis_free(dls_analysis *a);

/* Whether the process of pid entry p (of a->pids) was checked: -1 it did not run in check mode,
 * 1 checked, 0 not (why, n bytes, says why). */
int dls_check_state(const dls_log_set *set, const dls_analysis *a, const dls_tally_entry *p, char *why, size_t n);

/* The fix named in a race record ("(none)" in logs written before races had one). */
const char *dls_race_fix_id(const dlt_json_value *race);

/* The heading of the races fixed by `id` (shim/report/advice.def). */
const char *dls_fix_title(const char *id);

#endif
