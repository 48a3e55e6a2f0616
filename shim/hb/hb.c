/* The happens-before engine's model updates: streams, contexts, threads, operations and stream
 * host syncs (hb_event.c: events and captures; hb_query.c answers the questions). See hb.h. */
#include "hb_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Drops s's points, when it is forgotten (a removed stream is asked nothing as of a time, but
 * dls_hb_op_before still asks what its operations were ordered after). */
static void forget_points(dls_hb_stream *s)
{
    for (uint32_t i = 0; i < s->npts; i++)
        dls_hb_clk_release(s->pts[i].clk);
    s->npts = s->next_pt = 0;
}

dls_hb *dls_hb_create(void)
{
    dls_hb *e = calloc(1, sizeof(dls_hb));
    dls_hb_stream_hit *hits = malloc(DLS_HB_HITS * sizeof *hits);
    if (!e || !hits) {
        free(e);
        free(hits);
        return NULL;
    }
    for (int i = 0; i < DLS_HB_HITS; i++)
        hits[i].slot = DLS_HB_NONE;
    e->hits = hits;
    e->now = 1; /* ends are never 0, which marks a capture (dls_hb_cap) */
    return e;
}

void dls_hb_destroy(dls_hb *e)
{
    if (!e)
        return;
    for (uint32_t i = 0; i < e->stream_slots.n; i++) {
        dls_hb_clk_release(e->streams[i].clk);
        forget_points(&e->streams[i]);
        free(e->streams[i].tseen);
    }
    for (uint32_t i = 0; i < e->thread_slots.n; i++)
        if (e->threads[i].used) {
            dls_hb_clk_release(e->threads[i].clk);
            dls_hb_clk_release(e->threads[i].own_clk);
        }
    for (uint32_t i = 0; i < e->event_slots.n; i++)
        if (e->events[i].used)
            dls_hb_event_forget(&e->events[i]);
    for (uint32_t i = 0; i < e->nctxs; i++) {
        free(e->ctxs[i].all);
        free(e->ctxs[i].blk);
        free(e->ctxs[i].dirty);
    }
    free(e->streams);
    free(e->threads);
    free(e->events);
    free(e->ctxs);
    dls_hb_slab_free(&e->stream_slots);
    dls_hb_slab_free(&e->thread_slots);
    dls_hb_slab_free(&e->event_slots);
    free(e->hits);
    free(e->mark);
    free(e->cand);
    dls_hb_map_free(&e->stream_map);
    dls_hb_map_free(&e->thread_map);
    dls_hb_map_free(&e->event_map);
    dls_hb_map_free(&e->ctx_map);
    free(e);
}

/* The remembered lookup of stream id's place. */
static dls_hb_stream_hit *hit_of(const dls_hb *e, uint64_t id)
{
    return &e->hits[(id ^ id >> 3) & (DLS_HB_HITS - 1)];
}

uint32_t dls_hb_find_stream(const dls_hb *e, uint64_t id)
{
    dls_hb_stream_hit *h = hit_of(e, id);
    if (h->slot != DLS_HB_NONE && h->id == id)
        return h->slot;
    uint32_t slot = dls_hb_map_get(&e->stream_map, id);
    if (slot != DLS_HB_NONE) {
        h->id = id;
        h->slot = slot;
    }
    return slot;
}

dls_hb_thread *dls_hb_find_thread(const dls_hb *e, uint64_t id)
{
    uint32_t i = e->tid_cached && e->last_tid == id ? e->last_ti : dls_hb_map_get(&e->thread_map, id);
    return i == DLS_HB_NONE ? NULL : &e->threads[i];
}

/* Thread id's index (DLS_HB_NONE: it has no record), remembered for the next lookup. */
static uint32_t thread_index(dls_hb *e, uint64_t id)
{
    uint32_t ti = e->tid_cached && e->last_tid == id ? e->last_ti : dls_hb_map_get(&e->thread_map, id);
    e->last_tid = id;
    e->last_ti = ti;
    e->tid_cached = 1;
    return ti;
}

