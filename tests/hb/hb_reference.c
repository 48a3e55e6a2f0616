/* Brute-force happens-before model with explicit ancestor sets (see hb_reference.h). */
#include "hb_reference.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define W (HBREF_MAX_OPS / 64)

typedef struct {
    uint64_t b[W];
} set;

typedef struct {
    int stream;
    uint64_t pos, end;
    set anc; /* every node this one is ordered after, itself included */
} node;

typedef struct {
    uint64_t id, ctx;
    int kind, removed, last; /* last: node of the last operation, -1 before the first */
    uint64_t pos;
    int pts[DLS_HB_POINTS]; /* the last node of each of its latest calls, newest first */
    int npts;
} stream;

typedef struct {
    uint64_t id;
    int used;
    set known; /* every node the thread has observed complete */
    int own;   /* node of the thread's last operation (an event record covers it: hb.h); own_set 0: none */
    int own_set;
} thread;

typedef struct {
    uint64_t id;
    int used;
    set anc;      /* what completing its most recent record or capture completes (empty: nothing) */
    uint64_t end; /* that record's end (0: a capture, which precedes every wait) */
    set prev;     /* the same for the record or capture before it */
    uint64_t prev_end;
} event;

struct hbref {
    node nodes[HBREF_MAX_OPS];
    int nnodes;
    uint64_t now; /* the highest end so far (ends start at 1) */
    stream streams[HBREF_MAX_STREAMS];
    int nstreams;
    thread threads[HBREF_MAX_THREADS];
    event events[HBREF_MAX_EVENTS];
};

static void set_or(set *d, const set *s)
{
    for (int i = 0; i < W; i++)
        d->b[i] |= s->b[i];
}

static int set_has(const set *s, int n)
{
    return n >= 0 && (s->b[n / 64] >> (n % 64) & 1);
}

static void set_and(set *d, const set *s)
{
    for (int i = 0; i < W; i++)
        d->b[i] &= s->b[i];
}

static int set_empty(const set *s)
{
    for (int i = 0; i < W; i++)
        if (s->b[i])
            return 0;
    return 1;
}

static int blocking(int kind)
{
    return kind == DLS_HB_BLOCKING || kind == DLS_HB_PER_THREAD;
}

hbref *hbref_create(void)
{
    hbref *r = calloc(1, sizeof(hbref));
    if (r)
        r->now = 1;
    return r;
}

void hbref_destroy(hbref *r)
{
    free(r);
}

static stream *find_stream(hbref *r, uint64_t id)
{
    for (int i = 0; i < r->nstreams; i++)
        if (r->streams[i].id == id)
            return &r->streams[i];
    return NULL;
}

static thread *find_thread(hbref *r, uint64_t id)
{
    for (int i = 0; i < HBREF_MAX_THREADS; i++)
        if (r->threads[i].used && r->threads[i].id == id)
            return &r->threads[i];
    return NULL;
}

static thread *get_thread(hbref *r, uint64_t id)
{
    thread *t = find_thread(r, id);
    for (int i = 0; !t && i < HBREF_MAX_THREADS; i++)
        if (!r->threads[i].used) {
            t = &r->threads[i];
            memset(t, 0, sizeof *t);
            t->id = id;
            t->used = 1;
        }
    return t;
}

static event *find_event(hbref *r, uint64_t id)
{
    for (int i = 0; i < HBREF_MAX_EVENTS; i++)
        if (r->events[i].used && r->events[i].id == id)
            return &r->events[i];
    return NULL;
}

int hbref_stream_add(hbref *r, uint64_t id, uint64_t ctx, dls_hb_stream_kind kind)
{
    if ((unsigned)kind > DLS_HB_NON_BLOCKING)
        return EINVAL;
    if (find_stream(r, id))
        return EEXIST;
    for (int i = 0; i < r->nstreams; i++)
        if (kind == DLS_HB_LEGACY && r->streams[i].ctx == ctx && r->streams[i].kind == DLS_HB_LEGACY &&
            !r->streams[i].removed)
            return EINVAL;
    if (r->nstreams == HBREF_MAX_STREAMS)
        return ENOSPC;
    r->streams[r->nstreams++] = (stream){.id = id, .ctx = ctx, .kind = kind, .last = -1};
    return 0;
}

