/* The reference's guaranteed pasts (oracle.h, "Rules"): one sweep of the trace in stamp order.
 *
 * GP(o) is a bit set over the operations enqueued before o (its index order is stamp order), so
 * n operations take n*n/128 bytes. What other threads published of the host's knowledge is kept in
 * an accumulator G (H and HE completions); a thread's waits are added to it at its next return.
 * At each call begin the thread takes a snapshot of it (copy on write: the accumulator is copied
 * only when it changes while a snapshot holds it), which is exactly what was published before its
 * latest call began. What the thread itself waited for is in a per-thread set T. The stream and
 * legacy rules need, per stream and thread, the latest operation host-before o: a binary search
 * in the thread's lane of the stream (stamps and return stamps increase along it).
 *
 * An event wait may have a candidate record enqueued after it (a record whose call overlaps the
 * wait's): its past is not known yet in stamp order. A record's past never holds the wait (they
 * are not host-ordered), so the sweep runs again with the pasts of such records from the previous
 * sweep (the first uses the record alone) until none changes: the least fixed point. */
#include "oracle_internal.h"

#include <stdio.h>

/* ---- shared bit sets with copy on write ---- */
typedef struct {
    unsigned refs;
    uint64_t w[];
} vbits;

static void *zalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "oracle: out of memory\n");
        exit(2);
    }
    return p;
}

static uint64_t *alloc0(size_t words)
{
    return zalloc(words, sizeof(uint64_t));
}

static vbits *vb_new(size_t words)
{
    vbits *v = calloc(1, sizeof *v + words * sizeof(uint64_t) + sizeof(uint64_t));
    if (!v) {
        fprintf(stderr, "oracle: out of memory\n");
        exit(2);
    }
    v->refs = 1;
    return v;
}

static vbits *vb_ref(vbits *v)
{
    if (v)
        v->refs++;
    return v;
}

static void vb_unref(vbits *v)
{
    if (v && --v->refs == 0)
        free(v);
}

/* *v made private to the accumulator (copied when a snapshot shares it). */
static vbits *vb_own(vbits *v, size_t words)
{
    if (v->refs == 1)
        return v;
    vbits *c = vb_new(words);
    memcpy(c->w, v->w, words * sizeof(uint64_t));
    v->refs--;
    return c;
}

/* ---- the sweep ---- */
typedef struct {
    const o_model *m;
    o_past *p;
    size_t words;    /* of a full set */
    size_t done;     /* operations whose past this sweep has computed */
    int lenient;     /* a host wait's completion is known to every thread from its H line on */
    uint64_t **prev; /* pasts of late candidate records, from the previous sweep (NULL: none yet) */
    uint32_t *late;  /* records used before their past was computed */
    size_t nlate, caplate;
    vbits *g;              /* published host knowledge */
    vbits **snap_g;        /* per thread: g when its innermost open call began */
    vbits *(*outer_g)[16]; /* per thread: snap_g of the calls enclosing it, innermost last */
    int *depth;            /* per thread: its open calls */
    uint64_t **t;          /* per thread: its own host knowledge */
    vbits **import_g;      /* per thread: g at its latest import note (NULL: none yet) */
    uint64_t **pend_g;     /* per thread: to publish into g */
    int *pend_g_dirty;     /* per thread: the least depth of the host waits in pend_g (0: none) */
} sweep;

/* The per-thread or per-context set *s, made on first use. */
static uint64_t *lazy(uint64_t **s, size_t words)
{
    if (!*s)
        *s = alloc0(words);
    return *s;
}

/* GP(r): this sweep's, or for a record enqueued later than what asks, the previous sweep's (NULL:
 * none yet), noted as late. */
static const uint64_t *past_of(sweep *w, uint32_t r)
{
    if (r < w->done)
        return w->p->gp[r];
    w->late = oracle_grow(w->late, &w->caplate, w->nlate, sizeof *w->late);
    w->late[w->nlate++] = r;
    return w->prev[r];
}

/* dst (dwords words) |= closure(r): r and its past. */
static void or_closure(sweep *w, uint64_t *dst, size_t dwords, uint32_t r)
{
    const uint64_t *gp = past_of(w, r);
    size_t rw = ORACLE_WORDS(r);
    if (gp)
        bits_or(dst, gp, rw < dwords ? rw : dwords);
    if (r / 64 < dwords)
        bits_set(dst, r);
}

