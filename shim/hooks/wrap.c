/* Export, import and release handling, and the trampoline hooks (see wrap.h). */
#include "wrap.h"

#include "../common/config.h"
#include "../common/export.h"
#include "../report/log.h"
#include "../report/nvtx.h"
#include "../report/summary.h"
#include "../report/warn.h"
#include "bindings.h"
#include "capsule.h"
#include "exchange.h"
#include "policy_hooks.h"
#include "record.h"
#include "trampoline.h"

#include <pthread.h>
#include <stdio.h>
#include <unwind.h>

/* Wrapped calls in progress on this thread. */
static __thread int t_depth;

/* Reports a tensor that cannot be interpreted: a warning once per reason, the count, the log. */
__attribute__((noinline, cold)) static void malformed(const dls_profile *p, void *mt, const char *reason)
{
    char key[64];
    snprintf(key, sizeof key, "malformed-%.40s", reason);
    dls_warn_once(key, "%s passed a tensor the shim cannot interpret (%s); passing it on untouched",
                  dls_profile_name(p), reason);
    dls_summary_add(DLS_COUNT_MALFORMED, 1);
    dls_record_malformed(p, mt, reason);
}

/* Checks mt; on failure logs and warns once, and returns 0. */
static inline __attribute__((always_inline)) int interpret(const dls_profile *p, void *mt, dls_managed_view *v,
                                                           dls_extent *ext)
{
    const char *reason = dls_managed_view_of(mt, p->versioned, v);
    if (!reason)
        reason = dls_tensor_check(v->tensor, v->flags, ext);
    if (!reason)
        return 1;
    malformed(p, mt, reason);
    return 0;
}

/* Registers the tensor o describes (its id counts the exchange) and swaps in the shim's deleter;
 * a tensor without a deleter is not registered (nothing would ever release it). Fills *x when x
 * is non-NULL. */
static inline __attribute__((always_inline)) void track(const dls_exchange_origin *o, dls_exchange *x)
{
    void **slot = o->view->deleter_slot;
    if (!*slot) {
        if (x)
            dls_exchange_make(x, o);
        else
            dls_exchange_next_id(); /* counted all the same */
    } else if (dls_exchange_add_made(o, x) != 0) {
        *slot = (void *)dls_exchange_deleter;
    }
}

/* An NVTX marker "<what> xid N" inside the wrapped call's range, when a tool listens. */
static void mark_exchange(const char *what, uint64_t xid)
{
    if (!dls_nvtx_active())
        return;
    char msg[48];
    snprintf(msg, sizeof msg, "%s xid %llu", what, (unsigned long long)xid);
    dls_nvtx_mark(msg);
}

/* Checks and registers the exported mt (the same exchange when it is handed out again as it
 * is), counts the export and fills *x when x is non-NULL. Returns 0 when mt is malformed. */
static inline __attribute__((always_inline)) int export_of(const dls_profile *p, const char *lib, void *mt,
                                                           dls_managed_view *v, dls_extent *ext, dls_exchange *x)
{
    if (!interpret(p, mt, v, ext))
        return 0;
    if (*v->deleter_slot != (void *)dls_exchange_deleter || dls_exchange_find_tensor(mt, x) != 0)
        track(&(dls_exchange_origin){p, lib, mt, v, ext, 1}, x);
    dls_summary_add(DLS_COUNT_EXPORTS, 1);
    return 1;
}

/* dls_wrap_export when an observer, the log or an NVTX tool hears of it. */
__attribute__((noinline)) static void export_told(const dls_profile *p, const char *lib, void *mt,
                                                  const dls_exchange_observer *obs, int logged)
{
    dls_managed_view v;
    dls_extent ext;
    dls_exchange x;
    if (!export_of(p, lib, mt, &v, &ext, &x))
        return;
    mark_exchange("export", x.xid);
    if (obs && obs->on_export)
        obs->on_export(obs->ctx, &x);
    if (logged)
        dls_record_exchange("export", x.xid, p, lib, mt, &v, &ext, x.producer ? x.producer->framework : NULL);
}

/* dls_wrap_export when its common path's inline loads do not settle whether anybody hears of the
 * export, or the tensor is not of the most common kind. */
__attribute__((noinline)) static void export_asked(const dls_profile *p, const char *lib, void *mt)
{
    const dls_exchange_observer *obs = dls_exchange_get_observer();
    int logged = dls_log_enabled();
    if (logged || (obs && obs->on_export) || dls_nvtx_active()) {
        export_told(p, lib, mt, obs, logged);
        return;
    }
    dls_managed_view v; /* nobody hears of it: the entry is not copied out */
    dls_extent ext;
    if (!interpret(p, mt, &v, &ext))
        return;
    dls_summary_add(DLS_COUNT_EXPORTS, 1);
    dls_exchange_add_export(p, lib, mt, ext.lo, ext.hi, dls_exchange_deleter);
}

