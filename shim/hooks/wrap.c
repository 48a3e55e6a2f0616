/* Export, import and release handling, and the trampoline hooks (see wrap.h). */
#include "wrap.h"

#include "../common/mutex.h"
#include "../common/config.h"
#include "../common/export.h"
#include "../report/log.h"
#include "../report/nvtx.h"
#include "../report/summary.h"
#include "../report/warn.h"
#include "bindings_table.h"
#include "exchange.h"
#include "policy_hooks.h"
#include "record.h"
#include "trampoline.h"

#include <pthread.h>
#include <stdio.h>
#include <unwind.h>

/* Wrapped calls in progress on this thread. */
static __thread int t_depth;

/* Who hears of an export, an import or a release: one bit per listener, asked once per event. */
enum {
    HEARD_BY_LOG = 1,      /* the log writes its record */
    HEARD_BY_OBSERVER = 2, /* the policy's observer is called (policy_hooks.h) */
    HEARD_BY_NVTX = 4,     /* an NVTX tool gets a marker inside the wrapped call's range */
};

/* Which of the listeners `asked` (HEARD_BY_* bits) hear of an event happening now; *obs gets the
 * observer (NULL: none). Nobody means that the registry's entry is not copied out. */
static inline unsigned listeners_now(unsigned asked, const dls_exchange_observer **obs)
{
    *obs = dls_exchange_get_observer();
    unsigned who = 0;
    if ((asked & HEARD_BY_LOG) && dls_log_enabled())
        who |= HEARD_BY_LOG;
    if ((asked & HEARD_BY_OBSERVER) && *obs)
        who |= HEARD_BY_OBSERVER;
    if ((asked & HEARD_BY_NVTX) && dls_nvtx_active())
        who |= HEARD_BY_NVTX;
    return who;
}

/* Exports and imports are heard by every listener. */
#define EVERYONE (HEARD_BY_LOG | HEARD_BY_OBSERVER | HEARD_BY_NVTX)

/* Reports a tensor that cannot be interpreted: a warning once per reason, the count, the log. */
static void malformed(const dls_profile *p, void *mt, const char *reason)
{
    char key[64];
    snprintf(key, sizeof key, "malformed-%.40s", reason);
    dls_warn_once(key, "%s passed a tensor the shim cannot interpret (%s); passing it on untouched",
                  dls_profile_name(p), reason);
    dls_summary_add(DLS_COUNT_MALFORMED, 1);
    dls_record_malformed(p, mt, reason);
}

/* Checks mt; on failure logs and warns once, and returns 0. */
static inline int interpret(const dls_profile *p, void *mt, dls_managed_view *v, dls_extent *ext)
{
    const char *reason = dls_managed_view_of(mt, p->versioned, v);
    if (!reason)
        reason = dls_tensor_check(v->tensor, v->flags, ext);
    if (!reason)
        return 1;
    malformed(p, mt, reason);
    return 0;
}

/* Registers the tensor o describes (its new id counts the exchange) with the shim's deleter in
 * place of its own, and fills *x when x is non-NULL; a tensor without a deleter is not
 * registered (nothing would ever release it). */
static inline void track(const dls_exchange_origin *o, dls_exchange *x)
{
    void **slot = o->view.deleter_slot;
    if (!*slot) {
        if (x)
            dls_exchange_make(x, o);
        else
            dls_exchange_next_id(); /* counted all the same */
    } else if (dls_exchange_add(o, x) != 0) {
        *slot = (void *)dls_exchange_deleter;
    }
}

/* An NVTX marker "<what> xid N" inside the wrapped call's range. */
static void mark_exchange(const char *what, uint64_t xid)
{
    char msg[48];
    snprintf(msg, sizeof msg, "%s xid %llu", what, (unsigned long long)xid);
    dls_nvtx_mark(msg);
}

/* Tells the listeners `who` (listeners_now) of the export or import of x, seen as o says, and
 * keeps in x's registry entry the pointer the observer returns. */
static void tell(unsigned who, const dls_exchange_observer *obs, const dls_exchange *x, const dls_exchange_origin *o)
{
    const char *ev = o->is_export ? "export" : "import";
    if (who & HEARD_BY_NVTX)
        mark_exchange(ev, x->xid);
    void *(*heard)(void *, const dls_exchange *) = !(who & HEARD_BY_OBSERVER) ? NULL
                                                   : o->is_export             ? obs->on_export
                                                                              : obs->on_import;
    void *kept = heard ? heard(obs->ctx, x) : x->policy;
    if (kept != x->policy)
        dls_exchange_keep_policy(x->tensor, kept);
    if (who & HEARD_BY_LOG)
        dls_record_exchange(ev, x->xid, o->at, o->lib, x->tensor, &o->view, &o->extent,
                            x->producer ? x->producer->framework : NULL);
}