/* dst (dwords words) &= closure(r). */
static void and_closure(sweep *w, uint64_t *dst, size_t dwords, uint32_t r)
{
    const uint64_t *gp = past_of(w, r);
    size_t rw = ORACLE_WORDS(r);
    int has_self = r / 64 < dwords && bits_has(dst, r);
    for (size_t i = 0; i < dwords; i++)
        dst[i] &= gp && i < rw ? gp[i] : 0;
    if (has_self)
        bits_set(dst, r);
}

/* The index of the last op in lane l that is host-before P with seq <= maxseq, or ORACLE_NONE. */
static uint32_t lane_latest(const o_model *m, const o_lane *l, const o_point *P, uint64_t maxseq)
{
    size_t lo = 0, hi = l->n; /* the ops before P are l->ops[0..lo) at the end */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const o_point *a = &m->ops[l->ops[mid]].at;
        if (oracle_before(a, P))
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo > 0 && m->ops[l->ops[lo - 1]].seq > maxseq)
        lo--;
    return lo ? l->ops[lo - 1] : ORACLE_NONE;
}

/* dst |= the closures of the latest op of each thread on stream s host-before P (seq <= maxseq). */
static void stream_before(sweep *w, uint64_t *dst, size_t dwords, uint32_t s, const o_point *P, uint64_t maxseq)
{
    const o_stream *st = &w->m->streams[s];
    for (size_t l = 0; l < st->nlanes; l++) {
        uint32_t p = lane_latest(w->m, &st->lanes[l], P, maxseq);
        if (p != ORACLE_NONE && !(p / 64 < dwords && bits_has(dst, p)))
            or_closure(w, dst, dwords, p);
    }
}

/* A growing list of op indices. */
typedef struct {
    uint32_t *v;
    size_t n, cap;
} idx_list;

static void push(idx_list *l, uint32_t i)
{
    l->v = oracle_grow(l->v, &l->cap, l->n, sizeof *l->v);
    l->v[l->n++] = i;
}

/* dst (dwords words, zero) = what a wait for event e at P guarantees: the intersection of the
 * closures of its candidate latest records (rule 3); nothing when none is host-before P. */
static void event_past(sweep *w, uint64_t *dst, size_t dwords, uint32_t e, const o_point *P)
{
    const o_model *m = w->m;
    const o_event *ev = &m->events[e];
    idx_list maxi = {0}, over = {0};
    uint64_t best_lastc = 0;
    size_t lo = 0, hi = ev->n; /* the records before P's stamp: [0, lo) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->ops[ev->records[mid]].at.stamp < P->stamp)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Backwards from P: the maximal records host-before P, and the overlapping ones (P cannot be
     * host-before an earlier record). */
    for (size_t j = lo; j-- > 0;) {
        if (maxi.n && ev->max_nextr[j] < best_lastc)
            break; /* every record up to j is host-before a maximal one, so before P too */
        uint32_t r = ev->records[j];
        const o_point *a = &m->ops[r].at;
        if (!oracle_before(a, P)) {
            push(&over, r);
            continue;
        }
        int dominated = 0;
        for (size_t i = 0; i < maxi.n && !dominated; i++)
            dominated = oracle_before(a, &m->ops[maxi.v[i]].at);
        if (dominated)
            continue;
        push(&maxi, r);
        best_lastc = a->lastc > best_lastc ? a->lastc : best_lastc;
    }
    if (maxi.n) { /* else "never recorded" is a candidate: nothing is guaranteed */
        /* Forwards from P: the records P is not host-before (their calls overlap P's). */
        for (size_t j = lo; j < ev->n && ev->min_lastc[j] <= P->nextr; j++)
            if (!oracle_before(P, &m->ops[ev->records[j]].at))
                push(&over, ev->records[j]);
        or_closure(w, dst, dwords, maxi.v[0]);
        for (size_t i = 1; i < maxi.n; i++)
            and_closure(w, dst, dwords, maxi.v[i]);
        for (size_t i = 0; i < over.n; i++)
            and_closure(w, dst, dwords, over.v[i]);
    }
    free(maxi.v);
    free(over.v);
}

/* A call of thread t begins: its points see what was published then; what the call encloses
 * (a hook's own calls) leaves the enclosing call's view unchanged when it returns. */
static void on_call(sweep *w, uint32_t t)
{
    if (w->depth[t] < 16)
        w->outer_g[t][w->depth[t]] = w->snap_g[t];
    else
        vb_unref(w->snap_g[t]);
    w->depth[t]++;
    w->snap_g[t] = vb_ref(w->g);
}

/* Thread t's call at depth `depth` returns: the host waits made in it (or deeper) are published,
 * not at the return of a call a hook made inside it. */