int hbref_stream_remove(hbref *r, uint64_t id)
{
    stream *s = find_stream(r, id);
    if (!s || s->removed)
        return ENOENT;
    s->removed = 1;
    return 0;
}

void hbref_thread_remove(hbref *r, uint64_t id)
{
    thread *t = find_thread(r, id);
    if (t)
        t->used = 0;
}

void hbref_event_remove(hbref *r, uint64_t id)
{
    event *e = find_event(r, id);
    if (e)
        e->used = 0;
}

/* The last node of o whose call ended before `begin`, looking back over o's latest calls; -1
 * when none. */
static int asof(const hbref *r, const stream *o, uint64_t begin)
{
    if (o->last >= 0 && r->nodes[o->last].end < begin)
        return o->last;
    for (int k = 0; k < o->npts; k++)
        if (r->nodes[o->pts[k]].end < begin)
            return o->pts[k];
    return -1;
}

/* What an operation of thread t on s whose call began at `begin` is ordered after besides s's
 * own earlier work: t's observations and the legacy rules as of `begin` (~0: the next
 * operation, which begins after every call so far). */
static void learned(hbref *r, uint64_t t, const stream *s, uint64_t begin, set *p)
{
    memset(p, 0, sizeof *p);
    thread *th = find_thread(r, t);
    if (th)
        set_or(p, &th->known);
    for (int i = 0; i < r->nstreams; i++) {
        const stream *o = &r->streams[i];
        if (o == s || o->removed || o->ctx != s->ctx)
            continue;
        int n = asof(r, o, begin);
        if (n >= 0 &&
            ((blocking(s->kind) && o->kind == DLS_HB_LEGACY) || (s->kind == DLS_HB_LEGACY && blocking(o->kind))))
            set_or(p, &r->nodes[n].anc);
    }
}

/* What the next operation of thread t on s would be ordered after (a call beginning at `begin`). */
static void prospective(hbref *r, uint64_t t, const stream *s, uint64_t begin, set *p)
{
    learned(r, t, s, begin, p);
    if (s->last >= 0)
        set_or(p, &r->nodes[s->last].anc);
}

/* A new node of s ordered after the sets in anc (and itself), ending at `end`, its call's point
 * when `point`. */
static int add_node(hbref *r, stream *s, const set *anc, uint64_t end, int point)
{
    if (r->nnodes == HBREF_MAX_OPS)
        return ENOSPC;
    int n = r->nnodes++;
    node *nd = &r->nodes[n];
    nd->anc = *anc;
    nd->anc.b[n / 64] |= 1ULL << (n % 64);
    nd->stream = (int)(s - r->streams);
    nd->pos = ++s->pos;
    if (end > r->now)
        r->now = end;
    nd->end = r->now;
    s->last = n;
    if (point) {
        memmove(s->pts + 1, s->pts, sizeof s->pts[0] * (DLS_HB_POINTS - 1));
        s->pts[0] = n;
        if (s->npts < DLS_HB_POINTS)
            s->npts++;
    }
    return 0;
}

/* The node of thread t's last operation when it is on s, else -1. */
static int own_on(hbref *r, uint64_t t, const stream *s)
{
    const thread *th = find_thread(r, t);
    return th && th->own_set && r->nodes[th->own].stream == (int)(s - r->streams) ? th->own : -1;
}

