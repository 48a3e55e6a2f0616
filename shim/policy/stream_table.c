/* The policy's table of streams (see stream_table.h): a dls_map by id (common/map.h), under the
 * lock. A forgotten stream leaves the table, its history freed; its record waits in the forgotten
 * list until nothing holds it (under check, check's latest forgotten streams hold theirs). */
#include "stream_table.h"

#include "../common/config.h"

#include <errno.h>
#include <stdlib.h>

dls_pol_stream *dls_pol_stream_find(uint64_t id)
{
    dls_pol_stream **found = &dls_pol_g.found[id % DLS_POL_FOUND]; /* in the table while set */
    if (*found && (*found)->id == id)
        return *found;
    const dls_pol_stream_slot *sl = dls_map_get(&dls_pol_g.streams, id);
    return sl ? (*found = sl->st) : NULL;
}

/* Inserts s, which the table does not hold, growing the table when it is half full. Returns 0 or
 * -1 (memory). */
static int insert(dls_pol_stream *s)
{
    dls_map *m = &dls_pol_g.streams;
    if (dls_pol_g.nlisted == dls_pol_g.caplisted) {
        uint32_t cap = dls_pol_g.caplisted ? 2 * dls_pol_g.caplisted : 16;
        dls_pol_stream **more = realloc(dls_pol_g.listed, cap * sizeof *more);
        if (!more)
            return -1;
        dls_pol_g.listed = more;
        dls_pol_g.caplisted = cap;
    }
    if (dls_map_full(m)) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        void *slots = calloc(cap, sizeof(dls_pol_stream_slot));
        if (!slots)
            return -1;
        free(dls_map_rehash(m, slots, cap));
    }
    dls_pol_stream_slot *sl = dls_map_claim(m, dls_map_index(m, s->id), s->id);
    sl->st = s;
    s->listed = dls_pol_g.nlisted;
    dls_pol_g.listed[dls_pol_g.nlisted++] = s;
    return 0;
}

/* Under check, hb keeps a forgotten stream while it is among the latest DLS_POL_RECENT forgotten:
 * a call that began before its work was known complete may still ask what other streams' clocks
 * know of it (dls_pol_stream_find_forgotten). hb cannot refuse: it knows st removed
 * (dls_pol_stream_remove). */
void dls_pol_stream_forget(dls_pol_stream *st)
{
    dls_pol_g.nremoved--;
    dls_pol_stream *out = st;
    if (dls_pol_g.mode == DLS_MODE_CHECK) {
        out = dls_pol_g.forgotten.recent[dls_pol_g.forgotten.nrecent % DLS_POL_RECENT];
        dls_pol_g.forgotten.recent[dls_pol_g.forgotten.nrecent++ % DLS_POL_RECENT] = dls_pol_stream_hold(st);
    }
    if (out)
        (void)dls_hb_stream_forget(dls_pol_g.hb, out->id);
    if (out != st)
        dls_pol_stream_drop(out);
    dls_map_remove_at(&dls_pol_g.streams, dls_map_index(&dls_pol_g.streams, st->id));
    dls_pol_stream *moved = dls_pol_g.listed[--dls_pol_g.nlisted];
    dls_pol_g.listed[st->listed] = moved;
    moved->listed = st->listed;
    if (dls_pol_g.found[st->id % DLS_POL_FOUND] == st)
        dls_pol_g.found[st->id % DLS_POL_FOUND] = NULL;
    free(st->ring);
    st->ring = NULL;
    st->count = 0;
    st->forgotten = dls_pol_g.forgotten.list;
    dls_pol_g.forgotten.list = st;
}

void dls_pol_stream_reap(void)
{
    for (dls_pol_stream **p = &dls_pol_g.forgotten.list, *st; (st = *p);) {
        if (atomic_load_explicit(&st->holds, memory_order_acquire)) {
            p = &st->forgotten;
        } else {
            *p = st->forgotten;
            free(st);
        }
    }
}

dls_pol_stream *dls_pol_stream_find_forgotten(uint64_t id)
{
    for (unsigned i = 0; i < DLS_POL_RECENT; i++)
        if (dls_pol_g.forgotten.recent[i] && dls_pol_g.forgotten.recent[i]->id == id)
            return dls_pol_g.forgotten.recent[i];
    return NULL;
}

void dls_pol_stream_remove(dls_pol_stream *st)
{
    if (st->removed || dls_hb_stream_remove(dls_pol_g.hb, st->id) != 0)
        return;
    st->removed = 1;
    dls_pol_g.nremoved++;
    if (st->last <= st->done)
        dls_pol_stream_forget(st);
}

void dls_pol_stream_forget_done(void)
{
    for (int more = 1; more;) { /* forgetting shifts the table: collect, then forget */
        dls_pol_stream *done[32];
        unsigned n = 0;
        dls_pol_stream *s;
        DLS_POL_EACH_STREAM (s) {
            if (n == 32)
                break;
            if (s->removed && s->last <= s->done)
                done[n++] = s;
        }
        more = n == 32;
        for (unsigned k = 0; k < n; k++)
            dls_pol_stream_forget(done[k]);
    }
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
    dls_pol_stream *st = dls_pol_stream_find(s->id);
    if (st)
        return st;
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
