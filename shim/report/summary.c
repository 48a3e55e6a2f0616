/* Counters and the exit summary (see summary.h). */
#include "summary.h"

#include "../common/config.h"
#include "../common/ownfd.h"
#include "log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

_Atomic uint64_t dls_summary_counts[DLS_COUNT_N_];
static atomic_int g_emitted;
static const char *_Atomic g_cupti = "none";

static const char *const g_names[DLS_COUNT_N_] = {
    "exchanges", "exports", "imports", "releases", "double_releases",
    "malformed", "ops",     "races",   "injected", "fallbacks",
};

uint64_t dls_summary_get(dls_counter c)
{
    return (unsigned)c < DLS_COUNT_N_ ? atomic_load_explicit(&dls_summary_counts[c], memory_order_relaxed) : 0;
}

void dls_summary_set_cupti(const char *sharing)
{
    atomic_store_explicit(&g_cupti, sharing, memory_order_release);
}

const char *dls_summary_cupti(void)
{
    return atomic_load_explicit(&g_cupti, memory_order_acquire);
}

void dls_summary_line(char *buf, unsigned n)
{
    int k = snprintf(buf, n, "dlsync: mode=%s cupti=%s", dls_mode_name(dls_config_get()->mode),
                     atomic_load_explicit(&g_cupti, memory_order_acquire));
    for (int i = 0; i < DLS_COUNT_N_ && k >= 0 && (unsigned)k < n; i++)
        k += snprintf(buf + k, n - (unsigned)k, " %s=%llu", g_names[i],
                      (unsigned long long)dls_summary_get((dls_counter)i));
}

void dls_summary_emit(void)
{
    if (atomic_exchange(&g_emitted, 1) || dls_config_get()->mode == DLS_MODE_OFF)
        return;
    if (dls_log_enabled()) {
        dls_json j;
        dls_log_begin(&j, "summary");
        dls_json_str(&j, "cupti", atomic_load_explicit(&g_cupti, memory_order_acquire));
        for (int i = 0; i < DLS_COUNT_N_; i++)
            dls_json_u64(&j, g_names[i], dls_summary_get((dls_counter)i));
        dls_log_write(&j);
    }
    if (dls_config_get()->verbose) {
        char line[512];
        dls_summary_line(line, sizeof line - 1);
        size_t l = strlen(line);
        line[l++] = '\n';
        dls_ownfd_stderr(line, l);
    }
}