/* The common path (the log off, no observer or NVTX tool, a tensor of the kind
 * dls_tensor_check_common measures) makes only tail calls, so it saves no registers. */
void dls_wrap_export(const dls_profile *p, const char *lib, void *mt)
{
    const dls_exchange_observer *obs = dls_exchange_get_observer();
    dls_managed_view v;
    dls_extent ext;
    if (__builtin_expect(!atomic_load_explicit(&dls_log_ready, memory_order_acquire) ||
                             atomic_load_explicit(&dls_log_open, memory_order_acquire) || (obs && obs->on_export) ||
                             !atomic_load_explicit(&dls_nvtx_absent, memory_order_relaxed) ||
                             dls_managed_view_of(mt, p->versioned, &v) ||
                             !dls_tensor_check_common(v.tensor, v.flags, &ext),
                         0)) {
        export_asked(p, lib, mt);
        return;
    }
    dls_summary_add(DLS_COUNT_EXPORTS, 1);
    dls_exchange_add_export(p, lib, mt, ext.lo, ext.hi, dls_exchange_deleter);
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
static pthread_mutex_t g_views_lock = PTHREAD_MUTEX_INITIALIZER;

/* Retires the live non-owning export `xid` registered under key (nothing when it is gone). */
static void retire_view(const void *key, uint64_t xid)
{
    dls_exchange x;
    if (!key || dls_exchange_find_tensor(key, &x) != 0 || (xid && x.xid != xid) || x.deleter ||
        dls_exchange_remove(key, &x, NULL) != 0)
        return;
    const dls_exchange_observer *obs = dls_exchange_get_observer();
    if (obs && obs->on_release)
        obs->on_release(obs->ctx, &x);
}

/* Registers the non-owning export x (x->deleter NULL) and retires the ones it replaces. */
static void track_view(const dls_exchange *x)
{
    retire_view(x->tensor, 0);
    if (dls_exchange_add(x) != 0)
        return;
    pthread_mutex_lock(&g_views_lock);
    size_t i = g_views_next++ % DLS_LIVE_VIEWS;
    const void *old_key = g_views[i].key;
    uint64_t old_xid = g_views[i].xid;
    g_views[i].key = x->tensor;
    g_views[i].xid = x->xid;
    pthread_mutex_unlock(&g_views_lock);
    retire_view(old_key, old_xid);
}

void dls_wrap_export_filled(const dls_profile *p, const char *lib, DLTensor *t)
{
    dls_managed_view v = {.tensor = t};
    dls_extent ext;
    const char *reason = dls_tensor_check(t, 0, &ext);
    if (reason) {
        dls_summary_add(DLS_COUNT_MALFORMED, 1);
        dls_record_malformed(p, t, reason);
        return;
    }
    dls_exchange x;
    dls_exchange_make(&x, &(dls_exchange_origin){p, lib, t, &v, &ext, 1});
    track_view(&x);
    dls_summary_add(DLS_COUNT_EXPORTS, 1);
    mark_exchange("export", x.xid);
    const dls_exchange_observer *obs = dls_exchange_get_observer();
    if (obs && obs->on_export)
        obs->on_export(obs->ctx, &x);
    dls_record_exchange("export", x.xid, p, lib, t, &v, &ext, p->framework);
}

void dls_wrap_import(const dls_profile *p, const char *lib, void *mt)
{
    dls_managed_view v;
    dls_extent ext = {0, 0};
    dls_exchange x;
    const dls_exchange_observer *obs = dls_exchange_get_observer();
    int logged = dls_log_enabled();
    /* The entry is copied out only for those who read it. */
    int told = logged || (obs && obs->on_import) || dls_nvtx_active();
    if (!dls_managed_view_of(mt, p->versioned, &v) && *v.deleter_slot == (void *)dls_exchange_deleter) {
        /* Checked when it was exported; checked again only to be logged. */
        if (logged && !interpret(p, mt, &v, &ext))
            return;
        if (dls_exchange_note_import(mt, p, told ? &x : NULL) != 0) {
            dls_warn_once("import-released", "%s was given a tensor whose deleter was already called",
                          dls_profile_name(p));
            dls_summary_add(DLS_COUNT_MALFORMED, 1);
            dls_record_malformed(p, mt, "tensor already released");
            return;
        }
    } else {
        if (!interpret(p, mt, &v, &ext))
            return;
        track(&(dls_exchange_origin){p, lib, mt, &v, &ext, 0}, told ? &x : NULL);
    }
    dls_summary_add(DLS_COUNT_IMPORTS, 1);
    if (!told)
        return;
    mark_exchange("import", x.xid);
    if (obs && obs->on_import)
        obs->on_import(obs->ctx, &x);
    if (logged)
        dls_record_exchange("import", x.xid, p, lib, mt, &v, &ext, x.producer ? x.producer->framework : NULL);
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
__attribute__((noinline, cold)) static void double_release(void *mt)
{
    const dls_exchange_observer *obs = dls_exchange_get_observer();
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

/* dls_exchange_deleter when an observer or the log reads the entry. */
__attribute__((noinline)) static void release_told(void *mt, const dls_exchange_observer *obs)
{
    dls_exchange x;
    dls_deleter_fn deleter;
    if (dls_exchange_remove(mt, &x, &deleter) != 0) {
        double_release(mt);
        return;
    }
    dls_summary_add(DLS_COUNT_RELEASES, 1);
    if (obs && obs->on_release)
        obs->on_release(obs->ctx, &x);
    if (dls_log_enabled())
        dls_record_release(&x);
    deleter(mt);
}

void dls_exchange_deleter(void *mt)
{
    const dls_exchange_observer *obs = dls_exchange_get_observer();
    dls_capsule_before_release(mt);
    if ((obs && obs->on_release) || dls_log_enabled()) {
        release_told(mt, obs);
        return;
    }
    dls_deleter_fn deleter = dls_exchange_remove_owned(mt); /* only the deleter is needed */
    if (!deleter) {
        double_release(mt);
        return;
    }
    dls_summary_add(DLS_COUNT_RELEASES, 1);
    deleter(mt);
}

/* dls_hook_pre when its common path does not apply: the configuration not read yet, an NVTX
 * tool perhaps listening, an import row, or a stub not bound. */
__attribute__((noinline)) static void *pre_hook_full(dls_frame *f)
{
    dls_binding *b = dls_binding_at(f->index);
    if (!b)
        return NULL;
    if (t_depth > 0 || dls_config_get()->mode == DLS_MODE_OFF) {
        f->tail = 1;
        return b->real;
    }
    ++t_depth;
    f->state = (uintptr_t)&t_depth;
    const dls_profile *p = dls_binding_profile(b);
    const char *lib;
    void *real = dls_binding_real(b, &lib);
    if (dls_nvtx_active())
        dls_nvtx_range_push(dls_profile_name(p));
    if (p->role == DLS_ROLE_IMPORT)
        dls_wrap_import(p, lib, (void *)f->arg[p->index]);
    return real;
}

/* The common path (an export, or a nested call, with the configuration read and no NVTX tool)
 * calls nothing but the TLS resolver, so it saves no registers. The stub's index is below
 * DLS_STUB_COUNT by construction (trampoline.c). */
void *dls_hook_pre(dls_frame *f)
{
    dls_binding *b = &dls_binding_table[f->index];
    const dls_profile *p = atomic_load_explicit(&b->profile, memory_order_acquire);
    const dls_config *c = atomic_load_explicit(&dls_config_read, memory_order_acquire);
    if (__builtin_expect(
            !p || !c || !atomic_load_explicit(&dls_nvtx_absent, memory_order_relaxed) || p->role == DLS_ROLE_IMPORT, 0))
        return pre_hook_full(f);
    int *depth = &t_depth;
    __asm__("" : "+r"(depth)); /* the thread's address once: one TLS access, not one per use */
    if (*depth > 0 || c->mode == DLS_MODE_OFF) {
        f->tail = 1;
        return b->real;
    }
    ++*depth;
    f->state = (uintptr_t)depth; /* the post-hook finds the thread's count without a TLS look-up */
    return b->real;
}

/* After a wrapped export returned: finds the tensor it produced and records the export. */
static inline __attribute__((always_inline)) void finish_export(dls_frame *f, const dls_binding *b)
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

/* dls_hook_post when an NVTX tool may listen: the export is marked inside the call's range. */
__attribute__((noinline)) static void post_hook_nvtx(dls_frame *f)
{
    finish_export(f, &dls_binding_table[f->index]);
    if (dls_nvtx_active())
        dls_nvtx_range_pop();
}

void dls_hook_post(dls_frame *f)
{
    if (!f->state)
        return;
    --*(int *)f->state;
    if (__builtin_expect(!atomic_load_explicit(&dls_nvtx_absent, memory_order_relaxed), 0)) {
        post_hook_nvtx(f);
        return;
    }
    finish_export(f, &dls_binding_table[f->index]);
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
