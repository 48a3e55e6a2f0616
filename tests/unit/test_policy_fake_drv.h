/* Unit tests of the policy: the fake driver table the shim's own driver calls go to (its marks,
 * fix's waits and host waits). Every call succeeds except cuEventQuery, which answers g_query;
 * calls are counted, and the latest record and wait are kept with their streams. Each test file
 * that includes it has its own copy. */
#ifndef DLS_TEST_POLICY_FAKE_DRV_H
#define DLS_TEST_POLICY_FAKE_DRV_H

#include "cuda/drv.h"

#include <stdatomic.h>
#include <stddef.h>

static CUresult g_query; /* what cuEventQuery answers */
static _Atomic int g_records, g_queries, g_waits, g_creates, g_host_waits;
/* The event of the latest record and of the latest wait, and their streams (threads record at once). */
static _Atomic(CUevent) g_recorded, g_waited;
static _Atomic(CUstream) g_recorded_on, g_waiting;
static CUevent g_watched; /* records of this event are counted in g_watched_records */
static _Atomic int g_watched_records;
static void (*g_during_query)(void); /* run inside cuEventQuery (the shim holds no lock then) */
typedef void (*fake_hook)(void);
/* Run inside cuStreamWaitEvent | cuEventRecord, once, by whichever thread calls it first (the
 * shim holds no lock then). */
static _Atomic(fake_hook) g_during_wait, g_during_record;

static CUresult fake_ctx_get_current(CUcontext *c)
{
    *c = (CUcontext)0xc0;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_push_current(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_pop_current(CUcontext *c)
{
    if (c)
        *c = (CUcontext)0xc1;
    return CUDA_SUCCESS;
}

static CUresult fake_event_create(CUevent *e, unsigned flags)
{
    (void)flags;
    static char events[64];
    static _Atomic unsigned n;
    *e = (CUevent)&events[n++ % sizeof events];
    g_creates++;
    return CUDA_SUCCESS;
}

static CUresult fake_event_record(CUevent e, CUstream s)
{
    g_records++;
    g_recorded = e;
    g_recorded_on = s;
    if (e == g_watched)
        g_watched_records++;
    fake_hook during = atomic_exchange(&g_during_record, NULL);
    if (during)
        during();
    return CUDA_SUCCESS;
}

static CUresult fake_event_query(CUevent e)
{
    (void)e;
    g_queries++;
    if (g_during_query)
        g_during_query();
    return g_query;
}

static CUresult fake_event_synchronize(CUevent e)
{
    (void)e;
    g_host_waits++;
    return CUDA_SUCCESS;
}

static CUresult fake_stream_wait_event(CUstream s, CUevent e, unsigned flags)
{
    (void)flags;
    g_waits++;
    g_waited = e;
    g_waiting = s;
    fake_hook during = atomic_exchange(&g_during_wait, NULL);
    if (during)
        during();
    return CUDA_SUCCESS;
}

static const dls_drv_table g_fake_drv = {
    .ctx_get_current = fake_ctx_get_current,
    .ctx_push_current = fake_ctx_push_current,
    .ctx_pop_current = fake_ctx_pop_current,
    .event_create = fake_event_create,
    .event_record = fake_event_record,
    .event_query = fake_event_query,
    .event_synchronize = fake_event_synchronize,
    .stream_wait_event = fake_stream_wait_event,
};

/* Installs the fake driver with its counters at zero, nothing watched or run inside a call, and
 * every query answering CUDA_SUCCESS. */
static inline void fake_drv_install(void)
{
    g_query = CUDA_SUCCESS;
    g_records = g_queries = g_waits = g_creates = g_host_waits = g_watched_records = 0;
    g_recorded = g_waited = NULL;
    g_recorded_on = g_waiting = NULL;
    g_watched = NULL;
    g_during_query = NULL;
    g_during_wait = g_during_record = NULL;
    dls_drv_set_table_for_tests(&g_fake_drv);
}

/* Gives the shim its real driver table back. */
static inline void fake_drv_remove(void)
{
    dls_drv_set_table_for_tests(NULL);
}

#endif