void dls_wrap_export(const dls_profile *p, const char *lib, void *mt)
{
    const dls_exchange_observer *obs;
    unsigned who = listeners_now(EVERYONE, &obs);
    dls_exchange_origin o = {.at = p, .lib = lib, .tensor = mt, .is_export = 1};
    if (!interpret(p, mt, &o.view, &o.extent))
        return;
    dls_exchange x;
    /* A live tensor that carries the shim's deleter is handed out again as it is: the same
     * exchange. */
    if (*o.view.deleter_slot != (void *)dls_exchange_deleter || dls_exchange_find_tensor(mt, who ? &x : NULL) != 0)
        track(&o, who ? &x : NULL);
    dls_summary_add(DLS_COUNT_EXPORTS, 1);
    if (who)
        tell(who, obs, &x, &o);
}

/* ---- non-owning exports (fill form) ----
 * A non-owning DLTensor is valid only until the consumer's call returns, and nothing releases it.
 * Each is registered under the caller's DLTensor (so the policy can attach its state) and
 * retired, the policy hearing its release, when that DLTensor is filled again (the caller's
 * earlier view is over) or when more than DLS_LIVE_VIEWS are live (the oldest first). */
#define DLS_LIVE_VIEWS 256

static struct {
    const void *key;
    uint64_t xid;
} g_views[DLS_LIVE_VIEWS];
static size_t g_views_next;
static dls_mutex g_views_lock = PTHREAD_MUTEX_INITIALIZER;

/* Retires the live non-owning export `xid` registered under key (nothing when it is gone): only
 * the observer hears of it, since no deleter call happened. */
static void retire_view(const void *key, uint64_t xid)
{
    dls_exchange x;
    if (!key || dls_exchange_find_tensor(key, &x) != 0 || (xid && x.xid != xid) || x.deleter ||
        dls_exchange_remove(key, &x, NULL) != 0)
        return;
    const dls_exchange_observer *obs;
    if (listeners_now(HEARD_BY_OBSERVER, &obs) && obs->on_release)
        obs->on_release(obs->ctx, &x);
}

/* Registers the non-owning export o describes (it has no deleter), filling *x, and retires the
 * ones it replaces. */
static void track_view(const dls_exchange_origin *o, dls_exchange *x)
{
    retire_view(o->tensor, 0);
    if (dls_exchange_add(o, x) == 0)
        return;
    dls_mutex_lock(&g_views_lock);
    size_t i = g_views_next++ % DLS_LIVE_VIEWS;
    const void *old_key = g_views[i].key;
    uint64_t old_xid = g_views[i].xid;
    g_views[i].key = x->tensor;
    g_views[i].xid = x->xid;
    dls_mutex_unlock(&g_views_lock);
    retire_view(old_key, old_xid);
}

void dls_wrap_export_filled(const dls_profile *p, const char *lib, DLTensor *t)
{
    const dls_exchange_observer *obs;
    unsigned who = listeners_now(EVERYONE, &obs);
    dls_exchange_origin o = {.at = p, .lib = lib, .tensor = t, .view = {.tensor = t}, .is_export = 1};
    const char *reason = dls_tensor_check(t, 0, &o.extent);
    if (reason) {
        dls_summary_add(DLS_COUNT_MALFORMED, 1);
        dls_record_malformed(p, t, reason);
        return;
    }
    dls_exchange x;
    track_view(&o, &x);
    dls_summary_add(DLS_COUNT_EXPORTS, 1);
    if (who)
        tell(who, obs, &x, &o);
}

void dls_wrap_import(const dls_profile *p, const char *lib, void *mt)
{
    const dls_exchange_observer *obs;
    unsigned who = listeners_now(EVERYONE, &obs);
    dls_exchange_origin o = {.at = p, .lib = lib, .tensor = mt, .is_export = 0};
    dls_exchange x;
    if (!dls_managed_view_of(mt, p->versioned, &o.view) && *o.view.deleter_slot == (void *)dls_exchange_deleter) {
        /* Checked when it was exported; checked again only to be logged. */
        if ((who & HEARD_BY_LOG) && !interpret(p, mt, &o.view, &o.extent))
            return;
        if (dls_exchange_note_import(mt, p, who ? &x : NULL) != 0) {
            dls_warn_once("import-released", "%s was given a tensor whose deleter was already called",
                          dls_profile_name(p));
            dls_summary_add(DLS_COUNT_MALFORMED, 1);
            dls_record_malformed(p, mt, "tensor already released");
            return;
        }
    } else {
        if (!interpret(p, mt, &o.view, &o.extent))
            return;
        track(&o, who ? &x : NULL);
    }
    dls_summary_add(DLS_COUNT_IMPORTS, 1);
    if (who)
        tell(who, obs, &x, &o);
}

int dls_wrap_enter(void)
{
    if (t_depth > 0 || dls_config_get()->mode == DLS_MODE_OFF)
        return 0;
    t_depth++;
    return 1;
}