static int add_op(hbref *r, uint64_t t, uint64_t sid, const set *wait_on, dls_hb_when w, uint64_t *pos)
{
    stream *s = find_stream(r, sid);
    if (!s || s->removed)
        return ENOENT;
    set anc;
    prospective(r, t, s, w.begin, &anc);
    if (wait_on)
        set_or(&anc, wait_on);
    int rc = add_node(r, s, &anc, w.end, 1);
    thread *th = rc == 0 ? get_thread(r, t) : NULL;
    if (th) {
        th->own = s->last;
        th->own_set = 1;
    }
    if (rc == 0 && pos)
        *pos = s->pos;
    return rc;
}

int hbref_op(hbref *r, uint64_t thread, uint64_t stream, dls_hb_when when, uint64_t *pos)
{
    return add_op(r, thread, stream, NULL, when, pos);
}

int hbref_op_again(hbref *r, uint64_t thread, uint64_t sid, uint64_t n, uint64_t end, uint64_t *pos)
{
    stream *s = find_stream(r, sid); /* they learn nothing their predecessor did not */
    if (!s || s->removed)
        return ENOENT;
    for (uint64_t k = 0; k < n; k++) {
        set anc = r->nodes[s->last].anc;
        int rc = add_node(r, s, &anc, end, k == n - 1);
        if (rc)
            return rc;
    }
    if (own_on(r, thread, s) >= 0)
        find_thread(r, thread)->own = s->last; /* the thread's own last operation is the run's latest */
    if (pos)
        *pos = s->pos;
    return 0;
}

/* The record of event id, created (capturing nothing) when unknown; NULL when the table is full. */
static event *get_event(hbref *r, uint64_t id)
{
    event *e = find_event(r, id);
    for (int i = 0; !e && i < HBREF_MAX_EVENTS; i++)
        if (!r->events[i].used)
            e = &r->events[i], *e = (event){.id = id, .used = 1};
    return e;
}

/* Sets e's most recent capture, keeping the one before. */
static void push_capture(event *e, const set *anc, uint64_t end)
{
    e->prev = e->anc;
    e->prev_end = e->end;
    e->anc = *anc;
    e->end = end;
}

/* Sets e's only capture (a capture replaces an event's history). */
static void set_capture(event *e, const set *anc, uint64_t end)
{
    memset(&e->prev, 0, sizeof e->prev);
    e->prev_end = 0;
    e->anc = *anc;
    e->end = end;
}

int hbref_event_record(hbref *r, uint64_t thread, uint64_t sid, uint64_t ev, dls_hb_when w, uint64_t *pos)
{
    event *e = get_event(r, ev);
    stream *s = find_stream(r, sid);
    if (!s || s->removed)
        return ENOENT;
    if (!e)
        return ENOSPC;
    /* An earlier node of s that may follow the record: the record covers s as of its begin. */
    int overlap = s->last >= 0 && r->nodes[s->last].end >= w.begin;
    set cap;
    if (overlap) {
        learned(r, thread, s, w.begin, &cap);
        int n = asof(r, s, w.begin);
        int own = own_on(r, thread, s); /* or its own last operation there, when later */
        if (own >= 0 && (n < 0 || r->nodes[own].pos > r->nodes[n].pos))
            n = own;
        if (n >= 0)
            set_or(&cap, &r->nodes[n].anc);
    }
    int rc = add_op(r, thread, sid, NULL, w, pos);
    if (rc == 0)
        push_capture(e, overlap ? &cap : &r->nodes[r->nnodes - 1].anc, r->nodes[r->nnodes - 1].end);
    return rc;
}

int hbref_event_wait(hbref *r, uint64_t thread, uint64_t sid, uint64_t ev, dls_hb_when w, uint64_t *pos)
{
    event *e = find_event(r, ev);
    set use;
    memset(&use, 0, sizeof use);
    if (e && !set_empty(&e->anc) && (e->end == 0 || e->end < w.begin)) {
        use = e->anc;
    } else if (e && !set_empty(&e->anc) && !set_empty(&e->prev) && (e->prev_end == 0 || e->prev_end < w.begin)) {
        use = e->anc;
        set_and(&use, &e->prev);
    }
    return add_op(r, thread, sid, &use, w, pos);
}

