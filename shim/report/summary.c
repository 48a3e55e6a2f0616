/* Counters and the exit summary (see summary.h). */
#include "summary.h"

#include "../common/config.h"
#include "../common/ownfd.h"
#include "log.h"
#include "run.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

_Atomic uint64_t dls_summary_counts[DLS_COUNT_N_];
static uint64_t g_base[DLS_COUNT_N_]; /* the counts at fork, in a forked child */
static atomic_int g_emitted;
static const char *_Atomic g_cupti = "none";
static const char *_Atomic g_cupti_why = "";

static const char *const g_names[DLS_COUNT_N_] = {
    "exchanges", "exports", "imports",    "releases", "double_releases", "malformed",
    "ops",       "races",   "suppressed", "injected", "fallbacks",       "kernel_pairs",
};

uint64_t dls_summary_get(dls_counter c)
{
    return (unsigned)c < DLS_COUNT_N_ ? atomic_load_explicit(&dls_summary_counts[c], memory_order_relaxed) : 0;
}

/* What this process counted (since the fork, in a forked child). */
static uint64_t own(dls_counter c)
{
    return dls_summary_get(c) - g_base[c];
}

void dls_summary_fork_child(void)
{
    for (int i = 0; i < DLS_COUNT_N_; i++)
        g_base[i] = dls_summary_get((dls_counter)i);
}

void dls_summary_set_cupti(const char *sharing, const char *why)
{
    atomic_store_explicit(&g_cupti_why, why, memory_order_release);
    atomic_store_explicit(&g_cupti, sharing, memory_order_release);
}

const char *dls_summary_cupti(void)
{
    return atomic_load_explicit(&g_cupti, memory_order_acquire);
}

/* Formats the one-line summary of every counter ("dlsync: mode=... cupti=... exchanges=N ...",
 * no newline) into buf. */
static void summary_line(char *buf, unsigned n)
{
    const char *why = atomic_load_explicit(&g_cupti_why, memory_order_acquire);
    int k = snprintf(buf, n, "dlsync: mode=%s cupti=%s%s%s%s", dls_mode_name(dls_config_get()->mode),
                     atomic_load_explicit(&g_cupti, memory_order_acquire), why[0] ? " (" : "", why, why[0] ? ")" : "");
    for (int i = 0; i < DLS_COUNT_N_ && k >= 0 && (unsigned)k < n; i++)
        k += snprintf(buf + k, n - (unsigned)k, " %s=%llu", g_names[i], (unsigned long long)own((dls_counter)i));
}

/* The members the `summary` record and the run's `end` line share. */
static void fields(dls_rec *j, const dls_summary_coverage *cov)
{
    const dls_config *c = dls_config_get();
    dls_rec_str(j, "mode", dls_mode_name(c->mode));
    dls_rec_str(j, "cupti", atomic_load_explicit(&g_cupti, memory_order_acquire));
    const char *why = atomic_load_explicit(&g_cupti_why, memory_order_acquire);
    if (why[0])
        dls_rec_str(j, "cupti_why", why);
    for (int i = 0; i < DLS_COUNT_N_; i++)
        dls_rec_u64(j, g_names[i], own((dls_counter)i));
    dls_rec_str(j, "observer", cov->observer);
    if (c->mode == DLS_MODE_CHECK) {
        dls_rec_raw(j, "checked", cov->unchecked ? "false" : "true");
        dls_rec_str(j, "why", cov->unchecked);
    }
    dls_rec_u64(j, "dropped", dls_log_dropped());
}

static void plural(char *buf, size_t n, uint64_t v, const char *one, const char *many)
{
    snprintf(buf, n, "%llu %s", (unsigned long long)v, v == 1 ? one : many);
}

/* The line on stderr for check and fix (none to write: buf[0] = '\0'). */
static void mode_line(char *buf, size_t n, const dls_summary_coverage *cov)
{
    const dls_config *c = dls_config_get();
    char races[40], exch[48], inj[40], fb[40];
    buf[0] = '\0';
    if (c->quiet)
        return;
    plural(races, sizeof races, own(DLS_COUNT_RACES), "race", "races");
    plural(exch, sizeof exch, own(DLS_COUNT_EXCHANGES), "exchange", "exchanges");
    if (c->mode == DLS_MODE_CHECK && cov->unchecked)
        snprintf(buf, n, "dlsync: check summary: NOT CHECKED: %s; %s reported, %llu suppressed, %s seen (pid %d)\n",
                 cov->unchecked, races, (unsigned long long)own(DLS_COUNT_SUPPRESSED), exch, (int)getpid());
    else if (c->mode == DLS_MODE_CHECK) {
        char pairs[96] = "";
        if (own(DLS_COUNT_KERNEL_PAIRS))
            snprintf(pairs, sizeof pairs, ", %llu kernel pairs not listed (DLSYNC_KERNEL_PAIRS=1 lists them)",
                     (unsigned long long)own(DLS_COUNT_KERNEL_PAIRS));
        snprintf(buf, n, "dlsync: check summary: %s reported, %llu suppressed%s, %s checked; %s (pid %d)\n", races,
                 (unsigned long long)own(DLS_COUNT_SUPPRESSED), pairs, exch,
                 strcmp(cov->observer, "active") == 0 ? "observer active" : "CUDA not initialized", (int)getpid());
    } else if (c->mode == DLS_MODE_FIX && (own(DLS_COUNT_INJECTED) || own(DLS_COUNT_FALLBACKS))) {
        plural(inj, sizeof inj, own(DLS_COUNT_INJECTED), "wait", "waits");
        plural(fb, sizeof fb, own(DLS_COUNT_FALLBACKS), "fallback", "fallbacks");
        snprintf(buf, n, "dlsync: fix summary: %s injected, %s, %s (pid %d)\n", inj, fb, exch, (int)getpid());
    }
}

void dls_summary_emit(const dls_summary_coverage *cov)
{
    if (atomic_exchange(&g_emitted, 1) || dls_config_get()->mode == DLS_MODE_OFF)
        return;
    dls_rec j;
    if (dls_log_enabled()) {
        dls_log_begin(&j, "summary");
        fields(&j, cov);
        dls_log_write(&j);
    }
    if (dls_run_has_manifest()) {
        dls_run_begin(&j, "end");
        fields(&j, cov);
        dls_rec_str(&j, "log", dls_log_path());
        dls_rec_str(&j, "log_error", dls_log_problem());
        dls_run_append(&j);
    }
    char line[2048];
    mode_line(line, sizeof line, cov);
    if (line[0])
        dls_ownfd_stderr(line, strlen(line));
    if (dls_config_get()->verbose) {
        summary_line(line, sizeof line - 1);
        size_t l = strlen(line);
        line[l++] = '\n';
        dls_ownfd_stderr(line, l);
    }
}
