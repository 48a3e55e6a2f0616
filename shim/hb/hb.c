/* The happens-before engine's model updates: streams, contexts, threads, events, operations,
 * host syncs and captures (hb_query.c answers the questions). See hb.h. */
#include "hb_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Grows *p (elements of `size` bytes, capacity *cap) to hold at least need; new bytes zeroed. */
static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    uint32_t ncap = *cap ? *cap : 4;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 4)
            return ENOMEM;
        ncap *= 2;
    }
    void *n = realloc(*p, (size_t)ncap * size);
    if (!n)
        return ENOMEM;
    memset((char *)n + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
    *p = n;
    *cap = ncap;
    return 0;
}

dls_hb *dls_hb_create(void)
{
    dls_hb *e = calloc(1, sizeof(dls_hb));
    if (e)
        e->last_slot = DLS_HB_NONE;
    return e;
}

void dls_hb_destroy(dls_hb *e)
{
    if (!e)
        return;
    for (uint32_t i = 0; i < e->nstreams; i++) {
        dls_hb_clk_release(e->streams[i].clk);
        free(e->streams[i].tseen);
    }
    for (uint32_t i = 0; i < e->nthreads; i++)
        if (e->threads[i].used)
            dls_hb_clk_release(e->threads[i].clk);
    for (uint32_t i = 0; i < e->nevents; i++)
        if (e->events[i].used)
            dls_hb_clk_release(e->events[i].clk);
    for (uint32_t i = 0; i < e->nctxs; i++) {
        free(e->ctxs[i].all);
        free(e->ctxs[i].blk);
        free(e->ctxs[i].dirty);
    }
    free(e->streams);
    free(e->threads);
    free(e->events);
    free(e->ctxs);
    free(e->free_threads);
    free(e->free_events);
    free(e->mark);
    free(e->cand);
    dls_hb_map_free(&e->stream_map);
    dls_hb_map_free(&e->thread_map);
    dls_hb_map_free(&e->event_map);
    dls_hb_map_free(&e->ctx_map);
    free(e);
}

uint32_t dls_hb_find_stream(const dls_hb *e, uint64_t id)
{
    return dls_hb_map_get(&e->stream_map, id);
}

dls_hb_thread *dls_hb_find_thread(const dls_hb *e, uint64_t id)
{
    uint32_t i = dls_hb_map_get(&e->thread_map, id);
    return i == DLS_HB_NONE ? NULL : &e->threads[i];
}

/* The live (not removed) stream of id, or NULL; *slot gets its slot. */
static dls_hb_stream *live_stream(dls_hb *e, uint64_t id, uint32_t *slot)
{
    uint32_t i = e->last_slot != DLS_HB_NONE && e->last_sid == id ? e->last_slot : dls_hb_find_stream(e, id);
    if (i != DLS_HB_NONE) {
        e->last_sid = id;
        e->last_slot = i;
    }
    if (i == DLS_HB_NONE || e->streams[i].removed)
        return NULL;
    *slot = i;
    return &e->streams[i];
}