int hbref_sync_stream(hbref *r, uint64_t t, uint64_t sid)
{
    stream *s = find_stream(r, sid);
    if (!s)
        return ENOENT;
    if (s->last < 0)
        return 0;
    thread *th = get_thread(r, t);
    if (!th)
        return ENOSPC;
    set_or(&th->known, &r->nodes[s->last].anc);
    return 0;
}

int hbref_sync_event(hbref *r, uint64_t t, uint64_t ev)
{
    event *e = find_event(r, ev);
    if (!e)
        return 0;
    thread *th = get_thread(r, t);
    if (!th)
        return ENOSPC;
    set_or(&th->known, &e->anc);
    return 0;
}

int hbref_capture_stream(hbref *r, uint64_t ev, uint64_t sid)
{
    stream *s = find_stream(r, sid);
    if (!s)
        return ENOENT;
    event *e = get_event(r, ev);
    if (!e)
        return ENOSPC;
    set a = {{0}};
    if (s->last >= 0)
        a = r->nodes[s->last].anc;
    set_capture(e, &a, 0);
    return 0;
}

int hbref_capture_at(hbref *r, uint64_t ev, uint64_t sid, uint64_t pos)
{
    stream *s = find_stream(r, sid);
    if (!s)
        return ENOENT;
    if (pos == 0 || pos > s->pos)
        return EINVAL;
    event *e = get_event(r, ev);
    if (!e)
        return ENOSPC;
    set a = {{0}};
    int point = pos >= s->pos ? s->last : -1; /* the newest point at or below pos */
    for (int k = 0; point < 0 && k < s->npts; k++)
        if (r->nodes[s->pts[k]].pos <= pos)
            point = s->pts[k];
    if (point >= 0)
        a = r->nodes[point].anc;
    int si = (int)(s - r->streams);
    for (int i = 0; i < r->nnodes; i++) /* and the stream's operations up to pos */
        if (r->nodes[i].stream == si && r->nodes[i].pos <= pos)
            a.b[i / 64] |= UINT64_C(1) << (i % 64);
    set_capture(e, &a, 0);
    return 0;
}

int hbref_capture_event(hbref *r, uint64_t ev, uint64_t from)
{
    event *e = get_event(r, ev), *f = find_event(r, from);
    if (!e)
        return ENOSPC;
    if (f != e) {
        set a = {{0}};
        if (f)
            a = f->anc;
        set_capture(e, &a, f ? f->end : 0);
    }
    return 0;
}

/* Captures the last operations of the streams of ctx (every stream when all). */
static int capture_streams(hbref *r, uint64_t ev, int all, uint64_t ctx)
{
    event *e = get_event(r, ev);
    if (!e)
        return ENOSPC;
    set a = {{0}};
    for (int i = 0; i < r->nstreams; i++)
        if ((all || r->streams[i].ctx == ctx) && r->streams[i].last >= 0)
            set_or(&a, &r->nodes[r->streams[i].last].anc);
    set_capture(e, &a, 0);
    return 0;
}

int hbref_capture_context(hbref *r, uint64_t ev, uint64_t ctx)
{
    return capture_streams(r, ev, 0, ctx);
}

int hbref_capture_all(hbref *r, uint64_t ev)
{
    return capture_streams(r, ev, 1, 0);
}

int hbref_capture_op(hbref *r, uint64_t ev, uint64_t thread, uint64_t sid, uint64_t begin)
{
    stream *s = find_stream(r, sid);
    if (!s)
        return ENOENT;
    event *e = get_event(r, ev);
    if (!e)
        return ENOSPC;
    set a = {{0}};
    /* The node told on s before its last one: its stream predecessor, among the last node's ancestors. */
    int earlier = -1;
    for (int i = 0; s->last >= 0 && i < s->last; i++)
        if (r->nodes[i].stream == (int)(s - r->streams) && r->nodes[i].pos == r->nodes[s->last].pos - 1)
            earlier = i;
    if (s->last >= 0 && (earlier < 0 || r->nodes[earlier].end < begin)) {
        a = r->nodes[s->last].anc;
    } else if (s->last >= 0) {
        learned(r, thread, s, begin, &a);
        int n = asof(r, s, begin);
        if (n >= 0)
            set_or(&a, &r->nodes[n].anc);
    }
    set_capture(e, &a, 0);
    return 0;
}

