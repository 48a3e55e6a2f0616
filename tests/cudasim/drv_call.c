/* drv_call.c: how every simulated API call is reported, counted and made to fail.
 *
 * Each driver and runtime function goes through cudasim_call_enter / cudasim_call_exit: the
 * call is counted by name, a pending forced error (cudasim_fail_next) is taken, and the
 * installed hook (libcupti.so.13's) receives a CUpti_CallbackData at ENTER and EXIT with a
 * process-wide correlation id and the correlationData slot shared by both. Resource events
 * (stream created / destroy starting, context created) go to the same hook.
 * Not modelled: activity records, the synchronize and NVTX domains. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cudasim.h"
#include "sim.h"

static _Atomic(cudasim_hook_fn) g_hook;
static atomic_uint g_correlation;

/* Call counts: a fixed open-addressed table of (name, count) keyed by the address of the
 * reported function name (a string constant per function: a lookup is one hash probe, not a
 * string comparison per known name); queries add up the entries whose names match. */
#define COUNT_SLOTS 1024
static struct {
    const char *name;
    unsigned long count;
} g_counts[COUNT_SLOTS];

/* Pending forced failures, consumed in order. */
typedef struct pending_fail {
    struct pending_fail *next;
    char *name;
    int err;
} pending_fail;
static pending_fail *g_fails;
static pthread_mutex_t g_count_lock = PTHREAD_MUTEX_INITIALIZER;

/* "cuMemAlloc" names cuMemAlloc_v2; "cuStreamQuery" names cuStreamQuery_ptsz; "cudaMemcpy"
 * names cudaMemcpy_v3020 and cudaMemcpy_ptds_v7000. */
static int name_matches(const char *api, const char *query)
{
    size_t n = strlen(query);
    if (strncmp(api, query, n) != 0)
        return 0;
    const char *rest = api + n;
    return *rest == '\0' || strncmp(rest, "_v", 2) == 0 || strncmp(rest, "_pt", 3) == 0;
}

static void count_call(const char *name)
{
    size_t i = (size_t)(((uintptr_t)name * 0x9e3779b97f4a7c15ull) >> 40) & (COUNT_SLOTS - 1);
    for (unsigned probes = 0; probes < COUNT_SLOTS; probes++, i = (i + 1) & (COUNT_SLOTS - 1)) {
        if (g_counts[i].name == name) {
            g_counts[i].count++;
            return;
        }
        if (!g_counts[i].name) {
            g_counts[i].name = name;
            g_counts[i].count = 1;
            return;
        }
    }
}

static int take_failure(const char *name)
{
    for (pending_fail **pp = &g_fails; *pp; pp = &(*pp)->next) {
        if (name_matches(name, (*pp)->name)) {
            pending_fail *f = *pp;
            int err = f->err;
            *pp = f->next;
            free(f->name);
            free(f);
            return err;
        }
    }
    return 0;
}

void cudasim_set_callback_hook(cudasim_hook_fn hook)
{
    atomic_store(&g_hook, hook);
}

void dls_sim_fill_context(CUpti_CallbackData *d)
{
    struct CUctx_st *ctx = dls_sim_current_ctx();
    d->context = ctx;
    d->contextUid = ctx ? ctx->uid : 0;
}

int cudasim_call_enter(cudasim_call *c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char *name,
                       const void *params, const char *symbol)
{
    memset(c, 0, sizeof *c);
    c->domain = domain;
    c->cbid = cbid;
    c->data.callbackSite = CUPTI_API_ENTER;
    c->data.functionName = name;
    c->data.functionParams = params;
    c->data.symbolName = symbol;
    c->data.correlationData = &c->correlation_data;
    c->data.correlationId = atomic_fetch_add(&g_correlation, 1) + 1;
    dls_sim_fill_context(&c->data);

    pthread_mutex_lock(&g_count_lock);
    count_call(name);
    int err = take_failure(name);
    pthread_mutex_unlock(&g_count_lock);

    cudasim_hook_fn hook = atomic_load(&g_hook);
    if (hook)
        hook(domain, cbid, &c->data);
    return err;
}

void cudasim_call_exit(cudasim_call *c, void *retval)
{
    c->data.callbackSite = CUPTI_API_EXIT;
    c->data.functionReturnValue = retval;
    dls_sim_fill_context(&c->data);
    cudasim_hook_fn hook = atomic_load(&g_hook);
    if (hook)
        hook(c->domain, c->cbid, &c->data);
}

void cudasim_report_resource(CUpti_CallbackId cbid, CUcontext ctx, CUstream stream)
{
    CUpti_ResourceData d = {.context = ctx, .resourceHandle.stream = stream};
    cudasim_hook_fn hook = atomic_load(&g_hook);
    if (hook)
        hook(CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
}

void cudasim_fail_next(const char *function_name, CUresult err)
{
    pending_fail *f = calloc(1, sizeof *f);
    if (!f || !(f->name = strdup(function_name)))
        abort();
    f->err = (int)err;
    pthread_mutex_lock(&g_count_lock);
    pending_fail **pp = &g_fails;
    while (*pp)
        pp = &(*pp)->next;
    *pp = f;
    pthread_mutex_unlock(&g_count_lock);
}

unsigned long cudasim_call_count(const char *function_name)
{
    unsigned long total = 0;
    pthread_mutex_lock(&g_count_lock);
    for (unsigned i = 0; i < COUNT_SLOTS; i++)
        if (g_counts[i].name && name_matches(g_counts[i].name, function_name))
            total += g_counts[i].count;
    pthread_mutex_unlock(&g_count_lock);
    return total;
}

void cudasim_reset_counts(void)
{
    pthread_mutex_lock(&g_count_lock);
    for (unsigned i = 0; i < COUNT_SLOTS; i++)
        g_counts[i].count = 0;
    while (g_fails) {
        pending_fail *f = g_fails;
        g_fails = f->next;
        free(f->name);
        free(f);
    }
    pthread_mutex_unlock(&g_count_lock);
}
