/* The shim's own events (see events.h): a pool of free events per context, records made with the
 * stream's context current, and the events fix records right after consumer accesses. */
#include "events.h"

#include "../common/mutex.h"
#include "../cuda/drv.h"
#include "../report/warn.h"
#include "complete.h"
#include "stream_table.h"

#include <sched.h>
#include <stdlib.h>

#define POOL 64 /* free events kept; more are destroyed by the next pool_get */

/* Free events, each created in the context of stream `of` with CU_EVENT_DISABLE_TIMING, keyed
 * by the context's handle and id: a context destroyed (cuCtxDestroy, cudaDeviceReset) takes its
 * events with it, and a new one may get the same handle. The pool's lock is a leaf below the
 * policy lock: after events return here under it, so pool_put never calls the driver; the array
 * grows instead, and pool_get (never under the policy lock) destroys what exceeds POOL. */
static dls_mutex g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct {
    CUevent ev;
    uintptr_t ctx;
    uint64_t ctx_id;
} pooled;
static pooled *g_pool;
static unsigned g_npool, g_cap;

/* A free event of the context of stream w, the one returned last (created when the pool has none;
 * the caller has entered that context and holds no dlsync lock). Events of an earlier context at the same handle
 * are forgotten, never touched again; while the pool holds more than POOL, a few more events of
 * w's context are taken out and destroyed. NULL when creation failed (warned once). */
static CUevent event_get(const dls_pol_stream *w)
{
    CUevent e = NULL, extra[8];
    unsigned nextra = 0;
    dls_mutex_lock(&g_pool_lock);
    for (unsigned i = g_npool; i-- > 0 && (!e || (g_npool > POOL && nextra < sizeof extra / sizeof *extra));) {
        if (g_pool[i].ctx != w->ctx)
            continue;
        if (g_pool[i].ctx_id == w->ctx_id) {
            if (e)
                extra[nextra++] = g_pool[i].ev;
            else
                e = g_pool[i].ev;
        }
        g_pool[i] = g_pool[--g_npool];
    }
    dls_mutex_unlock(&g_pool_lock);
    for (unsigned i = 0; i < nextra; i++)
        dls_drv_event_destroy(extra[i]);
    if (e)
        return e;
    CUresult r = dls_drv_event_create(&e, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
        dls_warn_once("fix-event-create",
                      "cuEventCreate failed (CUDA error %d); ordering exchanges with host "
                      "synchronization instead",
                      (int)r);
        return NULL;
    }
    return e;
}

/* Returns event e of the context of stream w to the pool; any thread, policy lock held or not.
 * No driver call: when the array cannot grow, e is left to its context (never reused). */
void dls_pol_event_put(CUevent e, const dls_pol_stream *w)
{
    dls_mutex_lock(&g_pool_lock);
    if (g_npool == g_cap) {
        unsigned cap = g_cap ? 2 * g_cap : POOL;
        pooled *p = realloc(g_pool, cap * sizeof *p);
        if (p) {
            g_pool = p;
            g_cap = cap;
        }
    }
    if (g_npool < g_cap)
        g_pool[g_npool++] = (pooled){e, w->ctx, w->ctx_id};
    dls_mutex_unlock(&g_pool_lock);
}

/* 1 when thread tid can name stream s (another thread's per-thread stream it cannot). */
int dls_pol_nameable(const dls_pol_stream *s, uint64_t tid)
{
    return !(s->kind == DLS_STREAM_PER_THREAD && s->owner != tid);
}

/* Warns once that the shim could not make the context of stream w current (it then cannot name
 * w's default stream, record an event there, or synchronize it). */
void dls_pol_warn_ctx(const dls_pol_stream *w, CUresult r)
{
    dls_warn_once("fix-ctx", "cuCtxPushCurrent failed (CUDA error %d) for the context of stream %llu", (int)r,
                  (unsigned long long)w->id);
}

/* Records a pooled event of w's context at the current end of w, with that context current
 * (an event records only on a stream of its own context; w's default-stream handle means the
 * stream of the context it was observed in). NULL when the event could not be made or recorded
 * (warned once). */
CUevent dls_pol_event_record_on(const dls_pol_stream *w)
{
    int pushed = 0;
    CUresult r = dls_drv_ctx_enter((CUcontext)w->ctx, &pushed);
    if (r != CUDA_SUCCESS) {
        dls_pol_warn_ctx(w, r);
        return NULL;
    }
    CUevent ev = event_get(w);
    if (ev && (r = dls_drv_event_record(ev, (CUstream)w->handle)) != CUDA_SUCCESS) {
        dls_warn_once("fix-event-record",
                      "cuEventRecord failed (CUDA error %d); ordering exchanges with "
                      "host synchronization instead",
                      (int)r);
        dls_pol_event_put(ev, w);
        ev = NULL;
    }
    dls_drv_ctx_leave(pushed);
    return ev;
}

/* What is known of an after point's event (dls_pol_after.state). */
enum after_state {
    AFTER_DUE,       /* not recorded: st has had nothing since the access but event records */
    AFTER_RECORDING, /* a thread is recording it */
    AFTER_RECORDED,  /* ev marks the point */
    AFTER_NONE,      /* it could not be recorded */
};

/* Due points, one slot per stream hash (a stream whose slot another stream holds records at once):
 * key is the stream's id (0: free), after the point (NULL while the slot is being filled or
 * emptied). dls_pol_after_ndue counts the slots held (events.h). */