dls_hb_stream *dls_hb_live_stream(dls_hb *e, uint64_t id, uint32_t *slot)
{
    uint32_t i = dls_hb_find_stream(e, id);
    if (i == DLS_HB_NONE || e->streams[i].removed)
        return NULL;
    *slot = i;
    return &e->streams[i];
}

static int ctx_get(dls_hb *e, uint64_t id, uint32_t *out)
{
    uint32_t i = dls_hb_map_get(&e->ctx_map, id);
    if (i == DLS_HB_NONE) {
        if (dls_hb_grow((void **)&e->ctxs, &e->capctxs, e->nctxs + 1, sizeof *e->ctxs) != 0 ||
            dls_hb_map_put(&e->ctx_map, id, e->nctxs) != 0)
            return ENOMEM;
        i = e->nctxs++;
        e->ctxs[i].id = id;
        e->ctxs[i].legacy = DLS_HB_NONE;
    }
    *out = i;
    return 0;
}

/* Marks a live blocking stream changed since its context's legacy stream last joined it. */
static void mark_dirty(dls_hb *e, dls_hb_stream *s, uint32_t slot)
{
    if (!s->dirty && dls_hb_is_blocking(s) && !s->removed) {
        dls_hb_ctx *c = &e->ctxs[s->ctx];
        c->dirty[c->ndirty++] = slot;
        s->dirty = 1;
    }
}

int dls_hb_stream_add(dls_hb *e, uint64_t id, uint64_t ctx, dls_hb_stream_kind kind)
{
    if ((unsigned)kind > DLS_HB_NON_BLOCKING)
        return EINVAL;
    if (dls_hb_find_stream(e, id) != DLS_HB_NONE)
        return EEXIST;
    uint32_t ci;
    if (ctx_get(e, ctx, &ci) != 0)
        return ENOMEM;
    dls_hb_ctx *c = &e->ctxs[ci];
    if (kind == DLS_HB_LEGACY && c->legacy != DLS_HB_NONE)
        return EINVAL;
    int blocking = kind == DLS_HB_BLOCKING || kind == DLS_HB_PER_THREAD;
    uint32_t capd = c->capblk, capm = e->capscratch, capc = e->capscratch;
    if (dls_hb_slab_reserve(&e->stream_slots, (void **)&e->streams, sizeof *e->streams) != 0 ||
        dls_hb_grow((void **)&e->mark, &capm, e->stream_slots.cap, sizeof *e->mark) != 0 ||
        dls_hb_grow((void **)&e->cand, &capc, e->stream_slots.cap, sizeof *e->cand) != 0 ||
        dls_hb_grow((void **)&c->all, &c->capall, c->nall + 1, sizeof *c->all) != 0 ||
        (blocking && (dls_hb_grow((void **)&c->dirty, &capd, c->nblk + 1, sizeof *c->dirty) != 0 ||
                      dls_hb_grow((void **)&c->blk, &c->capblk, capd, sizeof *c->blk) != 0)) ||
        dls_hb_map_put(&e->stream_map, id, dls_hb_slab_next(&e->stream_slots)) != 0)
        return ENOMEM;
    e->capscratch = capm;
    uint32_t slot = dls_hb_slab_take(&e->stream_slots);
    dls_hb_stream *s = &e->streams[slot];
    uint64_t base = s->pos; /* a forgotten stream's slot: positions continue after its (a new slot: 0) */
    memset(s, 0, sizeof *s);
    s->pos = s->base = base;
    s->id = id;
    s->ctx = ci;
    s->kind = (uint8_t)kind;
    c->all[c->nall++] = slot;
    if (blocking)
        c->blk[c->nblk++] = slot;
    if (kind == DLS_HB_LEGACY) {
        c->legacy = slot;
        for (uint32_t i = 0; i < c->nblk; i++)
            if (e->streams[c->blk[i]].pos)
                mark_dirty(e, &e->streams[c->blk[i]], c->blk[i]);
    }
    return 0;
}