static void on_return(sweep *w, uint32_t t, int depth)
{
    if (w->depth[t] > 0 && --w->depth[t] < 16) {
        vb_unref(w->snap_g[t]);
        w->snap_g[t] = w->outer_g[t][w->depth[t]];
        w->outer_g[t][w->depth[t]] = NULL;
    }
    if (w->pend_g_dirty[t] && w->pend_g_dirty[t] >= depth) {
        w->g = vb_own(w->g, w->words);
        bits_or(w->g->w, w->pend_g[t], w->words);
        memset(w->pend_g[t], 0, w->words * sizeof(uint64_t));
        w->pend_g_dirty[t] = 0;
    }
}

/* dst |= rule 2 for o at P on the legacy stream of context x: the closures of the latest
 * operations host-before P on each of x's blocking streams still live at P for sure, destroyed
 * never or host-after P (whether the legacy stream waits for the pending work of a destroyed
 * stream is not documented). */
static void blocking_before(sweep *w, uint64_t *dst, size_t dwords, uint32_t x, const o_point *P)
{
    const o_ctx *c = &w->m->ctxs[x];
    for (size_t k = 0; k < c->nstreams; k++) {
        const o_stream *st = &w->m->streams[c->streams[k]];
        if (st->kind != SK_LEGACY && st->blocking && (!st->destroyed || oracle_before(P, &st->destroy)))
            stream_before(w, dst, dwords, c->streams[k], P, UINT64_MAX);
    }
}

static void on_op(sweep *w, uint32_t i)
{
    const o_model *m = w->m;
    const o_op *op = &m->ops[i];
    const o_stream *s = &m->streams[op->stream];
    uint32_t t = op->at.thread, x = s->ctx;
    size_t dw = ORACLE_WORDS(i);
    uint64_t *dst = alloc0(dw);
    const vbits *g = w->lenient ? w->g : w->snap_g[t];
    if (g) /* rule 4: what the host knew */
        bits_or(dst, g->w, dw);
    if (w->t[t])
        bits_or(dst, w->t[t], dw);
    stream_before(w, dst, dw, op->stream, &op->at, UINT64_MAX); /* rule 1 */
    if (s->kind == SK_LEGACY && op->kind != OK_MARK) {          /* rule 2 */
        blocking_before(w, dst, dw, x, &op->at);
    } else if (s->blocking && m->ctxs[x].legacy != ORACLE_NONE) {
        stream_before(w, dst, dw, m->ctxs[x].legacy, &op->at, UINT64_MAX);
    }
    if (op->wait_for != ORACLE_NONE) { /* rule 3 */
        uint64_t *ev = alloc0(dw);
        event_past(w, ev, dw, op->wait_for, &op->at);
        bits_or(dst, ev, dw);
        free(ev);
    }
    w->p->gp[i] = dst;
    w->done = i + 1;
}

static void on_hostwait(sweep *w, uint32_t k)
{
    const o_hostwait *h = &w->m->waits[k];
    uint32_t t = h->at.thread;
    uint64_t *comp = alloc0(w->words);
    if (h->ctx != ORACLE_NONE) {
        const o_ctx *c = &w->m->ctxs[h->ctx];
        for (size_t k = 0; k < c->nstreams; k++)
            stream_before(w, comp, w->words, c->streams[k], &h->at, UINT64_MAX);
    } else if (h->stream != ORACLE_NONE) {
        stream_before(w, comp, w->words, h->stream, &h->at, h->seq);
    } else {
        event_past(w, comp, w->words, h->event, &h->at);
    }
    bits_or(lazy(&w->t[t], w->words), comp, w->words);
    if (w->lenient) {
        w->g = vb_own(w->g, w->words);
        bits_or(w->g->w, comp, w->words);
    } else {
        bits_or(lazy(&w->pend_g[t], w->words), comp, w->words);
        int at = h->at.depth > 0 ? h->at.depth : 1;
        if (!w->pend_g_dirty[t] || at < w->pend_g_dirty[t])
            w->pend_g_dirty[t] = at;
    }
    free(comp);
}

/* A new set: what g holds and thread t's own host knowledge (NULL when g is NULL). */
static uint64_t *knowledge(const sweep *w, const vbits *g, uint32_t t)
{
    if (!g)
        return NULL;
    uint64_t *hk = alloc0(w->words);
    bits_or(hk, g->w, w->words);
    if (w->t[t])
        bits_or(hk, w->t[t], w->words);
    return hk;
}

