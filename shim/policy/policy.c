/* Start-up of the policy layer, the exchange observer callbacks, and the internal API of
 * policy.h (docs/architecture.md, "The policy's model"). */
#include "policy.h"

#include "../common/config.h"
#include "../cuda/drv.h"
#include "../cuda/observer.h"
#include "../cuda/identity.h"
#include "../cuda/ranges.h"
#include "../hooks/policy_hooks.h"
#include "../report/log.h"
#include "../report/warn.h"
#include "attribute.h"
#include "check.h"
#include "exch.h"
#include "fix.h"
#include "index.h"
#include "lock.h"
#include "queue.h"
#include "sink.h"
#include "stream_table.h"

#include <errno.h>

#define WORK_DEVICES 16

static __thread struct {
    int set;
    uintptr_t stream;
} t_consumer;

/* The stream each device's producer last used, per thread (0: none). */
static __thread uintptr_t t_work[WORK_DEVICES];

static uint64_t tid_now(void)
{
    return (uint64_t)dls_log_tid();
}

/* 1 when exchanges can be modelled (an observer, and a model that lost nothing: types.h,
 * dls_pol_degrade); otherwise applies the mode's fallback (`fallback` 0: an import of a tensor whose
 * export already had it: nothing to do). */
static int observed(int fallback)
{
    if (dls_cuda_observer_active() && !atomic_load_explicit(&dls_pol_g.degraded, memory_order_relaxed))
        return 1;
    if (!fallback)
        return 0;
    if (dls_pol_g.mode == DLS_MODE_FIX)
        dls_pol_fix_no_observer();
    else if (dls_cuda_observer_active())
        ; /* degraded: said when it happened */
    else if (dls_drv() && !dls_cuda_observer_warned())
        dls_warn_once("check-no-observer", "no CUDA observer (%s): exchanges cannot be checked",
                      dls_cuda_observer_reason());
    return 0;
}

/* The calling thread's stack for check's reports; fix reports nothing, so it leaves it empty
 * (an unwind costs more than the rest of an exchange). */
static void capture_stack(dls_stack *s)
{
    if (dls_pol_g.mode == DLS_MODE_CHECK)
        dls_stack_capture(s);
    else
        s->n = 0;
}

/* Resolves a stream handle given by the program (without the lock: it calls the driver). */
static void resolve(uintptr_t handle, dls_cuda_stream *out)
{
    CUcontext ctx = NULL;
    dls_drv_ctx_get_current(&ctx);
    dls_cuda_stream_resolve((CUstream)handle, 0, ctx, out);
}

/* Remembers the stream of x's producer write (the first frontier stream) as the thread's work
 * stream for its device. */
static void note_work_stream(const dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock)
{
    if (x->device.device_id < 0 || x->device.device_id >= WORK_DEVICES || !x->nfront)
        return;
    const dls_pol_stream *st = dls_pol_stream_find(x->front[0].at.stream);
    if (st)
        t_work[x->device.device_id] = st->handle;
}

/* Start of the allocation holding x's range, or x->lo when the driver cannot tell (no lock:
 * it may call the driver). */
static uintptr_t alloc_start(const dls_exchange *x)
{
    uintptr_t start = dls_cuda_range_start(x->lo);
    return start ? start : x->lo;
}

/* check: the end of the page-locked host allocation holding host-visible x's range, or 0 when
 * CUDA does not know the memory as page-locked host memory (no lock: it calls the driver). */
static uintptr_t pinned_end(const dls_exchange *x)
{
    unsigned type = 0;
    uintptr_t start, end;
    int host_visible = x->device.device_type == kDLCPU || x->device.device_type == kDLCUDAHost;
    if (dls_pol_g.mode != DLS_MODE_CHECK || !host_visible ||
        dls_drv_pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)x->lo) != CUDA_SUCCESS ||
        type != CU_MEMORYTYPE_HOST || dls_cuda_alloc_range(x->lo, &start, &end) != 0 || end < x->hi)
        return 0;
    return end;
}

/* The live state of exchange xid, or NULL (it may go while the lock was released). */
static dls_pol_x *find_state(uint64_t xid) DLS_REQUIRES(dls_pol_g.lock)
{
    for (dls_pol_x *p = dls_pol_g.live; p; p = p->next)
        if (p->xid == xid)
            return p;
    return NULL;
}

/* What order_rounds orders: st (NULL: the host) after exchange xid's frontier; `first` is the
 * exchange's state for the first round (later ones look it up again). */
typedef struct {
    dls_pol_x *first;
    uint64_t xid;
    dls_pol_stream *st;
    const char *reason;
} frontier_order;