static void drop_slot(uint32_t *a, uint32_t *n, uint32_t slot)
{
    for (uint32_t i = 0; i < *n; i++)
        if (a[i] == slot) {
            a[i] = a[--*n];
            return;
        }
}

int dls_hb_stream_remove(dls_hb *e, uint64_t id)
{
    uint32_t slot;
    dls_hb_stream *s = dls_hb_live_stream(e, id, &slot);
    if (!s)
        return ENOENT;
    dls_hb_ctx *c = &e->ctxs[s->ctx];
    if (c->legacy == slot)
        c->legacy = DLS_HB_NONE;
    if (dls_hb_is_blocking(s)) {
        drop_slot(c->blk, &c->nblk, slot);
        if (s->dirty)
            drop_slot(c->dirty, &c->ndirty, slot);
        s->dirty = 0;
    }
    s->removed = 1;
    free(s->tseen);
    s->tseen = NULL;
    s->ntseen = 0;
    return 0;
}

int dls_hb_stream_forget(dls_hb *e, uint64_t id)
{
    uint32_t slot = dls_hb_find_stream(e, id);
    if (slot == DLS_HB_NONE || !e->streams[slot].removed)
        return ENOENT;
    dls_hb_stream *s = &e->streams[slot];
    dls_hb_ctx *c = &e->ctxs[s->ctx];
    drop_slot(c->all, &c->nall, slot);
    dls_hb_map_del(&e->stream_map, id);
    dls_hb_stream_hit *h = hit_of(e, id);
    if (h->slot == slot)
        h->slot = DLS_HB_NONE;
    dls_hb_clk_release(s->clk);
    s->clk = NULL;
    forget_points(s);
    s->id = 0;
    dls_hb_slab_put(&e->stream_slots, slot);
    return 0;
}

void dls_hb_thread_remove(dls_hb *e, uint64_t id)
{
    uint32_t i = dls_hb_map_get(&e->thread_map, id);
    if (i == DLS_HB_NONE)
        return;
    dls_hb_map_del(&e->thread_map, id);
    if (e->last_tid == id)
        e->tid_cached = 0;
    dls_hb_clk_release(e->threads[i].clk);
    dls_hb_clk_release(e->threads[i].own_clk);
    memset(&e->threads[i], 0, sizeof e->threads[i]);
    dls_hb_slab_put(&e->thread_slots, i);
}

/* Finds or creates the record of thread id; *out gets its index. */
static int thread_get(dls_hb *e, uint64_t id, uint32_t *out)
{
    uint32_t i = dls_hb_map_get(&e->thread_map, id);
    if (i == DLS_HB_NONE) {
        if (dls_hb_slab_reserve(&e->thread_slots, (void **)&e->threads, sizeof *e->threads) != 0 ||
            dls_hb_map_put(&e->thread_map, id, dls_hb_slab_next(&e->thread_slots)) != 0)
            return ENOMEM;
        i = dls_hb_slab_take(&e->thread_slots);
        e->threads[i].id = id;
        e->threads[i].used = 1;
        if (e->last_tid == id)
            e->tid_cached = 0;
    }
    *out = i;
    return 0;
}

void dls_hb_join_op(dls_hb_clk *dst, uint32_t slot, uint64_t pos, const dls_hb_clk *clk)
{
    dls_hb_clk_join(dst, clk);
    dls_hb_clk_raise(dst, slot, pos);
}

uint64_t dls_hb_asof_points(const dls_hb_stream *s, uint64_t begin, dls_hb_clk **clk)
{
    for (uint32_t k = 1; k <= s->npts; k++) { /* the newest point is the last operation itself */
        const dls_hb_point *p = &s->pts[(s->next_pt + DLS_HB_POINTS - k) % DLS_HB_POINTS];
        if (p->end < begin) {
            *clk = p->clk;
            return p->pos;
        }
    }
    *clk = NULL;
    return 0;
}

