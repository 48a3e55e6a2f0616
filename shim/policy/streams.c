/* The policy's stream table, the rings of recent operations, host-completion bookkeeping and
 * producer attribution (see pol.h). Every function runs with dls_pol_g.lock held, except
 * dls_pol_entry_fill, dls_pol_entry_fill_work and dls_pol_stream_find_unlocked. */
#include "pol.h"

#include "../common/config.h"
#include "../cuda/cuda_api.h"
#include "../report/warn.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

dls_pol_stream *dls_pol_stream_find(uint64_t id)
{
    if (!dls_pol_g.cap)
        return NULL;
    for (size_t i = slot_of(id, dls_pol_g.cap);; i = (i + 1) & (dls_pol_g.cap - 1)) {
        dls_pol_stream *s = dls_pol_g.streams[i];
        if (!s || s->id == id)
            return s;
    }
}

dls_pol_stream *dls_pol_stream_find_unlocked(uint64_t id)
{
    size_t cap = __atomic_load_n(&dls_pol_g.cap, __ATOMIC_ACQUIRE); /* then the array: never a smaller one */
    dls_pol_stream **t = __atomic_load_n(&dls_pol_g.streams, __ATOMIC_ACQUIRE);
    if (!cap || !t)
        return NULL;
    size_t i = slot_of(id, cap);
    for (size_t n = 0; n < cap; n++, i = (i + 1) & (cap - 1)) { /* bounded: cap may be the old one's */
        dls_pol_stream *s = __atomic_load_n(&t[i], __ATOMIC_ACQUIRE);
        if (!s || s->id == id)
            return s;
    }
    return NULL;
}

/* Arrays replaced by bigger ones: kept for lock-free readers still walking them (the table only
 * doubles, so there are fewer than 64 of them, and what they hold is less than the current one). */
static dls_pol_stream **g_replaced[64];
static unsigned g_nreplaced;

/* Inserts s, growing the table at half load. Returns 0 or -1 (memory). Slots, the array and its
 * capacity are stored atomically for dls_pol_stream_find_unlocked: a grown array is published
 * before its capacity. */
static int insert(dls_pol_stream *s)
{
    if (2 * (dls_pol_g.nstreams + 1) > dls_pol_g.cap) {
        size_t cap = dls_pol_g.cap ? 2 * dls_pol_g.cap : 64;
        dls_pol_stream **t = g_nreplaced < 64 ? calloc(cap, sizeof *t) : NULL;
        if (!t)
            return -1;
        for (size_t i = 0; i < dls_pol_g.cap; i++) {
            dls_pol_stream *o = dls_pol_g.streams[i];
            if (!o)
                continue;
            size_t j = slot_of(o->id, cap);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = o;
        }
        if (dls_pol_g.streams)
            g_replaced[g_nreplaced++] = dls_pol_g.streams;
        __atomic_store_n(&dls_pol_g.streams, t, __ATOMIC_RELEASE);
        __atomic_store_n(&dls_pol_g.cap, cap, __ATOMIC_RELEASE);
    }
    size_t j = slot_of(s->id, dls_pol_g.cap);
    while (dls_pol_g.streams[j])
        j = (j + 1) & (dls_pol_g.cap - 1);
    __atomic_store_n(&dls_pol_g.streams[j], s, __ATOMIC_RELEASE);
    dls_pol_g.nstreams++;
    return 0;
}

void dls_pol_stream_table_reset_for_tests(void)
{
    for (size_t i = 0; i < dls_pol_g.cap; i++)
        free(dls_pol_g.streams[i]);
    free(dls_pol_g.streams);
    while (g_nreplaced)
        free(g_replaced[--g_nreplaced]);
    __atomic_store_n(&dls_pol_g.streams, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&dls_pol_g.cap, 0, __ATOMIC_RELEASE);
    dls_pol_g.nstreams = 0;
    dls_pol_g.last = NULL;
}

static dls_hb_stream_kind hb_kind(dls_stream_kind k)
{
    switch (k) {
    case DLS_STREAM_LEGACY:
        return DLS_HB_LEGACY;
    case DLS_STREAM_PER_THREAD:
        return DLS_HB_PER_THREAD;
    case DLS_STREAM_BLOCKING:
        return DLS_HB_BLOCKING;
    default:
        return DLS_HB_NON_BLOCKING; /* unknown flags: assume no implicit ordering */
    }
}

