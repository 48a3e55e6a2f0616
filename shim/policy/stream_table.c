/* The policy's table of streams (see stream_table.h): open addressing by id, under the lock. A
 * forgotten stream leaves the table by backward-shift deletion; the stream itself is kept (a plan
 * or a deferred record may still point to it), its history freed. */
#include "stream_table.h"

#include <errno.h>
#include <stdlib.h>

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

/* Inserts s, growing the table at half load. Returns 0 or -1 (memory). */
static int insert(dls_pol_stream *s)
{
    if (2 * (dls_pol_g.nstreams + 1) > dls_pol_g.cap) {
        size_t cap = dls_pol_g.cap ? 2 * dls_pol_g.cap : 64;
        dls_pol_stream **t = calloc(cap, sizeof *t);
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
        free(dls_pol_g.streams);
        dls_pol_g.streams = t;
        dls_pol_g.cap = cap;
    }
    size_t j = slot_of(s->id, dls_pol_g.cap);
    while (dls_pol_g.streams[j])
        j = (j + 1) & (dls_pol_g.cap - 1);
    dls_pol_g.streams[j] = s;
    dls_pol_g.nstreams++;
    return 0;
}

/* Forgotten streams, newest first: never freed while the process runs. */
static dls_pol_stream *g_forgotten;

/* Takes slot i's stream out of the table, shifting back the streams its removal would cut off
 * from their home slot. */
static void table_remove(size_t i)
{
    size_t mask = dls_pol_g.cap - 1;
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        dls_pol_stream *s = dls_pol_g.streams[j];
        if (!s)
            break;
        size_t home = slot_of(s->id, dls_pol_g.cap);
        if (((j - home) & mask) >= ((j - i) & mask)) { /* home is not in (i, j]: s moves to i */
            dls_pol_g.streams[i] = s;
            i = j;
        }
    }
    dls_pol_g.streams[i] = NULL;
    dls_pol_g.nstreams--;
}

/* Forgets removed stream st (its work is complete): out of the table and of hb, history freed.
 * Returns 0, or -1 when hb is short of memory (st stays a removed stream). */
static int forget(dls_pol_stream *st)
{
    size_t i = slot_of(st->id, dls_pol_g.cap);
    while (dls_pol_g.streams[i] != st)
        i = (i + 1) & (dls_pol_g.cap - 1);
    if (dls_hb_stream_forget(dls_pol_g.hb, st->id) != 0)
        return -1;
    table_remove(i);
    if (dls_pol_g.last == st)
        dls_pol_g.last = NULL;
    free(st->ring);
    st->ring = NULL;
    st->count = 0;
    st->forgotten = g_forgotten;
    g_forgotten = st;
    return 0;
}

void dls_pol_stream_remove(dls_pol_stream *st)
{
    if (st->removed || dls_hb_stream_remove(dls_pol_g.hb, st->id) != 0)
        return;
    st->removed = 1;
    if (st->last <= st->done)
        (void)forget(st); /* kept removed when memory is short */
}

void dls_pol_stream_forget_done(void)
{
    for (int more = 1; more;) { /* forgetting shifts the table: collect, then forget */
        dls_pol_stream *done[32];
        unsigned n = 0;
        for (size_t i = 0; i < dls_pol_g.cap && n < 32; i++) {
            dls_pol_stream *s = dls_pol_g.streams[i];
            if (s && s->removed && s->last <= s->done)
                done[n++] = s;
        }
        more = n == 32;
        for (unsigned k = 0; k < n; k++)
            if (forget(done[k]))
                more = 0; /* memory is short: the rest stay removed */
    }
}

void dls_pol_stream_table_reset_for_tests(void)
{
    for (size_t i = 0; i < dls_pol_g.cap; i++)
        if (dls_pol_g.streams[i]) {
            free(dls_pol_g.streams[i]->ring);
            free(dls_pol_g.streams[i]);
        }
    while (g_forgotten) {
        dls_pol_stream *next = g_forgotten->forgotten;
        free(g_forgotten);
        g_forgotten = next;
    }
    free(dls_pol_g.streams);
    dls_pol_g.streams = NULL;
    dls_pol_g.cap = 0;
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
