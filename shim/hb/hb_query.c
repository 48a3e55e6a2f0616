/* The happens-before engine's questions: ordering and the waits for a captured frontier (see
 * hb.h). Queries leave the model unchanged; the waits use the engine's scratch arrays. */
#include "hb_internal.h"

#include <errno.h>

/* Who is about to act: the next operation of thread t on stream s, of a call that began at
 * `begin` (DLS_HB_NOW: after every call told so far). It is ordered after what t observed, what
 * s's last operation is ordered after, and what the legacy rules add: the live legacy stream's
 * last operation for a blocking s, the blocking streams for a legacy s (the changed ones when
 * asked now, the rest being in s's clock already) -- each stream as of `begin` (its last
 * operation whose call ended before it, dls_hb_asof). */
typedef struct {
    const dls_hb *e;
    uint64_t thread, begin;
    const dls_hb_thread *t;
    uint32_t slot;
    uint64_t pos; /* s as of begin: its position and clock */
    dls_hb_clk *clk;
    uint64_t self_pos; /* s's last position whose call ended before begin, as far as its ends go */
    uint32_t leg_slot; /* DLS_HB_NONE: no legacy stream joins s */
    uint64_t leg_pos;  /* the legacy stream as of begin */
    dls_hb_clk *leg_clk;
    const dls_hb_ctx *legacy_ctx; /* s is the legacy stream of this context */
} observer;

/* The last position of s whose operation ended before `begin`, from its ends (0: none kept). Ends
 * grow with positions, so the positions that qualify are a prefix of the window kept. */
static uint64_t asof_self(const dls_hb_stream *s, uint64_t begin)
{
    if (s->end < begin)
        return s->pos;
    uint64_t lo = s->pos - s->base > DLS_HB_ENDS ? s->pos - DLS_HB_ENDS + 1 : s->base + 1, hi = s->pos, found = 0;
    while (lo <= hi && lo > s->base) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->ends[mid % DLS_HB_ENDS] < begin) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static int observer_init(const dls_hb *e, uint64_t thread, uint64_t stream, uint64_t begin, observer *o)
{
    *o = (observer){.e = e, .thread = thread, .begin = begin, .t = dls_hb_find_thread(e, thread)};
    o->slot = dls_hb_find_stream(e, stream);
    if (o->slot == DLS_HB_NONE || e->streams[o->slot].removed)
        return ENOENT;
    const dls_hb_stream *s = &e->streams[o->slot];
    o->pos = dls_hb_asof(s, begin, &o->clk);
    if (o->t && o->t->own_stream == stream && o->t->own_slot == o->slot && o->t->own_pos > o->pos) {
        o->pos = o->t->own_pos; /* the thread's own last operation: every later call of it follows */
        o->clk = o->t->own_clk;
    }
    o->self_pos = o->pos > 0 || begin == DLS_HB_NOW ? o->pos : asof_self(s, begin);
    const dls_hb_ctx *c = &e->ctxs[s->ctx];
    o->leg_slot = DLS_HB_NONE;
    if (dls_hb_is_blocking(s) && c->legacy != DLS_HB_NONE) {
        o->leg_slot = c->legacy;
        o->leg_pos = dls_hb_asof(&e->streams[c->legacy], begin, &o->leg_clk);
    }
    if (s->kind == DLS_HB_LEGACY)
        o->legacy_ctx = c;
    return 0;
}

/* Whether (slot, pos) is in what a stream's operation at position `at` of slot `self` with
 * clock clk is ordered after (itself included). */
static int point_knows(uint32_t self, uint64_t at, const dls_hb_clk *clk, uint32_t slot, uint64_t pos)
{
    return slot == self ? pos <= at : dls_hb_clk_get(clk, slot) >= pos;
}

/* Whether a legacy stream's next operation is ordered after (slot, pos) through the blocking
 * streams of its context, o->legacy_ctx: asked now, the changed ones (wary: see dls_hb_set_wary);
 * asked as of a begin, every live one as of it (the legacy stream's own clock as of then misses
 * what a later legacy operation joined). */
static int blocking_knows(const observer *o, uint32_t slot, uint64_t pos)
{
    const dls_hb_ctx *c = o->legacy_ctx;
    int now = o->begin == DLS_HB_NOW;
    const uint32_t *list = now ? c->dirty : c->blk;
    for (uint32_t i = 0, n = now ? c->ndirty : c->nblk; i < n; i++) {
        const dls_hb_stream *bs = &o->e->streams[list[i]];
        if (now && o->e->wary && bs->kind == DLS_HB_BLOCKING && bs->last_thread != o->thread)
            continue; /* another thread's: it may be destroyed before the asking operation is enqueued */
        dls_hb_clk *bclk;
        uint64_t bpos = dls_hb_asof(bs, o->begin, &bclk);
        if (bpos && point_knows(list[i], bpos, bclk, slot, pos))
            return 1;
    }
    return 0;
}

/* Whether the observer's prospective action is ordered after position pos of slot. */
static int knows(const observer *o, uint32_t slot, uint64_t pos)
{
    if (pos == 0 || (o->t && dls_hb_clk_get(o->t->clk, slot) >= pos) || (slot == o->slot && pos <= o->self_pos))
        return 1;
    if (point_knows(o->slot, o->pos, o->clk, slot, pos))
        return 1;
    if (o->leg_slot != DLS_HB_NONE && o->leg_pos && point_knows(o->leg_slot, o->leg_pos, o->leg_clk, slot, pos))
        return 1;
    return o->legacy_ctx && blocking_knows(o, slot, pos);
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
    if (observer_init(e, thread, stream, DLS_HB_NOW, &o) != 0)
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

int dls_hb_ordered_as_of(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t begin, uint64_t x, uint64_t pos,
                         int *ordered)
{
    observer o;
    uint32_t slot = dls_hb_find_stream(e, x);
    if (slot == DLS_HB_NONE || observer_init(e, thread, stream, begin, &o) != 0)
        return ENOENT;
    *ordered = knows(&o, slot, pos);
    return 0;
}

int dls_hb_ordered(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t x, uint64_t pos, int *ordered)
{
    return dls_hb_ordered_as_of(e, thread, stream, DLS_HB_NOW, x, pos, ordered);
}

int dls_hb_op_before(const dls_hb *e, uint64_t x, uint64_t xpos, uint64_t y, uint64_t ypos, int *before)
{
    uint32_t xs = dls_hb_find_stream(e, x), ys = dls_hb_find_stream(e, y);
    if (xs == DLS_HB_NONE || ys == DLS_HB_NONE)
        return ENOENT;
    uint64_t at = 0;
    const dls_hb_clk *clk = xs == ys ? NULL : dls_hb_clock_at_or_below(&e->streams[ys], ypos, &at);
    *before = xs == ys ? xpos <= ypos : clk != NULL && point_knows(ys, at, clk, xs, xpos);
    return 0;
}