static int ctx_get(dls_hb *e, uint64_t id, uint32_t *out)
{
    uint32_t i = dls_hb_map_get(&e->ctx_map, id);
    if (i == DLS_HB_NONE) {
        if (grow((void **)&e->ctxs, &e->capctxs, e->nctxs + 1, sizeof *e->ctxs) != 0 ||
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
    uint32_t slot = e->nstreams, cap = e->capstreams, capm = e->capstreams, capc = e->capstreams;
    int blocking = kind == DLS_HB_BLOCKING || kind == DLS_HB_PER_THREAD;
    uint32_t capd = c->capblk;
    if (grow((void **)&e->streams, &cap, slot + 1, sizeof *e->streams) != 0 ||
        grow((void **)&e->mark, &capm, cap, sizeof *e->mark) != 0 ||
        grow((void **)&e->cand, &capc, cap, sizeof *e->cand) != 0 ||
        grow((void **)&c->all, &c->capall, c->nall + 1, sizeof *c->all) != 0 ||
        (blocking && (grow((void **)&c->dirty, &capd, c->nblk + 1, sizeof *c->dirty) != 0 ||
                      grow((void **)&c->blk, &c->capblk, capd, sizeof *c->blk) != 0)) ||
        dls_hb_map_put(&e->stream_map, id, slot) != 0)
        return ENOMEM;
    e->capstreams = cap;
    e->nstreams++;
    dls_hb_stream *s = &e->streams[slot];
    memset(s, 0, sizeof *s);
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
    dls_hb_stream *s = live_stream(e, id, &slot);
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

void dls_hb_thread_remove(dls_hb *e, uint64_t id)
{
    uint32_t i = dls_hb_map_get(&e->thread_map, id);
    if (i == DLS_HB_NONE)
        return;
    dls_hb_map_del(&e->thread_map, id);
    if (e->last_tid == id)
        e->tid_cached = 0;
    dls_hb_clk_release(e->threads[i].clk);
    memset(&e->threads[i], 0, sizeof e->threads[i]);
    e->free_threads[e->nfree_threads++] = i;
}

void dls_hb_event_remove(dls_hb *e, uint64_t id)
{
    uint32_t i = dls_hb_map_get(&e->event_map, id);
    if (i == DLS_HB_NONE)
        return;
    dls_hb_map_del(&e->event_map, id);
    dls_hb_clk_release(e->events[i].clk);
    memset(&e->events[i], 0, sizeof e->events[i]);
    e->free_events[e->nfree_events++] = i;
}

/* Finds or creates the record of thread id; *out gets its index. */
static int thread_get(dls_hb *e, uint64_t id, uint32_t *out)
{
    uint32_t i = dls_hb_map_get(&e->thread_map, id);
    if (i == DLS_HB_NONE) {
        if (!e->nfree_threads &&
            (grow((void **)&e->threads, &e->capthreads, e->nthreads + 1, sizeof *e->threads) != 0 ||
             grow((void **)&e->free_threads, &e->capfree_threads, e->capthreads, sizeof *e->free_threads) != 0))
            return ENOMEM;
        i = e->nfree_threads ? e->free_threads[e->nfree_threads - 1] : e->nthreads;
        if (dls_hb_map_put(&e->thread_map, id, i) != 0)
            return ENOMEM;
        if (e->nfree_threads)
            e->nfree_threads--;
        else
            e->nthreads++;
        e->threads[i].id = id;
        e->threads[i].used = 1;
        if (e->last_tid == id)
            e->tid_cached = 0;
    }
    *out = i;
    return 0;
}

static int event_get(dls_hb *e, uint64_t id, dls_hb_event **out)
{
    uint32_t i = dls_hb_map_get(&e->event_map, id);
    if (i == DLS_HB_NONE) {
        if (!e->nfree_events &&
            (grow((void **)&e->events, &e->capevents, e->nevents + 1, sizeof *e->events) != 0 ||
             grow((void **)&e->free_events, &e->capfree_events, e->capevents, sizeof *e->free_events) != 0))
            return ENOMEM;
        i = e->nfree_events ? e->free_events[e->nfree_events - 1] : e->nevents;
        if (dls_hb_map_put(&e->event_map, id, i) != 0)
            return ENOMEM;
        if (e->nfree_events)
            e->nfree_events--;
        else
            e->nevents++;
        e->events[i].id = id;
        e->events[i].used = 1;
    }
    *out = &e->events[i];
    return 0;
}

/* Joins what operation (slot, pos) with clock clk is ordered after, and the operation itself,
 * into dst (owned, with room for every slot). */
static void join_op(dls_hb_clk *dst, uint32_t slot, uint64_t pos, const dls_hb_clk *clk)
{
    dls_hb_clk_join(dst, clk);
    dls_hb_clk_raise(dst, slot, pos);
}

/* Enqueues one operation on live stream s (slot) by thread `thread`, ordered also after the
 * capture of ev when given. Everything that can fail happens before the model changes. */
static int stream_op(dls_hb *e, uint64_t thread, dls_hb_stream *s, uint32_t slot, const dls_hb_event *ev)
{
    dls_hb_ctx *c = &e->ctxs[s->ctx];
    uint32_t ti = e->tid_cached && e->last_tid == thread ? e->last_ti : dls_hb_map_get(&e->thread_map, thread);
    e->last_tid = thread;
    e->last_ti = ti;
    e->tid_cached = 1;
    const dls_hb_thread *t = ti == DLS_HB_NONE ? NULL : &e->threads[ti];
    int need_t = t && t->ver && (ti >= s->ntseen || s->tseen[ti] != t->ver);
    const dls_hb_stream *leg = NULL;
    if (dls_hb_is_blocking(s) && c->legacy != DLS_HB_NONE) {
        leg = &e->streams[c->legacy];
        if (dls_hb_stream_knows(s, slot, c->legacy, leg->pos))
            leg = NULL;
    }
    int need_dirty = s->kind == DLS_HB_LEGACY && c->ndirty > 0;
    int need_ev = ev && ev->pos && (ev->multi || !dls_hb_stream_knows(s, slot, ev->slot, ev->pos));
    if (need_t || leg || need_dirty || need_ev) {
        if (dls_hb_clk_own(&s->clk, e->nstreams) != 0)
            return ENOMEM;
        if (need_t && ti >= s->ntseen) {
            uint32_t cap = s->ntseen;
            if (grow((void **)&s->tseen, &cap, ti + 1, sizeof *s->tseen) != 0)
                return ENOMEM;
            s->ntseen = cap;
        }
        if (need_t) {
            dls_hb_clk_join(s->clk, t->clk);
            s->tseen[ti] = t->ver;
        }
        if (leg)
            join_op(s->clk, c->legacy, leg->pos, leg->clk);
        if (need_dirty) {
            for (uint32_t i = 0; i < c->ndirty; i++) {
                dls_hb_stream *b = &e->streams[c->dirty[i]];
                if (!dls_hb_stream_knows(s, slot, c->dirty[i], b->pos))
                    join_op(s->clk, c->dirty[i], b->pos, b->clk);
                b->dirty = 0;
            }
            c->ndirty = 0;
        }
        if (need_ev)
            join_op(s->clk, ev->slot, ev->pos, ev->clk);
    }
    s->pos++;
    mark_dirty(e, s, slot);
    return 0;
}

int dls_hb_op(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    int rc = stream_op(e, thread, s, slot, NULL);
    if (rc == 0 && pos)
        *pos = s->pos;
    return rc;
}

int dls_hb_op_again(dls_hb *e, uint64_t stream, uint64_t n, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    s->pos += n;
    if (n)
        mark_dirty(e, s, slot); /* set by the predecessor already, unless the stream is not blocking */
    if (pos)
        *pos = s->pos;
    return 0;
}

int dls_hb_event_record(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t event, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    dls_hb_event *ev;
    int rc = event_get(e, event, &ev);
    if (rc == 0)
        rc = stream_op(e, thread, s, slot, NULL);
    if (rc != 0)
        return rc;
    dls_hb_clk_release(ev->clk);
    ev->clk = dls_hb_clk_share(s->clk);
    ev->slot = slot;
    ev->pos = s->pos;
    ev->multi = 0;
    if (pos)
        *pos = s->pos;
    return 0;
}

int dls_hb_event_wait(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t event, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    uint32_t ei = dls_hb_map_get(&e->event_map, event);
    int rc = stream_op(e, thread, s, slot, ei == DLS_HB_NONE ? NULL : &e->events[ei]);
    if (rc == 0 && pos)
        *pos = s->pos;
    return rc;
}

/* Sets ev's capture to position pos of slot with clock clk (shared). */
static void capture_one(dls_hb_event *ev, uint32_t slot, uint64_t pos, dls_hb_clk *clk)
{
    dls_hb_clk *c = dls_hb_clk_share(clk);
    dls_hb_clk_release(ev->clk);
    ev->clk = c;
    ev->slot = slot;
    ev->pos = pos;
    ev->multi = 0;
}

int dls_hb_capture_stream(dls_hb *e, uint64_t event, uint64_t stream)
{
    uint32_t slot = dls_hb_find_stream(e, stream);
    if (slot == DLS_HB_NONE)
        return ENOENT;
    dls_hb_event *ev;
    if (event_get(e, event, &ev) != 0)
        return ENOMEM;
    capture_one(ev, slot, e->streams[slot].pos, e->streams[slot].clk);
    return 0;
}

int dls_hb_capture_event(dls_hb *e, uint64_t event, uint64_t from)
{
    dls_hb_event *ev;
    if (event_get(e, event, &ev) != 0)
        return ENOMEM;
    uint32_t fi = dls_hb_map_get(&e->event_map, from);
    if (fi == DLS_HB_NONE || fi == (uint32_t)(ev - e->events)) {
        if (fi == DLS_HB_NONE)
            capture_one(ev, 0, 0, NULL);
        return 0;
    }
    const dls_hb_event *f = &e->events[fi];
    capture_one(ev, f->slot, f->pos, f->clk);
    ev->multi = f->multi;
    return 0;
}

/* Captures the streams in slots[0..n) (every stream when slots is NULL) into event `event`. */
static int capture_streams(dls_hb *e, uint64_t event, const uint32_t *slots, uint32_t n)
{
    dls_hb_clk *c = NULL;
    dls_hb_event *ev;
    if (dls_hb_clk_own(&c, e->nstreams ? e->nstreams : 1) != 0)
        return ENOMEM;
    if (event_get(e, event, &ev) != 0) {
        dls_hb_clk_release(c);
        return ENOMEM;
    }
    uint32_t any = DLS_HB_NONE;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = slots ? slots[i] : i;
        const dls_hb_stream *s = &e->streams[slot];
        if (!s->pos)
            continue;
        join_op(c, slot, s->pos, s->clk);
        any = slot;
    }
    capture_one(ev, any == DLS_HB_NONE ? 0 : any, any == DLS_HB_NONE ? 0 : dls_hb_clk_get(c, any), c);
    dls_hb_clk_release(c);
    ev->multi = 1;
    return 0;
}

int dls_hb_capture_context(dls_hb *e, uint64_t event, uint64_t ctx)
{
    uint32_t ci = dls_hb_map_get(&e->ctx_map, ctx);
    if (ci == DLS_HB_NONE)
        return capture_streams(e, event, NULL, 0);
    return capture_streams(e, event, e->ctxs[ci].all, e->ctxs[ci].nall);
}

int dls_hb_capture_all(dls_hb *e, uint64_t event)
{
    return capture_streams(e, event, NULL, e->nstreams);
}

uint64_t dls_hb_event_covers(const dls_hb *e, uint64_t event, uint64_t stream)
{
    uint32_t ei = dls_hb_map_get(&e->event_map, event);
    uint32_t slot = dls_hb_find_stream(e, stream);
    if (ei == DLS_HB_NONE || slot == DLS_HB_NONE || !e->events[ei].pos)
        return 0;
    const dls_hb_event *ev = &e->events[ei];
    uint64_t p = dls_hb_clk_get(ev->clk, slot);
    return ev->slot == slot && ev->pos > p ? ev->pos : p;
}

/* Prepares thread `id` to learn: its record exists and its clock is owned with room for every
 * slot. */
static int thread_prepare(dls_hb *e, uint64_t id, dls_hb_thread **out)
{
    uint32_t ti;
    if (thread_get(e, id, &ti) != 0 || dls_hb_clk_own(&e->threads[ti].clk, e->nstreams) != 0)
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
    if (thread_prepare(e, thread, &t) != 0)
        return ENOMEM;
    join_op(t->clk, slot, s->pos, s->clk);
    t->ver = ++e->ver;
    return 0;
}

int dls_hb_sync_event(dls_hb *e, uint64_t thread, uint64_t event)
{
    uint32_t ei = dls_hb_map_get(&e->event_map, event);
    if (ei == DLS_HB_NONE || !e->events[ei].pos)
        return 0;
    const dls_hb_thread *known = dls_hb_find_thread(e, thread);
    if (known && !e->events[ei].multi && dls_hb_clk_get(known->clk, e->events[ei].slot) >= e->events[ei].pos)
        return 0;
    dls_hb_thread *t;
    if (thread_prepare(e, thread, &t) != 0)
        return ENOMEM;
    const dls_hb_event *ev = &e->events[ei];
    join_op(t->clk, ev->slot, ev->pos, ev->clk);
    t->ver = ++e->ver;
    return 0;
}
