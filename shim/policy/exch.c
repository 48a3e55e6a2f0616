/* Exchange states (see exch.h), with a few freed states kept for reuse. */
#include "exch.h"

#include "access.h"
#include "complete.h"
#include "events.h"
#include "graphs.h"
#include "index.h"
#include "pages.h"

#include "../common/config.h"
#include "../common/text.h"
#include "../hooks/extent.h"
#include "../report/warn.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Freed states kept for reuse (an exchange's state is a few kilobytes: allocating and clearing
 * it anew cost more than the rest of the state's setup). */
#define SPARE 16
static dls_pol_x *g_spare[SPARE];
static unsigned g_nspare;

static void recycle(dls_pol_x *p) DLS_REQUIRES(dls_pol_g.lock)
{
    if (p->watch) { /* no page stays protected for a state that goes */
        dls_pol_fault lost;
        dls_pol_pages_unwatch(p->watch, &lost);
        atomic_fetch_sub_explicit(&dls_pol_g.nhost, 1, memory_order_relaxed);
    }
    for (unsigned i = 0; i < p->nuse; i++)
        dls_pol_after_put(p->use[i].after);
    if (g_nspare < SPARE)
        g_spare[g_nspare++] = p;
    else
        free(p);
}

dls_pol_x *dls_pol_x_new(const dls_exchange *x)
{
    dls_pol_x *p = g_nspare ? g_spare[--g_nspare] : malloc(sizeof *p);
    if (!p)
        return NULL;
    memset(p, 0, offsetof(dls_pol_x, front)); /* the arrays are valid up to their counts */
    p->stack.n = 0;
    p->xid = x->xid;
    p->data = (uintptr_t)x->data;
    p->lo = x->lo;
    p->hi = x->hi;
    p->alo = x->lo;
    p->device = x->device;
    p->dtype = x->dtype;
    const dls_profile *prof = x->producer ? x->producer : x->seen_at;
    p->framework = prof ? prof->framework : NULL;
    p->symbol = prof ? dls_profile_name(prof) : NULL;
    p->path = x->path;
    p->host_visible = x->device.device_type == kDLCPU || x->device.device_type == kDLCUDAHost ||
                      x->device.device_type == kDLCUDAManaged;
    dls_managed_view v;
    if (!dls_managed_view_of((void *)x->tensor, x->versioned, &v) && v.tensor->ndim > 0 && v.tensor->shape) {
        p->ndim = v.tensor->ndim < DLS_POL_NDIM ? v.tensor->ndim : DLS_POL_NDIM;
        memcpy(p->shape, v.tensor->shape, (size_t)p->ndim * sizeof *p->shape);
    }
    p->read_only =
        !dls_managed_view_of((void *)x->tensor, x->versioned, &v) && (v.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    return p;
}

/* Puts x at the head of the list at *head. */
static void push(dls_pol_x **head, dls_pol_x *x)
{
    x->next = *head;
    if (x->next)
        x->next->pprev = &x->next;
    x->pprev = head;
    *head = x;
}

/* Takes x out of whichever list holds it (nothing when none does). */
static void unlink_x(dls_pol_x *x)
{
    if (!x->pprev)
        return;
    *x->pprev = x->next;
    if (x->next)
        x->next->pprev = x->pprev;
    x->next = NULL;
    x->pprev = NULL;
}

void dls_pol_x_link(dls_pol_x *x)
{
    push(&dls_pol_g.live, x);
    dls_pol_index_add(x);
}

void dls_pol_x_drop(dls_pol_x *x)
{
    if (x->released && x->pprev)
        dls_pol_g.nreleased--;
    unlink_x(x);
    dls_pol_index_remove(x);
    recycle(x);
}

void dls_pol_x_release(dls_pol_x *x)
{
    unlink_x(x);
    x->released = 1;
    for (unsigned i = 0; i < x->nuse; i++)
        x->use[i].rel = x->use[i].pos;
    x->released_syncs = dls_pol_g.syncs;
    push(&dls_pol_g.released, x);
    if (++dls_pol_g.nreleased > DLS_POL_RELEASED) {
        dls_pol_x *old = dls_pol_g.released;
        while (old->next)
            old = old->next;
        unlink_x(old);
        dls_pol_g.nreleased--;
        dls_pol_index_remove(old);
        recycle(old);
    }
}

int dls_pol_x_uses_complete(const dls_pol_x *x, uint64_t tid, uint64_t begin)
{
    if (x->overflow & DLS_POL_OVER_USES)
        return 0;
    for (unsigned i = 0; i < x->nuse; i++) {
        dls_hb_epoch at = {.stream = x->use[i].stream, .pos = x->use[i].pos};
        if (!dls_pol_ordered(tid, DLS_POL_HOST_STREAM, begin, &at))
            return 0;
    }
    return 1;
}

int dls_pol_x_front_complete(const dls_pol_x *x, uint64_t tid, uint64_t begin)
{
    if (x->overflow & DLS_POL_OVER_PRODUCERS)
        return 0;
    for (unsigned i = 0; i < x->nfront; i++)
        if (!dls_pol_ordered(tid, DLS_POL_HOST_STREAM, begin, &x->front[i].at))
            return 0;
    return 1;
}

int dls_pol_x_released_done(const dls_pol_x *x, uint64_t tid, uint64_t begin)
{
    return dls_pol_g.syncs > x->released_syncs && dls_pol_x_uses_complete(x, tid, begin);
}

void dls_pol_x_forget_released(const dls_pol_x *x, uint64_t tid)
{
    for (dls_pol_x *r = dls_pol_g.released, *next; r; r = next) {
        next = r->next;
        if (r->lo < x->hi && x->lo < r->hi &&
            (dls_pol_g.mode != DLS_MODE_FIX || dls_pol_x_uses_complete(r, tid, DLS_HB_NOW)))
            dls_pol_x_drop(r);
    }
}

int dls_pol_x_is_ordered(const dls_pol_x *x, uint64_t stream)
{
    for (unsigned i = 0; i < x->nordered; i++)
        if (x->ordered[i] == stream)
            return 1;
    return 0;
}

void dls_pol_x_mark_ordered(dls_pol_x *x, uint64_t stream)
{
    if (x->nordered < DLS_POL_USES && !dls_pol_x_is_ordered(x, stream))
        x->ordered[x->nordered++] = stream;
}

/* x's use of stream `stream`, added when there is none (NULL when x has no room: overflow set). */
static dls_pol_use *use_of(dls_pol_x *x, uint64_t stream)
{
    for (unsigned i = 0; i < x->nuse; i++)
        if (x->use[i].stream == stream)
            return &x->use[i];
    if (x->nuse == DLS_POL_USES) {
        x->overflow |= DLS_POL_OVER_USES;
        dls_warn_once("policy-consumers", "an exchanged tensor is used on more than %d streams; %s", DLS_POL_USES,
                      dls_pol_g.mode == DLS_MODE_FIX ? "its writers and its release wait for every stream with "
                                                       "pending work"
                                                     : "the extra streams are not checked");
        return NULL;
    }
    dls_pol_use *u = &x->use[x->nuse++];
    memset(u, 0, sizeof *u);
    u->stream = stream;
    return u;
}

void dls_pol_x_note_use(dls_pol_x *x, uint64_t stream, uint64_t pos, const char *name, dls_pol_dir dir,
                        dls_pol_after *after)
{
    dls_pol_use *u = use_of(x, stream);
    if (!u || pos <= u->pos)
        return;
    u->pos = pos;
    dls_text_copy(u->name, sizeof u->name, name);
    dls_pol_after_put(u->after); /* it follows an earlier access */
    u->after = dls_pol_after_get(after);
    if (dir != DLS_POL_READS) {
        u->write = pos;
        memcpy(u->wname, u->name, DLS_POL_NAME);
    }
    if (dir == DLS_POL_WRITES) {
        u->known = pos;
        memcpy(u->kname, u->name, DLS_POL_NAME);
    }
}

int dls_pol_x_produced_on(const dls_pol_x *x, uint64_t stream)
{
    for (unsigned i = 0; i < x->nprod; i++)
        if (x->prod[i] == stream)
            return 1;
    return 0;
}

void dls_pol_capture_use(const dls_pol_access *a, const dls_pol_stream *st)
{
    for (dls_pol_x *x = dls_pol_g.live; x; x = x->next)
        if (!dls_pol_x_is_ordered(x, st->id) && dls_pol_touches(a, x->lo, x->lo, x->hi))
            x->captured = 1;
}

dls_pol_dir dls_pol_direction(const dls_pol_access *a, const dls_pol_x *x, uint64_t stream)
{
    if (a->kind == DLS_OP_FREE)
        return DLS_POL_WRITES;
    if ((a->kind == DLS_OP_MEMCPY || a->kind == DLS_OP_MEMSET) && !a->conservative)
        return dls_pol_writes(a, x->lo, x->hi) ? DLS_POL_WRITES : DLS_POL_READS;
    if (a->kind == DLS_OP_GRAPH_LAUNCH && dls_pol_graph_writes(a->graph_exec, x->lo, x->hi))
        return DLS_POL_WRITES;
    if (x->read_only && !dls_pol_x_produced_on(x, stream))
        return DLS_POL_READS;
    return DLS_POL_MAY_WRITE;
}
