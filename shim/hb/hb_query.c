/* The happens-before engine's questions: ordering and the waits for a captured frontier (see
 * hb.h). Queries leave the model unchanged; the waits use the engine's scratch arrays. */
#include "hb_internal.h"

#include <errno.h>

/* Who is about to act: the next operation of thread t on stream s. It is ordered after what t
 * observed, what s's last operation is ordered after, and what the legacy rules add: the live
 * legacy stream's last operation for a blocking s, the changed blocking streams (the rest are already in its clock) for a legacy s. */
typedef struct {
    const dls_hb *e;
    uint64_t thread;
    const dls_hb_thread *t;
    const dls_hb_stream *s;
    uint32_t slot;
    const dls_hb_stream *leg;
    uint32_t leg_slot;
    const dls_hb_ctx *dirty_ctx;
} observer;

static int observer_init(const dls_hb *e, uint64_t thread, uint64_t stream, observer *o)
{
    *o = (observer){.e = e, .thread = thread, .t = dls_hb_find_thread(e, thread)};
    o->slot = dls_hb_find_stream(e, stream);
    if (o->slot == DLS_HB_NONE || e->streams[o->slot].removed)
        return ENOENT;
    o->s = &e->streams[o->slot];
    const dls_hb_ctx *c = &e->ctxs[o->s->ctx];
    if (dls_hb_is_blocking(o->s) && c->legacy != DLS_HB_NONE) {
        o->leg = &e->streams[c->legacy];
        o->leg_slot = c->legacy;
    }
    if (o->s->kind == DLS_HB_LEGACY)
        o->dirty_ctx = c;
    return 0;
}

/* Whether the observer's prospective action is ordered after position pos of slot. */
static int knows(const observer *o, uint32_t slot, uint64_t pos)
{
    if (pos == 0 || (o->t && dls_hb_clk_get(o->t->clk, slot) >= pos))
        return 1;
    if (dls_hb_stream_knows(o->s, o->slot, slot, pos))
        return 1;
    if (o->leg && dls_hb_stream_knows(o->leg, o->leg_slot, slot, pos))
        return 1;
    if (o->dirty_ctx)
        for (uint32_t i = 0; i < o->dirty_ctx->ndirty; i++) {
            uint32_t b = o->dirty_ctx->dirty[i];
            const dls_hb_stream *bs = &o->e->streams[b];
            if (o->e->wary && bs->kind == DLS_HB_BLOCKING && bs->last_thread != o->thread)
                continue; /* another thread's: it may be destroyed before the asking operation is enqueued */
            if (dls_hb_stream_knows(bs, b, slot, pos))
                return 1;
        }
    return 0;
}

void dls_hb_set_wary(dls_hb *e, int wary)
{
    e->wary = wary != 0;
}

static void cand_begin(dls_hb *e)
{
    if (++e->stamp == 0) {
        for (uint32_t i = 0; i < e->stream_slots.n; i++)
            e->mark[i] = 0;
        e->stamp = 1;
    }
}

static void cand_add(dls_hb *e, uint32_t *ncand, uint32_t slot)
{
    if (e->mark[slot] != e->stamp) {
        e->mark[slot] = e->stamp;
        e->cand[(*ncand)++] = slot;
    }
}

/* Reduces the candidate streams to the waits: one per stream at its current position, dropping
 * a stream whose last operation is ordered before another candidate's; sorted by stream id. */
static void emit_waits(dls_hb *e, uint32_t ncand, dls_hb_epoch *out, size_t cap, size_t *n)
{
    uint32_t keep = 0;
    for (uint32_t i = 0; i < ncand; i++) {
        uint32_t x = e->cand[i];
        int dominated = 0;
        for (uint32_t j = 0; j < ncand && !dominated; j++)
            dominated = j != i && dls_hb_clk_get(e->streams[e->cand[j]].clk, x) >= e->streams[x].pos;
        if (!dominated)
            e->mark[x] = e->stamp - 1; /* any value but stamp: kept */
    }
    for (uint32_t i = 0; i < ncand; i++)
        if (e->mark[e->cand[i]] != e->stamp)
            e->cand[keep++] = e->cand[i];
    for (uint32_t i = 1; i < keep; i++) {
        uint32_t v = e->cand[i], j = i;
        for (; j > 0 && e->streams[e->cand[j - 1]].id > e->streams[v].id; j--)
            e->cand[j] = e->cand[j - 1];
        e->cand[j] = v;
    }
    for (uint32_t i = 0; i < keep && i < cap; i++)
        out[i] = (dls_hb_epoch){.stream = e->streams[e->cand[i]].id, .pos = e->streams[e->cand[i]].pos};
    *n = keep;
}

int dls_hb_frontier_waits(dls_hb *e, uint64_t thread, uint64_t stream, const dls_hb_epoch *f, size_t nf,
                          dls_hb_epoch *out, size_t cap, size_t *n)
{
    observer o;
    if (observer_init(e, thread, stream, &o) != 0)
        return ENOENT;
    for (size_t i = 0; i < nf; i++)
        if (dls_hb_find_stream(e, f[i].stream) == DLS_HB_NONE)
            return EINVAL;
    cand_begin(e);
    uint32_t ncand = 0;
    for (size_t i = 0; i < nf; i++) {
        uint32_t slot = dls_hb_find_stream(e, f[i].stream);
        if (!knows(&o, slot, f[i].pos))
            cand_add(e, &ncand, slot);
    }
    emit_waits(e, ncand, out, cap, n);
    return 0;
}

int dls_hb_ordered(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t x, uint64_t pos, int *ordered)
{
    observer o;
    uint32_t slot = dls_hb_find_stream(e, x);
    if (slot == DLS_HB_NONE || observer_init(e, thread, stream, &o) != 0)
        return ENOENT;
    *ordered = knows(&o, slot, pos);
    return 0;
}
