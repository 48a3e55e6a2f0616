/* drv_call.c: how every simulated API call is reported, counted and made to fail.
 *
 * Each driver and runtime function goes through cudasim_call_enter / cudasim_call_exit: the
 * call is counted by name, a pending forced error (cudasim_fail_next) is taken, and the
 * installed hook (libcupti.so.13's) receives a CUpti_CallbackData at ENTER and EXIT with a
 * process-wide correlation id and the correlationData slot shared by both. Resource events
 * (stream created / destroy starting, context created) go to the same hook. With jitter on
 * (cudasim_set_jitter, CUDASIM_JITTER_US), a call pauses for a random moment after its ENTER
 * callback and before its EXIT callback, so calls of threads running at the same time overlap
 * in every order; cudasim_pause_next_exit holds one call there until another thread resumes it.
 * With a seed (CUDASIM_SEED, cudasim_set_seed), each thread's pauses are a function of the seed
 * and of the thread's place in the order of first calls, so a replay draws them again.
 * Not modelled: activity records, the synchronize and NVTX domains. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cudasim.h"
#include "sim.h"
#include "trace.h"

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

/* Jitter: the longest pause in microseconds (0: none); -1 until CUDASIM_JITTER_US is read. */
static atomic_int g_jitter = -1;

void cudasim_set_jitter(unsigned max_usec)
{
    atomic_store(&g_jitter, (int)(max_usec > 100000 ? 100000 : max_usec));
}

/* The seed (g_seeded 0: none, each thread seeds its generator with its id). Each thread takes a
 * number at its first call of an epoch (g_epoch, from 1, moved by cudasim_set_seed). */
static atomic_ullong g_seed;
static atomic_int g_seeded;
static atomic_uint g_epoch = 1;
static atomic_uint g_next_ordinal;
static pthread_once_t g_seed_once = PTHREAD_ONCE_INIT;

/* The calling thread's generator: its epoch, its state, its last draw. */
static __thread unsigned t_epoch;
static __thread uint64_t t_x;
static __thread unsigned t_last_draw;

static void read_seed(void)
{
    const char *v = getenv("CUDASIM_SEED");
    if (v && *v) {
        atomic_store(&g_seed, strtoull(v, NULL, 0));
        atomic_store(&g_seeded, 1);
    }
}

void cudasim_set_seed(unsigned long long seed)
{
    pthread_once(&g_seed_once, read_seed); /* the environment cannot override it later */
    atomic_store(&g_seed, seed);
    atomic_store(&g_seeded, 1);
    atomic_store(&g_next_ordinal, 0);
    atomic_fetch_add(&g_epoch, 1);
}

unsigned cudasim_jitter_last_draw(void)
{
    return t_last_draw;
}

/* splitmix64's finalizer: spreads nearby seeds apart. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* At a call's start: a thread's first call (of the epoch) seeds its generator, from the seed and
 * the thread's number in the order of first calls, or without a seed from its id. */
static void seed_thread(void)
{
    unsigned epoch = atomic_load_explicit(&g_epoch, memory_order_relaxed);
    if (t_epoch == epoch)
        return;
    pthread_once(&g_seed_once, read_seed);
    t_epoch = epoch;
    t_last_draw = 0;
    if (atomic_load(&g_seeded)) {
        unsigned ordinal = atomic_fetch_add(&g_next_ordinal, 1) + 1;
        t_x = mix(atomic_load(&g_seed) + ordinal * 0x9e3779b97f4a7c15ull);
    } else {
        t_x = (uint64_t)syscall(SYS_gettid) * 0x9e3779b97f4a7c15ull;
    }
    t_x |= 1; /* xorshift needs a state other than 0 */
}

/* A random pause of the calling thread: half the time none, else a yield or a sleep of up to the
 * jitter's bound. Each thread draws from its own generator (seed_thread). */
