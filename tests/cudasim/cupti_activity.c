/* cupti_activity.c: the simulated libcupti.so.13, the part of the activity API a Kineto-shaped
 * client uses: cuptiActivityEnable / cuptiActivityDisable of CUPTI_ACTIVITY_KIND_KERNEL,
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL and CUPTI_ACTIVITY_KIND_MEMCPY (any other kind:
 * CUPTI_ERROR_NOT_SUPPORTED), cuptiActivityRegisterCallbacks, cuptiActivityFlushAll and
 * cuptiActivityGetNextRecord. It needs no subscription, as in CUPTI (the activity API is
 * independent of the callback API's subscribers).
 *
 * A record is written at the EXIT of each driver call that launches a kernel (cuLaunchKernel,
 * cuLaunchKernelEx, cuLaunchCooperativeKernel and their per-thread forms: a CUpti_ActivityKernel10
 * of kind CONCURRENT_KERNEL when that kind is enabled, else KERNEL) or copies memory (cuMemcpy*: a
 * CUpti_ActivityMemcpy6), carrying the call's correlation id, the kernel's name and host
 * timestamps; the runtime's calls write theirs through the driver calls beneath them. Records are
 * appended to the client's buffer (its request callback, called on the recording thread with no
 * lock held); a full buffer, and every buffer at cuptiActivityFlushAll, is handed back through its
 * completion callback. Records that find no buffer (no callbacks registered, or a NULL buffer) are
 * dropped. Not modelled: the other kinds, device timestamps, the worker thread's periodic
 * flushes, per-context flushes, dropped-record counts, attributes. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <cupti_activity.h>

#include "cupti_sim.h"

#define RECORD_ALIGN 8u

#define KERNEL 1u
#define CONCURRENT 2u
#define MEMCPY 4u
atomic_uint cudasim_cupti_activity_kinds; /* the enabled kinds, a bit each */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under g_lock: the client's callbacks and the buffer being filled. */
static CUpti_BuffersCallbackRequestFunc g_request;
static CUpti_BuffersCallbackCompleteFunc g_complete;
static uint8_t *g_buf;
static size_t g_size, g_used;

/* The bit of an activity kind the simulator records, 0 for the others. */
static unsigned kind_bit(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
        return KERNEL;
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return CONCURRENT;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return MEMCPY;
    default:
        return 0;
    }
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    unsigned bit = kind_bit(kind);
    if (!bit)
        return CUPTI_ERROR_NOT_SUPPORTED;
    atomic_fetch_or(&cudasim_cupti_activity_kinds, bit);
    cudasim_cupti_install_hook();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    unsigned bit = kind_bit(kind);
    if (!bit)
        return CUPTI_ERROR_NOT_SUPPORTED;
    atomic_fetch_and(&cudasim_cupti_activity_kinds, ~bit);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    if (!funcBufferRequested || !funcBufferCompleted)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&g_lock);
    g_request = funcBufferRequested;
    g_complete = funcBufferCompleted;
    pthread_mutex_unlock(&g_lock);
    return CUPTI_SUCCESS;
}

/* The size a record of `kind` takes in a buffer, or 0 for a kind this CUPTI does not write. */
static size_t record_size(CUpti_ActivityKind kind)
{
    size_t n = 0;
    if (kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        n = sizeof(CUpti_ActivityKernel10);
    else if (kind == CUPTI_ACTIVITY_KIND_MEMCPY)
        n = sizeof(CUpti_ActivityMemcpy6);
    return (n + RECORD_ALIGN - 1) / RECORD_ALIGN * RECORD_ALIGN;
}

/* Takes the buffer being filled (under g_lock); *size and *used get its size and valid bytes. */
static uint8_t *take_buffer(size_t *size, size_t *used)
{
    uint8_t *b = g_buf;
    *size = g_size;
    *used = g_used;
    g_buf = NULL;
    g_size = g_used = 0;
    return b;
}

/* Appends one record (its first field is its kind). The client's callbacks run unlocked. */
static void append(const void *rec, CUpti_ActivityKind kind)
{
    size_t need = record_size(kind);
    for (int tries = 0; tries < 2; tries++) {
        pthread_mutex_lock(&g_lock);
        if (g_buf && g_size - g_used >= need) {
            memcpy(g_buf + g_used, rec, need);
            g_used += need;
            pthread_mutex_unlock(&g_lock);
            return;
        }
        size_t size, used;
        uint8_t *full = take_buffer(&size, &used);
        CUpti_BuffersCallbackRequestFunc request = g_request;
        CUpti_BuffersCallbackCompleteFunc complete = g_complete;
        pthread_mutex_unlock(&g_lock);
        if (full && complete)
            complete(NULL, 0, full, size, used);
        if (!request)
            return;
        uint8_t *b = NULL;
        size_t max_records = 0;
        size = 0;
        request(&b, &size, &max_records);
        if (!b || size < need || (uintptr_t)b % RECORD_ALIGN)
            return; /* dropped, as CUPTI drops records without a usable buffer */
        pthread_mutex_lock(&g_lock);
        int installed = !g_buf;
        if (installed) {
            g_buf = b;
            g_size = size;
        }
        pthread_mutex_unlock(&g_lock);
        if (!installed && complete)
            complete(NULL, 0, b, size, 0);
    }
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

void cudasim_cupti_activity_note(CUpti_CallbackDomain domain, const void *cbdata)
{
    unsigned kinds = atomic_load_explicit(&cudasim_cupti_activity_kinds, memory_order_relaxed);
    int kernel = (kinds & KERNEL) != 0, concurrent = (kinds & CONCURRENT) != 0, memcpy_on = (kinds & MEMCPY) != 0;
    if (!kinds || domain != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const CUpti_CallbackData *d = cbdata;
    if (d->callbackSite != CUPTI_API_EXIT)
        return;
    const char *fn = d->functionName;
    if ((kernel || concurrent) && (starts_with(fn, "cuLaunchKernel") || starts_with(fn, "cuLaunchCooperativeKernel"))) {
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
        k.correlationId = d->correlationId;
        k.name = d->symbolName;
        k.start = k.end = now_ns();
        append(&k, k.kind);
    } else if (memcpy_on && starts_with(fn, "cuMemcpy")) {
        CUpti_ActivityMemcpy6 m;
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.correlationId = d->correlationId;
        m.start = m.end = now_ns();
        m.copyCount = 1;
        append(&m, m.kind);
    }
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&g_lock);
    size_t size, used;
    uint8_t *b = take_buffer(&size, &used);
    CUpti_BuffersCallbackCompleteFunc complete = g_complete;
    pthread_mutex_unlock(&g_lock);
    if (b && complete)
        complete(NULL, 0, b, size, used);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    size_t at = 0;
    if (*record) {
        size_t n = record_size((*record)->kind);
        if (!n)
            return CUPTI_ERROR_INVALID_KIND;
        at = (size_t)((uint8_t *)*record - buffer) + n;
    }
    if (at >= validBufferSizeBytes) {
        *record = NULL;
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    *record = (CUpti_Activity *)(buffer + at);
    return CUPTI_SUCCESS;
}

void cudasim_cupti_activity_finalize(void)
{
    atomic_store(&cudasim_cupti_activity_kinds, 0);
    pthread_mutex_lock(&g_lock);
    size_t size, used;
    take_buffer(&size, &used); /* the client's memory, its records lost unflushed */
    g_request = NULL;
    g_complete = NULL;
    pthread_mutex_unlock(&g_lock);
}