/* One round of order_rounds (dls_pol_round); stops when the exchange is gone or an ordering of an
 * earlier round could not be made. */
static int frontier_round(dls_pol_plan *plan, void *arg) DLS_REQUIRES(dls_pol_g.lock)
{
    frontier_order *f = arg;
    dls_pol_x *p = f->first ? f->first : plan->rc ? NULL : find_state(f->xid);
    f->first = NULL;
    if (!p)
        return 1;
    if (f->st)
        dls_pol_fix_stream(plan, p, f->st, f->reason);
    else
        dls_pol_fix_import(plan, p);
    return 0;
}

/* Orders st (NULL: the host, for a host-visible import) after p's frontier, in rounds of plans
 * carried out without the lock (p may be released meanwhile: it is looked up again by id).
 * Returns 0, or EIO when some ordering could not be made. */
static int order_rounds(dls_pol_plan *plan, dls_pol_x *p, dls_pol_stream *st, const char *reason)
    DLS_REQUIRES(dls_pol_g.lock)
{
    frontier_order f = {.first = p, .xid = p->xid, .st = st, .reason = reason};
    return dls_pol_plan_rounds(plan, frontier_round, &f);
}

/* The policy state of x, created (with its frontier) when x has none: the receiver returns it
 * for the registry to keep. NULL when memory is short: the model then cannot order x
 * (docs/architecture.md, "The policy's model"). */
static dls_pol_x *state_of(const dls_exchange *x, const dls_stack *stack, uintptr_t alo) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_x *p = x->policy;
    if (p)
        return p;
    p = dls_pol_x_new(x);
    if (!p) {
        dls_pol_degrade("policy-memory", "out of memory tracking an exchanged tensor");
        return NULL;
    }
    p->alo = alo;
    p->stack = *stack;
    dls_pol_x_forget_released(p, tid_now()); /* the memory comes round again */
    dls_pol_attribute(p);
    dls_pol_x_link(p);
    return p;
}

/* 1 when the model lost work it needs (types.h, dls_pol_degrade): fix synchronizes at the export instead. */
static int degraded(void)
{
    return atomic_load_explicit(&dls_pol_g.degraded, memory_order_relaxed);
}

static void *on_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    if (!observed(1))
        return x->policy;
    uint64_t tid = tid_now();
    dls_stack stack;
    capture_stack(&stack);
    uintptr_t alo = alloc_start(x);
    dls_cuda_stream cs;
    int consumer = t_consumer.set && dls_pol_g.mode == DLS_MODE_FIX;
    if (consumer)
        resolve(t_consumer.stream, &cs);
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, tid);
    dls_pol_lock();
    dls_pol_x *p = x->policy;
    if (p) { /* handed out again: the producer may have written since */
        p->stack = stack;
        p->nordered = 0;
        dls_pol_attribute(p);
    } else {
        p = state_of(x, &stack, alo);
    }
    if (p) {
        note_work_stream(p);
        dls_pol_stream *st = consumer ? dls_pol_stream_get(&cs, tid) : NULL;
        if (st)
            order_rounds(&plan, p, st, "export with the thread's consumer stream set");
    }
    dls_pol_unlock();
    if (!p && dls_pol_g.mode == DLS_MODE_FIX) /* not modelled: ordered by synchronizing */
        dls_pol_fix_no_observer();
    return p;
}

static void *on_import(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    if (!observed(x->producer == NULL))
        return x->policy;
    uint64_t tid = tid_now();
    dls_stack stack;
    capture_stack(&stack);
    uintptr_t alo = x->policy ? 0 : alloc_start(x);
    uintptr_t pinned = pinned_end(x);
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, tid);
    dls_pol_lock();
    dls_pol_x *p = state_of(x, &stack, alo);
    if (p && p->host_visible) {
        if (dls_pol_g.mode == DLS_MODE_FIX)
            order_rounds(&plan, p, NULL, NULL);
        else
            dls_pol_check_import(p, tid, x->consumer ? dls_profile_name(x->consumer) : NULL, pinned);
    }
    dls_pol_unlock();
    if (!p && dls_pol_g.mode == DLS_MODE_FIX) /* not modelled: ordered by synchronizing */
        dls_pol_fix_no_observer();
    return p;
}

static void on_release(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    dls_pol_x *p = x->policy;
    if (!p)
        return;
    uint64_t tid = tid_now();
    dls_stack stack;
    capture_stack(&stack);
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, tid);
    dls_pol_lock();
    dls_pol_check_host_of(p); /* its pages are watched no more */
    if (dls_pol_g.mode == DLS_MODE_FIX) {
        if (!dls_cuda_observer_active() || !dls_pol_fix_release(&plan, p))
            dls_pol_x_drop(p);
        dls_pol_plan_carry_out(&plan);
    } else if (p->nuse && dls_pol_x_uses_complete(p, tid, DLS_HB_NOW) && dls_pol_x_front_complete(p, tid, DLS_HB_NOW)) {
        dls_pol_x_drop(p);
    } else { /* watched on: the consumer's accesses after the release count too */
        p->stack = stack;
        dls_pol_x_release(p);
    }
    dls_pol_unlock();
}