#define DUE_SLOTS 256
static struct {
    _Atomic uint64_t key;
    _Atomic(dls_pol_after *) after;
} g_due[DUE_SLOTS];
atomic_uint dls_pol_after_ndue;

static unsigned due_slot(uint64_t stream)
{
    return (unsigned)((stream * 0x9e3779b97f4a7c15ull) >> 56) % DUE_SLOTS;
}

CUevent dls_pol_after_event(dls_pol_after *a, int record)
{
    int s = AFTER_DUE;
    if (record && atomic_compare_exchange_strong_explicit(&a->state, &s, AFTER_RECORDING, memory_order_acq_rel,
                                                          memory_order_acquire)) {
        a->ev =
            atomic_load_explicit(&dls_pol_g.ncapturing, memory_order_relaxed) ? NULL : dls_pol_event_record_on(a->st);
        atomic_store_explicit(&a->state, a->ev ? AFTER_RECORDED : AFTER_NONE, memory_order_release);
        return a->ev;
    }
    while ((s = atomic_load_explicit(&a->state, memory_order_acquire)) == AFTER_RECORDING)
        sched_yield(); /* one driver call away */
    return s == AFTER_RECORDED ? a->ev : NULL;
}

/* Makes a due in st's slot (a reference for the slot): 0, or -1 when the slot is another's. */
static int make_due(dls_pol_after *a)
{
    unsigned i = due_slot(a->st->id);
    uint64_t free_key = 0;
    if (!atomic_compare_exchange_strong_explicit(&g_due[i].key, &free_key, a->st->id, memory_order_acq_rel,
                                                 memory_order_relaxed))
        return -1;
    a->refs++;
    atomic_fetch_add_explicit(&dls_pol_after_ndue, 1, memory_order_relaxed);
    atomic_store_explicit(&g_due[i].after, a, memory_order_release);
    return 0;
}

dls_pol_after *dls_pol_after_take_due(uint64_t stream)
{
    if (!dls_pol_after_any_due())
        return NULL;
    unsigned i = due_slot(stream);
    if (atomic_load_explicit(&g_due[i].key, memory_order_acquire) != stream)
        return NULL;
    dls_pol_after *a = atomic_exchange_explicit(&g_due[i].after, NULL, memory_order_acq_rel);
    if (!a)
        return NULL; /* being filled, or taken by another thread */
    atomic_store_explicit(&g_due[i].key, 0, memory_order_release);
    atomic_fetch_sub_explicit(&dls_pol_after_ndue, 1, memory_order_relaxed);
    return a;
}

void dls_pol_after_reset_for_tests(void)
{
    for (unsigned i = 0; i < DUE_SLOTS; i++) {
        uint64_t key = atomic_load_explicit(&g_due[i].key, memory_order_relaxed);
        if (!key)
            continue;
        dls_pol_after *a = dls_pol_after_take_due(key);
        dls_mutex_lock(&dls_pol_g.lock);
        dls_pol_after_put(a);
        dls_mutex_unlock(&dls_pol_g.lock);
    }
}

dls_pol_after *dls_pol_after_make(dls_pol_stream *st, uint64_t tid)
{
    if (!dls_pol_nameable(st, tid) || atomic_load_explicit(&dls_pol_g.ncapturing, memory_order_relaxed))
        return NULL; /* an event recorded into a capture would be a node of the graph */
    dls_pol_after *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    a->ev = NULL;
    a->st = dls_pol_stream_hold(st); /* the caller holds st (a thread's stream from its ENTER) */
    a->pos = 0;
    a->refs = 1;
    atomic_init(&a->state, AFTER_DUE);
    if (st->kind != DLS_STREAM_PER_THREAD && make_due(a) == 0)
        return a;
    if (!dls_pol_after_event(a, 1)) {
        dls_pol_stream_drop(st);
        free(a);
        return NULL;
    }
    return a;
}

void dls_pol_after_placed(dls_pol_after *a, uint64_t pos)
{
    a->pos = pos;
}

dls_pol_after *dls_pol_after_get(dls_pol_after *a)
{
    if (a)
        a->refs++;
    return a;
}

/* Takes a out of its stream's due slot when the slot holds it (lock held, racing only with
 * dls_pol_after_take_due, which takes it whole or not at all): 1 when taken. */
static int take_own_due(dls_pol_after *a)
{
    unsigned i = due_slot(a->st->id);
    dls_pol_after *held = a;
    if (atomic_load_explicit(&g_due[i].key, memory_order_acquire) != a->st->id ||
        !atomic_compare_exchange_strong_explicit(&g_due[i].after, &held, NULL, memory_order_acq_rel,
                                                 memory_order_relaxed))
        return 0;
    atomic_store_explicit(&g_due[i].key, 0, memory_order_release);
    atomic_fetch_sub_explicit(&dls_pol_after_ndue, 1, memory_order_relaxed);
    return 1;
}

void dls_pol_after_put(dls_pol_after *a)
{
    if (!a)
        return;
    if (--a->refs == 1 && take_own_due(a)) /* only its slot held it: no operation need record it */
        a->refs = 0;
    if (a->refs)
        return;
    if (a->ev)
        dls_pol_event_put(a->ev, a->st);
    dls_pol_stream_drop(a->st);
    free(a);
}