void dls_wrap_leave(void)
{
    t_depth--;
}

/* The second call of the shim's deleter for mt: reported, not passed on. */
static void double_release(void *mt, const dls_exchange_observer *obs)
{
    uint64_t xid = dls_exchange_removed_xid(mt);
    dls_warn_once("double-release",
                  "a DLPack tensor's deleter was called twice (tensor %p); "
                  "the second call is not passed to the producer",
                  mt);
    dls_summary_add(DLS_COUNT_DOUBLE_RELEASES, 1);
    if (obs && obs->on_double_release)
        obs->on_double_release(obs->ctx, mt, xid);
    dls_record_double_release(mt, xid);
}

static _Atomic(dls_wrap_before_release_fn) g_before_release;

void dls_wrap_set_before_release(dls_wrap_before_release_fn fn)
{
    atomic_store(&g_before_release, fn);
}

/* A release is heard by the observer and the log: NVTX marks only what happens inside a wrapped
 * call's range, and a deleter call is in none. */
void dls_exchange_deleter(void *mt)
{
    dls_wrap_before_release_fn before = atomic_load_explicit(&g_before_release, memory_order_relaxed);
    if (before)
        before(mt);
    const dls_exchange_observer *obs;
    unsigned who = listeners_now(HEARD_BY_LOG | HEARD_BY_OBSERVER, &obs);
    dls_exchange x;
    dls_deleter_fn deleter;
    if (dls_exchange_remove(mt, who ? &x : NULL, &deleter) != 0) {
        double_release(mt, obs);
        return;
    }
    dls_summary_add(DLS_COUNT_RELEASES, 1);
    if ((who & HEARD_BY_OBSERVER) && obs->on_release)
        obs->on_release(obs->ctx, &x);
    if (who & HEARD_BY_LOG)
        dls_record_release(&x);
    deleter(mt);
}

void *dls_hook_pre(dls_frame *f)
{
    dls_binding *b = dls_binding_at(f->index);
    if (!b)
        return NULL;
    if (dls_config_get()->mode == DLS_MODE_OFF || t_depth > 0) {
        f->tail = 1;
        return b->real;
    }
    ++t_depth;
    f->state = (uintptr_t)b; /* the post-hook ends the call */
    const dls_profile *p = dls_binding_profile(b);
    const char *lib;
    void *real = dls_binding_real(b, &lib);
    if (dls_nvtx_active())
        dls_nvtx_range_push(dls_profile_name(p));
    if (p->role == DLS_ROLE_IMPORT)
        dls_wrap_import(p, lib, (void *)f->arg[p->index]);
    return real;
}

/* After a wrapped export returned: finds the tensor it produced and records the export. */
static void finish_export(dls_frame *f, const dls_binding *b)
{
    const dls_profile *p = dls_binding_profile(b);
    if (p->role != DLS_ROLE_EXPORT)
        return;
    const char *lib;
    dls_binding_real(b, &lib);
    void *mt;
    if (p->where == DLS_WHERE_FILL) { /* the result is not consulted: void functions leave rax undefined */
        dls_wrap_export_filled(p, lib, (DLTensor *)f->arg[p->index]);
        return;
    }
    if (p->where == DLS_WHERE_RET) {
        mt = (void *)f->ret[0];
    } else {
        if ((uint32_t)f->ret[0] != 0) /* C APIs with out-parameters return 0 on success */
            return;
        void **out = (void **)f->arg[p->index];
        if (!out) {
            dls_summary_add(DLS_COUNT_MALFORMED, 1);
            dls_record_malformed(p, NULL, "NULL out-parameter");
            return;
        }
        mt = *out;
    }
    if (mt) /* NULL: the export failed; nothing was exchanged */
        dls_wrap_export(p, lib, mt);
}

void dls_hook_post(dls_frame *f)
{
    if (!f->state)
        return;
    --t_depth;
    finish_export(f, (const dls_binding *)f->state);
    if (dls_nvtx_active()) /* after the export's marker, which belongs inside the range */
        dls_nvtx_range_pop();
}

/* Personality routine of the trampoline: a C++ exception (or forced unwind) leaving the real
 * function unwinds the trampoline's frame without running the post-hook; undo its depth count. */
DLS_HIDDEN _Unwind_Reason_Code dls_tramp_personality(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
                                                     struct _Unwind_Exception *exc, struct _Unwind_Context *ctx);

_Unwind_Reason_Code dls_tramp_personality(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
                                          struct _Unwind_Exception *exc, struct _Unwind_Context *ctx)
{
    (void)version;
    (void)cls;
    (void)exc;
    (void)ctx;
    if ((actions & _UA_CLEANUP_PHASE) && t_depth > 0) {
        t_depth--;
        dls_nvtx_range_pop();
    }
    return _URC_CONTINUE_UNWIND;
}