static const dls_cuda_receivers g_fix_receivers = {
    .op = dls_pol_on_op,
    .work = dls_pol_on_work,
    .lifetime = dls_pol_on_lifetime,
    .watching = &dls_pol_index_watching_flag,
};

static const dls_cuda_receivers g_check_receivers = {
    .op = dls_pol_on_op,
    .work = dls_pol_on_work,
    .lifetime = dls_pol_check_on_lifetime,
    .begins = dls_pol_check_on_begins,
    .watching = &dls_pol_index_watching_flag,
};

static const dls_exchange_observer g_observer = {
    .on_export = on_export,
    .on_import = on_import,
    .on_release = on_release,
};

void dls_policy_start(void)
{
    dls_mutex_lock(&dls_pol_g.lock);
    dls_mode m = dls_config_get()->mode;
    if (dls_pol_g.hb || (m != DLS_MODE_CHECK && m != DLS_MODE_FIX)) {
        dls_mutex_unlock(&dls_pol_g.lock);
        return;
    }
    dls_pol_g.mode = m;
    dls_pol_g.own_event = 0;
    dls_pol_g.hb = dls_hb_create();
    if (!dls_pol_g.hb || dls_hb_stream_add(dls_pol_g.hb, DLS_POL_HOST_STREAM, DLS_POL_HOST_CTX, DLS_HB_NON_BLOCKING)) {
        dls_hb_destroy(dls_pol_g.hb);
        dls_pol_g.hb = NULL;
    }
    if (dls_pol_g.hb) /* fix leaves out a wait only where the order is sure */
        dls_hb_set_wary(dls_pol_g.hb, m == DLS_MODE_FIX);
    dls_mutex_unlock(&dls_pol_g.lock);
    if (!dls_pol_g.hb)
        dls_pol_degrade("policy-start", "out of memory at start-up");
    else
        dls_cuda_set_receivers(m == DLS_MODE_FIX ? &g_fix_receivers : &g_check_receivers);
    dls_exchange_set_observer(&g_observer);
}

void dls_policy_stop(void)
{
    if (dls_pol_g.hb)
        dls_pol_drain_at_exit();
}

void dls_policy_set_consumer_stream(uintptr_t stream)
{
    t_consumer.set = 1;
    t_consumer.stream = stream;
}

void dls_policy_clear_consumer_stream(void)
{
    t_consumer.set = 0;
    t_consumer.stream = 0;
}

int dls_policy_consumer_stream(uintptr_t *stream)
{
    if (stream)
        *stream = t_consumer.stream;
    return t_consumer.set;
}

int dls_policy_make_safe(const void *tensor, uintptr_t stream)
{
    if (!dls_pol_g.mode)
        return ENOTSUP;
    dls_exchange x;
    if (!tensor || dls_exchange_find_tensor(tensor, &x))
        return ENOENT;
    if (!dls_pol_g.hb || !dls_cuda_observer_active() || degraded())
        return dls_pol_fix_no_observer();
    uint64_t tid = tid_now();
    dls_stack stack;
    capture_stack(&stack);
    dls_cuda_stream cs;
    resolve(stream, &cs);
    uintptr_t alo = x.policy ? 0 : alloc_start(&x);
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, tid);
    dls_pol_lock();
    int rc = 0;
    dls_pol_x *p = state_of(&x, &stack, alo);
    dls_pol_stream *st = p ? dls_pol_stream_get(&cs, tid) : NULL;
    if (p && !st)
        rc = cs.resolved ? ENOMEM : EINVAL;
    else if (!p)
        rc = ENOMEM;
    if (p && st)
        rc = order_rounds(&plan, p, st, "made safe for a stream on request");
    dls_pol_unlock();
    return rc == ENOMEM ? dls_pol_fix_no_observer() : rc;
}

int dls_policy_current_work_stream(int device_type, int device_id, void **out)
{
    if (!out || device_id < 0 ||
        (device_type != kDLCUDA && device_type != kDLCUDAHost && device_type != kDLCUDAManaged))
        return EINVAL;
    uintptr_t s = device_id < WORK_DEVICES ? t_work[device_id] : 0;
    *out = (void *)(s ? s : (uintptr_t)CU_STREAM_LEGACY);
    return s ? 0 : ENOENT;
}
