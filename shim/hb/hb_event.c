/* The happens-before engine's events: records, waits, captures of what a host synchronize
 * completes, and event host syncs (see hb.h, "Host order" for which record a wait is ordered
 * after). */
#include "hb_internal.h"

#include <errno.h>
#include <string.h>

void dls_hb_event_remove(dls_hb *e, uint64_t id)
{
    uint32_t i = dls_hb_map_get(&e->event_map, id);
    if (i == DLS_HB_NONE)
        return;
    dls_hb_map_del(&e->event_map, id);
    dls_hb_event_forget(&e->events[i]);
    memset(&e->events[i], 0, sizeof e->events[i]);
    dls_hb_slab_put(&e->event_slots, i);
}

/* Finds or creates the record of event id. */
static int event_get(dls_hb *e, uint64_t id, dls_hb_event **out)
{
    uint32_t i = dls_hb_map_get(&e->event_map, id);
    if (i == DLS_HB_NONE) {
        if (dls_hb_slab_reserve(&e->event_slots, (void **)&e->events, sizeof *e->events) != 0 ||
            dls_hb_map_put(&e->event_map, id, dls_hb_slab_next(&e->event_slots)) != 0)
            return ENOMEM;
        i = dls_hb_slab_take(&e->event_slots);
        e->events[i].id = id;
        e->events[i].used = 1;
    }
    *out = &e->events[i];
    return 0;
}

/* A capture of clock c (owned by the capture from now on) with end stamp `end`: of several
 * streams, its (slot, pos) any stream it holds (pos 0: it holds nothing). */
static dls_hb_cap cap_of_clock(dls_hb_clk *c, uint64_t end)
{
    dls_hb_cap cap = {.clk = c, .end = end, .multi = 1};
    for (uint32_t i = 0; c && i < c->len && !cap.pos; i++)
        if (c->v[i]) {
            cap.slot = i;
            cap.pos = c->v[i];
        }
    return cap;
}

/* Makes `to` a copy of `from` (sharing its clock). */
static void cap_copy(dls_hb_cap *to, const dls_hb_cap *from)
{
    dls_hb_cap c = *from;
    c.clk = dls_hb_clk_share(from->clk);
    dls_hb_cap_clear(to);
    *to = c;
}

/* Sets ev's most recent record or capture, keeping the one it replaces as prev. */
static void cap_push(dls_hb_event *ev, dls_hb_cap cap)
{
    dls_hb_cap_clear(&ev->prev);
    ev->prev = ev->cur;
    ev->cur = cap;
}

/* Joins into fresh clock dst what a record beginning at `begin` on s (slot) by thread `thread`
 * is ordered after besides s's own work: the thread's observations and the legacy rules as of
 * `begin` (for a legacy s, every live blocking stream of its context). */
static void learn_fresh(dls_hb *e, dls_hb_clk *dst, uint64_t thread, const dls_hb_stream *s, uint64_t begin)
{
    const dls_hb_thread *t = dls_hb_find_thread(e, thread);
    if (t)
        dls_hb_clk_join(dst, t->clk);
    dls_hb_ctx *c = &e->ctxs[s->ctx];
    if (dls_hb_is_blocking(s) && c->legacy != DLS_HB_NONE) {
        dls_hb_clk *lclk;
        uint64_t lpos = dls_hb_asof(&e->streams[c->legacy], begin, &lclk);
        if (lpos)
            dls_hb_join_op(dst, c->legacy, lpos, lclk);
    } else if (s->kind == DLS_HB_LEGACY) {
        dls_hb_join_blocking(e, c, dst, begin, 0);
    }
}

/* Sets *out to a fresh clock of what an event record on s (slot) beginning at `begin` by thread
 * `thread` captures when an earlier operation of s may follow it: s as of begin, or with `own` as
 * of the thread's own last operation when that is on s and later (the record's call follows it,
 * and every operation told before it returned before it was told), and what the record is
 * ordered after besides. 0 or ENOMEM. */
static int capture_asof(dls_hb *e, uint64_t thread, const dls_hb_stream *s, uint32_t slot, uint64_t begin, int own,
                        dls_hb_clk **out)
{
    dls_hb_clk *before;
    uint64_t p = dls_hb_asof(s, begin, &before);
    const dls_hb_thread *t = own ? dls_hb_find_thread(e, thread) : NULL;
    if (t && t->own_stream == s->id && t->own_slot == slot && t->own_pos > p) {
        p = t->own_pos;
        before = t->own_clk;
    }
    *out = NULL;
    if (dls_hb_clk_own(out, e->stream_slots.n) != 0)
        return ENOMEM;
    dls_hb_join_op(*out, slot, p, before);
    learn_fresh(e, *out, thread, s, begin);
    return 0;
}