dls_hb_clk *dls_hb_clock_at_or_below(const dls_hb_stream *s, uint64_t pos, uint64_t *at)
{
    if (pos >= s->pos) {
        *at = s->pos;
        return s->clk;
    }
    for (uint32_t k = 1; k <= s->npts; k++) {
        const dls_hb_point *p = &s->pts[(s->next_pt + DLS_HB_POINTS - k) % DLS_HB_POINTS];
        if (p->pos <= pos) {
            *at = p->pos;
            return p->clk;
        }
    }
    return NULL;
}

/* Keeps s's latest operation (position, end, clock) as its newest point. */
static void push_point(dls_hb_stream *s)
{
    dls_hb_point *p = &s->pts[s->next_pt];
    if (s->npts == DLS_HB_POINTS)
        dls_hb_clk_release(p->clk);
    else
        s->npts++;
    p->pos = s->pos;
    p->end = s->end;
    p->clk = dls_hb_clk_share(s->clk);
    s->next_pt = (uint8_t)((s->next_pt + 1) % DLS_HB_POINTS);
}

/* Takes the next position of s for an operation whose call ended at `end`. */
static void advance(dls_hb *e, dls_hb_stream *s, uint32_t slot, uint64_t n, uint64_t end)
{
    if (end > e->now)
        e->now = end;
    for (uint64_t k = n > DLS_HB_ENDS ? n - DLS_HB_ENDS + 1 : 1; k <= n; k++)
        s->ends[(s->pos + k) % DLS_HB_ENDS] = e->now;
    s->pos += n;
    s->end = e->now;
    mark_dirty(e, s, slot); /* set by a run's predecessor already, unless the stream is not blocking */
    push_point(s);
}

void dls_hb_join_blocking(dls_hb *e, dls_hb_ctx *c, dls_hb_clk *dst, uint64_t begin, int commit)
{
    uint32_t *list = commit ? c->dirty : c->blk, n = commit ? c->ndirty : c->nblk, keep = 0;
    for (uint32_t i = 0; i < n; i++) {
        dls_hb_stream *b = &e->streams[list[i]];
        dls_hb_clk *bclk;
        uint64_t bpos = dls_hb_asof(b, begin, &bclk);
        if (bpos && dls_hb_clk_get(dst, list[i]) < bpos)
            dls_hb_join_op(dst, list[i], bpos, bclk);
        if (commit && bpos == b->pos)
            b->dirty = 0;
        else if (commit)
            c->dirty[keep++] = list[i]; /* a later legacy operation joins the rest */
    }
    if (commit)
        c->ndirty = keep;
}

/* Keeps s's last operation, just told by `thread`, as the thread's own last one (its record is
 * made when missing; out of memory it is not kept, which only orders less). */
static void remember_own(dls_hb *e, uint64_t thread, const dls_hb_stream *s, uint32_t slot)
{
    uint32_t ti = thread_index(e, thread);
    if (ti == DLS_HB_NONE) {
        if (thread_get(e, thread, &ti) != 0)
            return;
        e->last_ti = ti; /* thread_get forgot the lookup */
        e->tid_cached = 1;
    }
    dls_hb_thread *t = &e->threads[ti];
    if (t->own_clk != s->clk) {
        dls_hb_clk_release(t->own_clk);
        t->own_clk = dls_hb_clk_share(s->clk);
    }
    t->own_stream = s->id;
    t->own_slot = slot;
    t->own_pos = s->pos;
}