static void on_note(sweep *w, uint32_t k)
{
    const o_note *n = &w->m->notes[k];
    uint32_t t = n->at.thread;
    /* the note's point is its own stamp: all that was published */
    w->p->hk_note[k] = knowledge(w, w->g, t);
    if (n->hostread)
        w->p->hk_import[k] = knowledge(w, w->import_g[t], t);
    if (n->import) {
        vb_unref(w->import_g[t]);
        w->import_g[t] = vb_ref(w->g);
    }
}

static void sweep_free(sweep *w)
{
    for (size_t t = 0; t < w->m->nthreads; t++) {
        vb_unref(w->snap_g[t]);
        vb_unref(w->import_g[t]);
        for (int k = 0; k < 16; k++)
            vb_unref(w->outer_g[t][k]);
        free(w->t[t]);
        free(w->pend_g[t]);
    }
    vb_unref(w->g);
    free(w->snap_g);
    free(w->import_g);
    free(w->outer_g);
    free(w->depth);
    free(w->t);
    free(w->pend_g);
    free(w->pend_g_dirty);
}

/* One sweep over the trace; the pasts go to p (whose old ones are freed). */
static void run_sweep(sweep *w)
{
    const o_model *m = w->m;
    size_t nt = m->nthreads;
    w->done = 0;
    w->nlate = 0;
    w->g = vb_new(w->words);
    w->snap_g = zalloc(nt, sizeof *w->snap_g);
    w->import_g = zalloc(nt, sizeof *w->import_g);
    w->outer_g = zalloc(nt, sizeof *w->outer_g);
    w->depth = zalloc(nt, sizeof *w->depth);
    w->t = zalloc(nt, sizeof *w->t);
    w->pend_g = zalloc(nt, sizeof *w->pend_g);
    w->pend_g_dirty = zalloc(nt, sizeof *w->pend_g_dirty);
    for (size_t i = 0; i < m->nevs; i++) {
        const o_ev *e = &m->evs[i];
        switch (e->type) {
        case EV_CALL:
            on_call(w, e->index);
            break;
        case EV_RETURN:
            on_return(w, e->index, e->depth);
            break;
        case EV_OP:
            on_op(w, e->index);
            break;
        case EV_HOSTWAIT:
            on_hostwait(w, e->index);
            break;
        case EV_NOTE:
            on_note(w, e->index);
            break;
        }
    }
    sweep_free(w);
}

static void free_pasts(const o_model *m, o_past *p)
{
    for (size_t i = 0; i < m->nops; i++) {
        free(p->gp[i]);
        p->gp[i] = NULL;
    }
    for (size_t k = 0; k < m->nnotes; k++) {
        free(p->hk_note[k]);
        free(p->hk_import[k]);
        p->hk_note[k] = p->hk_import[k] = NULL;
    }
}

int oracle_past_compute(const o_model *m, o_past *p, int lenient, char *err, size_t n)
{
    sweep w = {.m = m, .p = p, .words = ORACLE_WORDS(m->nops), .lenient = lenient};
    p->gp = zalloc(m->nops, sizeof *p->gp);
    p->hk_note = zalloc(m->nnotes, sizeof *p->hk_note);
    p->hk_import = zalloc(m->nnotes, sizeof *p->hk_import);
    w.prev = zalloc(m->nops, sizeof *w.prev);
    int rc = -1;
    for (p->passes = 1; p->passes <= 32; p->passes++) {
        run_sweep(&w);
        int changed = 0;
        for (size_t k = 0; k < w.nlate; k++) {
            uint32_t r = w.late[k];
            size_t rw = ORACLE_WORDS(r);
            if (w.prev[r] && memcmp(w.prev[r], p->gp[r], rw * sizeof(uint64_t)) == 0)
                continue;
            if (!w.prev[r])
                w.prev[r] = alloc0(rw);
            memcpy(w.prev[r], p->gp[r], rw * sizeof(uint64_t));
            changed = 1;
        }
        if (!changed) {
            rc = 0;
            break;
        }
        free_pasts(m, p);
    }
    if (rc)
        snprintf(err, n, "the pasts of late event records did not settle in 32 sweeps");
    for (size_t i = 0; i < m->nops; i++)
        free(w.prev[i]);
    free(w.prev);
    free(w.late);
    return rc;
}

void oracle_past_free(const o_model *m, o_past *p)
{
    if (p->gp)
        free_pasts(m, p);
    free(p->gp);
    free(p->hk_note);
    free(p->hk_import);
    memset(p, 0, sizeof *p);
}