int dls_hb_event_record(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t event, dls_hb_when w, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = dls_hb_live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    dls_hb_event *ev;
    if (event_get(e, event, &ev) != 0)
        return ENOMEM;
    /* Some earlier operation of s may be enqueued after the record: capture s as of begin. */
    dls_hb_clk *asof_clk = NULL;
    if (s->pos && s->end >= w.begin && capture_asof(e, thread, s, slot, w.begin, 1, &asof_clk) != 0)
        return ENOMEM;
    int rc = dls_hb_stream_op(e, thread, s, slot, NULL, w);
    if (rc != 0) {
        dls_hb_clk_release(asof_clk);
        return rc;
    }
    if (asof_clk)
        cap_push(ev, cap_of_clock(asof_clk, s->end));
    else
        cap_push(ev, (dls_hb_cap){.clk = dls_hb_clk_share(s->clk), .slot = slot, .pos = s->pos, .end = s->end});
    if (pos)
        *pos = s->pos;
    return 0;
}

int dls_hb_capture_op(dls_hb *e, uint64_t event, uint64_t thread, uint64_t stream, uint64_t begin)
{
    uint32_t slot = dls_hb_find_stream(e, stream);
    if (slot == DLS_HB_NONE)
        return ENOENT;
    const dls_hb_stream *s = &e->streams[slot];
    dls_hb_event *ev;
    if (event_get(e, event, &ev) != 0)
        return ENOMEM;
    /* The point before the newest one is the stream's operation before this one. */
    const dls_hb_point *earlier = s->npts >= 2 ? &s->pts[(s->next_pt + DLS_HB_POINTS - 2) % DLS_HB_POINTS] : NULL;
    if (!earlier || earlier->end < begin) {
        dls_hb_event_forget(ev);
        ev->cur = (dls_hb_cap){.clk = dls_hb_clk_share(s->clk), .slot = slot, .pos = s->pos};
        return 0;
    }
    dls_hb_clk *c;
    if (capture_asof(e, thread, s, slot, begin, 0, &c) != 0) /* its own operation is the one captured */
        return ENOMEM;
    dls_hb_event_forget(ev);
    ev->cur = cap_of_clock(c, 0);
    return 0;
}

/* Sets *out to a fresh clock holding what completing cap completes; 0 or ENOMEM. */
static int cap_clock(const dls_hb *e, const dls_hb_cap *cap, dls_hb_clk **out)
{
    *out = NULL;
    if (dls_hb_clk_own(out, e->stream_slots.n) != 0)
        return ENOMEM;
    dls_hb_clk_join(*out, cap->clk);
    if (!cap->multi)
        dls_hb_clk_raise(*out, cap->slot, cap->pos);
    return 0;
}

int dls_hb_event_wait(dls_hb *e, uint64_t thread, uint64_t stream, uint64_t event, dls_hb_when w, uint64_t *pos)
{
    uint32_t slot;
    dls_hb_stream *s = dls_hb_live_stream(e, stream, &slot);
    if (!s)
        return ENOENT;
    uint32_t ei = dls_hb_map_get(&e->event_map, event);
    const dls_hb_event *ev = ei == DLS_HB_NONE ? NULL : &e->events[ei];
    const dls_hb_cap *use = NULL;
    dls_hb_cap both = {0};
    if (ev && ev->cur.pos && (ev->cur.end == 0 || ev->cur.end < w.begin)) {
        use = &ev->cur; /* it precedes the wait: the driver used it or a later one told since */
    } else if (ev && ev->cur.pos && ev->prev.pos && (ev->prev.end == 0 || ev->prev.end < w.begin)) {
        dls_hb_clk *a, *b; /* the wait may precede the latest record: what both complete */
        if (cap_clock(e, &ev->cur, &a) != 0)
            return ENOMEM;
        if (cap_clock(e, &ev->prev, &b) != 0) {
            dls_hb_clk_release(a);
            return ENOMEM;
        }
        dls_hb_clk_meet(a, b);
        dls_hb_clk_release(b);
        both = cap_of_clock(a, 0);
        use = &both;
    }
    int rc = dls_hb_stream_op(e, thread, s, slot, use, w);
    dls_hb_clk_release(both.clk);
    if (rc == 0 && pos)
        *pos = s->pos;
    return rc;
}