int dls_hb_stream_op(dls_hb *e, uint64_t thread, dls_hb_stream *s, uint32_t slot, const dls_hb_cap *cap, dls_hb_when w)
{
    dls_hb_ctx *c = &e->ctxs[s->ctx];
    uint32_t ti = thread_index(e, thread);
    const dls_hb_thread *t = ti == DLS_HB_NONE ? NULL : &e->threads[ti];
    int need_t = t && t->ver && (ti >= s->ntseen || s->tseen[ti] != t->ver);
    dls_hb_clk *leg_clk = NULL;
    uint64_t leg_pos = 0;
    if (dls_hb_is_blocking(s) && c->legacy != DLS_HB_NONE) {
        leg_pos = dls_hb_asof(&e->streams[c->legacy], w.begin, &leg_clk);
        if (dls_hb_stream_knows(s, slot, c->legacy, leg_pos))
            leg_pos = 0;
    }
    int need_dirty = s->kind == DLS_HB_LEGACY && c->ndirty > 0;
    int need_cap = cap && cap->pos && (cap->multi || !dls_hb_stream_knows(s, slot, cap->slot, cap->pos));
    if (need_t || leg_pos || need_dirty || need_cap) {
        if (dls_hb_clk_own(&s->clk, e->stream_slots.n) != 0)
            return ENOMEM;
        if (need_t && ti >= s->ntseen) {
            uint32_t capt = s->ntseen;
            if (dls_hb_grow((void **)&s->tseen, &capt, ti + 1, sizeof *s->tseen) != 0)
                return ENOMEM;
            s->ntseen = capt;
        }
        if (need_t) {
            dls_hb_clk_join(s->clk, t->clk);
            s->tseen[ti] = t->ver;
        }
        if (leg_pos)
            dls_hb_join_op(s->clk, c->legacy, leg_pos, leg_clk);
        if (need_dirty)
            dls_hb_join_blocking(e, c, s->clk, w.begin, 1);
        if (need_cap)
            dls_hb_join_op(s->clk, cap->slot, cap->pos, cap->clk);
    }
    s->last_thread = thread;
    advance(e, s, slot, 1, w.end);
    remember_own(e, thread, s, slot);
    return 0;
}

int dls_hb_op(dls_hb *e, uint64_t thread, uint64_t stream, dls_hb_when when, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = dls_hb_live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    int rc = dls_hb_stream_op(e, thread, s, slot, NULL, when);
    if (rc == 0 && pos)
        *pos = s->pos;
    return rc;
}

int dls_hb_op_again(dls_hb *e, uint64_t stream, uint64_t n, uint64_t end, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = dls_hb_live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    if (n) {
        advance(e, s, slot, n, end);
        if (e->tid_cached && e->last_ti != DLS_HB_NONE && e->threads[e->last_ti].own_stream == stream)
            e->threads[e->last_ti].own_pos = s->pos; /* the run's thread: the previous call's */
    }
    if (pos)
        *pos = s->pos;
    return 0;
}

int dls_hb_thread_prepare(dls_hb *e, uint64_t id, dls_hb_thread **out)
{
    uint32_t ti;
    if (thread_get(e, id, &ti) != 0 || dls_hb_clk_own(&e->threads[ti].clk, e->stream_slots.n) != 0)
        return ENOMEM;
    *out = &e->threads[ti];
    return 0;
}

int dls_hb_sync_stream(dls_hb *e, uint64_t thread, uint64_t stream)
{
    uint32_t slot = dls_hb_find_stream(e, stream);
    if (slot == DLS_HB_NONE)
        return ENOENT;
    const dls_hb_stream *s = &e->streams[slot];
    const dls_hb_thread *known = dls_hb_find_thread(e, thread);
    if (!s->pos || (known && dls_hb_clk_get(known->clk, slot) >= s->pos))
        return 0;
    dls_hb_thread *t;
    if (dls_hb_thread_prepare(e, thread, &t) != 0)
        return ENOMEM;
    dls_hb_join_op(t->clk, slot, s->pos, s->clk);
    t->ver = ++e->ver;
    return 0;
}