dls_pol_stream *dls_pol_stream_get(const dls_cuda_stream *s, uint64_t tid)
{
    if (!s->resolved || !s->id)
        return NULL;
    dls_pol_stream *st = dls_pol_g.last;
    if (st && st->id == s->id)
        return st;
    st = dls_pol_stream_find(s->id);
    if (st)
        return dls_pol_g.last = st;
    st = calloc(1, sizeof *st);
    if (!st) {
        dls_pol_degrade("policy-stream-memory", "out of memory recording a CUDA stream");
        return NULL;
    }
    st->id = s->id;
    st->ctx = s->ctx;
    st->ctx_id = s->ctx_id;
    st->device = s->device;
    st->kind = s->kind;
    st->handle = s->kind == DLS_STREAM_LEGACY       ? (uintptr_t)CU_STREAM_LEGACY
                 : s->kind == DLS_STREAM_PER_THREAD ? (uintptr_t)CU_STREAM_PER_THREAD
                                                    : s->handle;
    st->owner = s->kind == DLS_STREAM_PER_THREAD ? tid : 0;
    int r = dls_hb_stream_add(dls_pol_g.hb, st->id, (uint64_t)st->ctx, hb_kind(s->kind));
    if (r == EINVAL && s->kind == DLS_STREAM_LEGACY) /* a second legacy id in a context: model it as blocking */
        r = dls_hb_stream_add(dls_pol_g.hb, st->id, (uint64_t)st->ctx, DLS_HB_BLOCKING);
    if ((r && r != EEXIST) || insert(st)) {
        free(st);
        if (!r || r == ENOMEM || r == EEXIST)
            dls_pol_degrade("policy-stream-memory", "out of memory recording a CUDA stream");
        return NULL;
    }
    return st;
}

const char *dls_pol_op_name(const dls_cuda_op *op)
{
    if (op->kind == DLS_OP_LAUNCH && op->name)
        return op->name;
    return op->api;
}

void dls_pol_ring_forget_all(dls_pol_stream *st, const dls_pol_entry *e)
{
    st->lost_cons |= e->conservative;
    for (unsigned i = 0; i < e->nwords; i++)
        if (e->words[i] >= 4096)
            dls_pol_lost_widen(st, (uintptr_t)e->words[i], (uintptr_t)e->words[i] + 1);
    for (unsigned i = 0; i < e->nranges; i++)
        dls_pol_lost_widen(st, e->lo[i], e->hi[i]);
}

/* Fills e (all but pos) from what an operation of kind k (flags, correlation id, API, kernel name,
 * ranges, words) touches. */
__attribute__((noinline)) static void fill(dls_pol_entry *e, dls_op_kind k, unsigned flags, uint32_t corr,
                                           const char *api, const char *name, const dls_cuda_range *ranges,
                                           uint32_t nranges, const uint64_t *words, uint32_t nwords)
{
    if (k != DLS_OP_LAUNCH && k != DLS_OP_GRAPH_LAUNCH && !(flags & DLS_OPF_CONSERVATIVE) && nranges <= 2) {
        dls_pol_entry_fill_ranges(e, corr, api, ranges, nranges);
        return;
    }
    e->op = corr;
    e->api = api;
    e->conservative = (flags & DLS_OPF_CONSERVATIVE) || k == DLS_OP_GRAPH_LAUNCH;
    e->nwords = 0;
    e->nranges = 0;
    e->boxed = 0;
    if (!e->conservative && nwords <= DLS_POL_WORDS) {
        e->nwords = (uint8_t)nwords;
        if (nwords) /* words may be NULL then */
            memcpy(e->words, words, nwords * sizeof *e->words);
    } else if (!e->conservative) { /* a wide launch: the bounding box of its pointer-like words */
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (uint32_t i = 0; i < nwords; i++)
            if (words[i] >= 4096) {
                lo = words[i] < lo ? (uintptr_t)words[i] : lo;
                hi = words[i] >= hi ? (uintptr_t)words[i] + 1 : hi;
            }
        if (lo < hi) {
            e->lo[0] = lo;
            e->hi[0] = hi;
            e->nranges = 1;
            e->boxed = 1;
        }
    }
    for (uint32_t i = 0; i < nranges && !e->conservative; i++) {
        if (e->nranges == 2) {
            e->conservative = 1;
            break;
        }
        e->lo[e->nranges] = ranges[i].addr;
        e->hi[e->nranges] = ranges[i].addr + ranges[i].len;
        e->nranges++;
    }
    size_t n = 0;
    if (k == DLS_OP_LAUNCH && name) {
        n = strnlen(name, DLS_POL_NAME - 1);
        memcpy(e->name, name, n);
    }
    e->name[n] = '\0';
}