int dls_hb_capture_stream(dls_hb *e, uint64_t event, uint64_t stream, uint64_t begin)
{
    uint32_t slot = dls_hb_find_stream(e, stream);
    if (slot == DLS_HB_NONE)
        return ENOENT;
    dls_hb_event *ev;
    if (event_get(e, event, &ev) != 0)
        return ENOMEM;
    dls_hb_clk *clk;
    uint64_t pos = dls_hb_asof(&e->streams[slot], begin, &clk);
    dls_hb_event_forget(ev);
    ev->cur = (dls_hb_cap){.clk = dls_hb_clk_share(clk), .slot = slot, .pos = pos};
    return 0;
}

int dls_hb_capture_at(dls_hb *e, uint64_t event, uint64_t stream, uint64_t pos)
{
    uint32_t slot = dls_hb_find_stream(e, stream);
    if (slot == DLS_HB_NONE)
        return ENOENT;
    const dls_hb_stream *s = &e->streams[slot];
    if (pos == 0 || pos > s->pos)
        return EINVAL;
    dls_hb_event *ev;
    if (event_get(e, event, &ev) != 0)
        return ENOMEM;
    uint64_t at;
    dls_hb_clk *clk = dls_hb_clock_at_or_below(s, pos, &at);
    dls_hb_event_forget(ev);
    ev->cur = (dls_hb_cap){.clk = dls_hb_clk_share(clk), .slot = slot, .pos = pos};
    return 0;
}

int dls_hb_capture_event(dls_hb *e, uint64_t event, uint64_t from)
{
    dls_hb_event *ev;
    if (event_get(e, event, &ev) != 0)
        return ENOMEM;
    uint32_t fi = dls_hb_map_get(&e->event_map, from);
    if (fi == (uint32_t)(ev - e->events))
        return 0;
    dls_hb_cap_clear(&ev->prev);
    if (fi == DLS_HB_NONE)
        dls_hb_cap_clear(&ev->cur);
    else
        cap_copy(&ev->cur, &e->events[fi].cur);
    return 0;
}

/* Captures the streams in slots[0..n) (every stream when slots is NULL) into event `event`. */
static int capture_streams(dls_hb *e, uint64_t event, const uint32_t *slots, uint32_t n, uint64_t begin)
{
    dls_hb_clk *c = NULL;
    dls_hb_event *ev;
    if (dls_hb_clk_own(&c, e->stream_slots.n ? e->stream_slots.n : 1) != 0)
        return ENOMEM;
    if (event_get(e, event, &ev) != 0) {
        dls_hb_clk_release(c);
        return ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = slots ? slots[i] : i;
        dls_hb_clk *clk;
        uint64_t pos = dls_hb_asof(&e->streams[slot], begin, &clk);
        if (pos)
            dls_hb_join_op(c, slot, pos, clk);
    }
    dls_hb_event_forget(ev);
    ev->cur = cap_of_clock(c, 0);
    return 0;
}

int dls_hb_capture_context(dls_hb *e, uint64_t event, uint64_t ctx, uint64_t begin)
{
    uint32_t ci = dls_hb_map_get(&e->ctx_map, ctx);
    if (ci == DLS_HB_NONE)
        return capture_streams(e, event, NULL, 0, begin);
    return capture_streams(e, event, e->ctxs[ci].all, e->ctxs[ci].nall, begin);
}

int dls_hb_capture_all(dls_hb *e, uint64_t event, uint64_t begin)
{
    return capture_streams(e, event, NULL, e->stream_slots.n, begin);
}

uint64_t dls_hb_event_covers(const dls_hb *e, uint64_t event, uint64_t stream)
{
    uint32_t ei = dls_hb_map_get(&e->event_map, event);
    uint32_t slot = dls_hb_find_stream(e, stream);
    if (ei == DLS_HB_NONE || slot == DLS_HB_NONE || !e->events[ei].cur.pos)
        return 0;
    const dls_hb_cap *cap = &e->events[ei].cur;
    uint64_t p = dls_hb_clk_get(cap->clk, slot);
    return !cap->multi && cap->slot == slot && cap->pos > p ? cap->pos : p;
}

int dls_hb_sync_event(dls_hb *e, uint64_t thread, uint64_t event)
{
    uint32_t ei = dls_hb_map_get(&e->event_map, event);
    if (ei == DLS_HB_NONE || !e->events[ei].cur.pos)
        return 0;
    const dls_hb_thread *known = dls_hb_find_thread(e, thread);
    const dls_hb_cap *cap = &e->events[ei].cur;
    if (known && !cap->multi && dls_hb_clk_get(known->clk, cap->slot) >= cap->pos)
        return 0;
    dls_hb_thread *t;
    if (dls_hb_thread_prepare(e, thread, &t) != 0)
        return ENOMEM;
    dls_hb_join_op(t->clk, cap->slot, cap->pos, cap->clk);
    t->ver = ++e->ver;
    return 0;
}