uint64_t hbref_event_covers(hbref *r, uint64_t ev, uint64_t sid)
{
    event *e = find_event(r, ev);
    stream *s = find_stream(r, sid);
    uint64_t hi = 0;
    for (int i = 0; e && s && i < r->nnodes; i++)
        if (r->nodes[i].stream == (int)(s - r->streams) && set_has(&e->anc, i) && r->nodes[i].pos > hi)
            hi = r->nodes[i].pos;
    return hi;
}

/* The live stream sid (s), or ENOENT. */
static int observer(hbref *r, uint64_t sid, stream **s)
{
    *s = find_stream(r, sid);
    return *s && !(*s)->removed ? 0 : ENOENT;
}

/* Waits for the candidate streams: each at its current position, minus those whose last
 * operation is ordered before another candidate's last operation; sorted by stream id. */
static void emit_waits(hbref *r, const int *cand, dls_hb_epoch *out, size_t cap, size_t *n)
{
    dls_hb_epoch kept[HBREF_MAX_STREAMS];
    size_t k = 0;
    for (int x = 0; x < r->nstreams; x++) {
        if (!cand[x])
            continue;
        int dominated = 0;
        for (int y = 0; y < r->nstreams && !dominated; y++)
            dominated = y != x && cand[y] && set_has(&r->nodes[r->streams[y].last].anc, r->streams[x].last);
        if (!dominated)
            kept[k++] = (dls_hb_epoch){.stream = r->streams[x].id, .pos = r->streams[x].pos};
    }
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && kept[j - 1].stream > kept[j].stream; j--) {
            dls_hb_epoch t = kept[j];
            kept[j] = kept[j - 1];
            kept[j - 1] = t;
        }
    for (size_t i = 0; i < k && i < cap; i++)
        out[i] = kept[i];
    *n = k;
}

/* The node at position pos of stream index si, or -1. */
static int node_at(const hbref *r, int si, uint64_t pos)
{
    for (int i = 0; i < r->nnodes; i++)
        if (r->nodes[i].stream == si && r->nodes[i].pos == pos)
            return i;
    return -1;
}

int hbref_frontier_waits(hbref *r, uint64_t thread, uint64_t sid, const dls_hb_epoch *f, size_t nf, dls_hb_epoch *out,
                         size_t cap, size_t *n)
{
    stream *s;
    int cand[HBREF_MAX_STREAMS] = {0};
    if (observer(r, sid, &s) != 0)
        return ENOENT;
    for (size_t i = 0; i < nf; i++)
        if (!find_stream(r, f[i].stream))
            return EINVAL;
    set p;
    prospective(r, thread, s, UINT64_MAX, &p);
    for (size_t i = 0; i < nf; i++) {
        int si = (int)(find_stream(r, f[i].stream) - r->streams);
        if (f[i].pos != 0 && !set_has(&p, node_at(r, si, f[i].pos)))
            cand[si] = 1;
    }
    emit_waits(r, cand, out, cap, n);
    return 0;
}

int hbref_ordered(hbref *r, uint64_t thread, uint64_t sid, uint64_t x, uint64_t pos, int *ordered)
{
    stream *s, *xs = find_stream(r, x);
    if (!xs || observer(r, sid, &s) != 0)
        return ENOENT;
    set p;
    prospective(r, thread, s, UINT64_MAX, &p);
    *ordered = pos == 0 || set_has(&p, node_at(r, (int)(xs - r->streams), pos));
    return 0;
}