void dls_pol_entry_fill(dls_pol_entry *e, const dls_cuda_op *op)
{
    fill(e, op->kind, op->flags, op->correlation_id, op->api, op->name, op->ranges, op->nranges, op->words, op->nwords);
}

void dls_pol_entry_fill_launch(dls_pol_entry *e, const dls_cuda_work *w)
{
    fill(e, w->kind, w->flags, w->correlation_id, w->api, w->name, w->ranges, w->nranges, w->words, w->nwords);
}

void dls_pol_stream_done(dls_pol_stream *st, uint64_t pos)
{
    if (pos > st->done)
        st->done = pos;
}

int dls_pol_entry_touches(const dls_pol_entry *e, uintptr_t alo, uintptr_t lo, uintptr_t hi)
{
    if (e->conservative)
        return 1;
    for (unsigned i = 0; i < e->nwords; i++)
        if (e->words[i] >= alo && e->words[i] < hi)
            return 1;
    for (unsigned i = 0; i < e->nranges; i++)
        if (e->lo[i] < hi && (e->boxed ? alo : lo) < e->hi[i])
            return 1;
    return 0;
}

int dls_pol_op_touches(const dls_cuda_op *op, uintptr_t lo, uintptr_t hi)
{
    switch (op->kind) {
    case DLS_OP_GRAPH_LAUNCH:
        return 1;
    case DLS_OP_LAUNCH:
    case DLS_OP_MEMCPY:
    case DLS_OP_MEMSET:
        break;
    default:
        return 0;
    }
    if (op->flags & DLS_OPF_CONSERVATIVE)
        return 1;
    for (uint32_t i = 0; i < op->nwords; i++)
        if (op->words[i] >= lo && op->words[i] < hi)
            return 1;
    for (uint32_t i = 0; i < op->nranges; i++)
        if (op->ranges[i].addr < hi && lo < op->ranges[i].addr + op->ranges[i].len)
            return 1;
    return 0;
}

void dls_pol_attribute(dls_pol_x *x)
{
    x->nfront = 0;
    x->overflow &= ~DLS_POL_OVER_PRODUCERS;
    for (size_t i = 0; i < dls_pol_g.cap; i++) {
        dls_pol_stream *s = dls_pol_g.streams[i];
        if (!s || s->last <= s->done)
            continue;
        const dls_pol_entry *best = NULL;
        uint64_t pos = s->lost > s->done && (s->lost_cons || (s->lost_lo < x->hi && x->alo < s->lost_hi)) ? s->lost : 0;
        for (unsigned k = 0; k < s->count; k++) {
            const dls_pol_entry *e = &s->ring[k];
            if (e->pos > s->done && e->pos > pos && dls_pol_entry_touches(e, x->alo, x->lo, x->hi)) {
                pos = e->pos;
                best = e;
            }
        }
        if (!pos)
            continue;
        if (x->nfront == DLS_POL_MAXF) {
            x->overflow |= DLS_POL_OVER_PRODUCERS;
            dls_warn_once("policy-frontier", "an exchanged tensor has pending writers on more than %d streams; %s",
                          DLS_POL_MAXF,
                          dls_pol_g.mode == DLS_MODE_FIX ? "its consumers wait for every stream with pending work"
                                                         : "the extra streams are not checked");
            return;
        }
        dls_pol_touch *t = &x->front[x->nfront++];
        t->at.stream = s->id;
        t->at.pos = pos;
        t->api = best ? best->api : NULL;
        memcpy(t->name, best ? best->name : "", best ? DLS_POL_NAME : 1);
        if (!best)
            snprintf(t->name, sizeof t->name, "(an operation no longer in the history)");
    }
}