static void jitter(void)
{
    int max = atomic_load_explicit(&g_jitter, memory_order_relaxed);
    if (max < 0) {
        const char *v = getenv("CUDASIM_JITTER_US");
        max = v ? atoi(v) : 0;
        cudasim_set_jitter(max > 0 ? (unsigned)max : 0);
        max = atomic_load(&g_jitter);
    }
    if (max == 0)
        return;
    t_x ^= t_x << 13;
    t_x ^= t_x >> 7;
    t_x ^= t_x << 17;
    unsigned r = (unsigned)(t_x >> 32);
    t_last_draw = r;
    if (r % 2)
        return;
    if (r % 4 == 0) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, (long)((r >> 8) % (unsigned)max + 1) * 1000};
    nanosleep(&ts, NULL);
}

/* Paused calls (cudasim_pause_next_exit): the threads waiting before their EXIT callback. */
#define PAUSED 16
static pthread_mutex_t g_pause_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_pause_cv = PTHREAD_COND_INITIALIZER;
static pid_t g_paused[PAUSED];
static unsigned g_npaused;
static __thread const char *t_pause_next; /* the function whose next call pauses */

void cudasim_pause_next_exit(const char *function_name)
{
    t_pause_next = function_name;
}

static int paused_at(pid_t tid)
{
    for (unsigned i = 0; i < g_npaused; i++)
        if (g_paused[i] == tid)
            return (int)i;
    return -1;
}

int cudasim_exit_paused(pid_t tid)
{
    pthread_mutex_lock(&g_pause_lock);
    int paused = paused_at(tid) >= 0;
    pthread_mutex_unlock(&g_pause_lock);
    return paused;
}

void cudasim_resume_exit(pid_t tid)
{
    pthread_mutex_lock(&g_pause_lock);
    int i = paused_at(tid);
    if (i >= 0) {
        g_paused[i] = g_paused[--g_npaused];
        pthread_cond_broadcast(&g_pause_cv);
    }
    pthread_mutex_unlock(&g_pause_lock);
}

/* A call of `name` by a thread that asked for it waits here until resumed. */
static void pause_if_asked(const char *name)
{
    if (!t_pause_next || !name_matches(name, t_pause_next))
        return;
    t_pause_next = NULL;
    pid_t me = (pid_t)syscall(SYS_gettid);
    pthread_mutex_lock(&g_pause_lock);
    if (g_npaused < PAUSED) {
        g_paused[g_npaused++] = me;
        while (paused_at(me) >= 0)
            pthread_cond_wait(&g_pause_cv, &g_pause_lock);
    }
    pthread_mutex_unlock(&g_pause_lock);
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
    uint32_t id = atomic_fetch_add(&g_correlation, 1) + 1;
    uint32_t outer = SIM_TRACING() ? dls_sim_trace_call_begin(id, name) : 0;
    seed_thread();
    memset(c, 0, sizeof *c);
    c->outer_call = outer;
    c->domain = domain;
    c->cbid = cbid;
    c->data.callbackSite = CUPTI_API_ENTER;
    c->data.functionName = name;
    c->data.functionParams = params;
    c->data.symbolName = symbol;
    c->data.correlationData = &c->correlation_data;
    c->data.correlationId = id;
    dls_sim_fill_context(&c->data);

    pthread_mutex_lock(&g_count_lock);
    count_call(name);
    int err = take_failure(name);
    pthread_mutex_unlock(&g_count_lock);

    cudasim_hook_fn hook = atomic_load(&g_hook);
    if (hook)
        hook(domain, cbid, &c->data);
    jitter();
    if (SIM_TRACING())
        dls_sim_trace_body(id, 0);
    return err;
}

void cudasim_call_exit(cudasim_call *c, void *retval)
{
    if (SIM_TRACING())
        dls_sim_trace_body(c->data.correlationId, 1);
    jitter();
    pause_if_asked(c->data.functionName);
    c->data.callbackSite = CUPTI_API_EXIT;
    c->data.functionReturnValue = retval;
    dls_sim_fill_context(&c->data);
    cudasim_hook_fn hook = atomic_load(&g_hook);
    if (hook)
        hook(c->domain, c->cbid, &c->data);
    if (SIM_TRACING())
        dls_sim_trace_call_end(c->data.correlationId, c->outer_call);
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
