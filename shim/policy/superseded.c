/* Destroyed streams whose pending work later work superseded (see superseded.h).
 *
 * A sweep cuts the pending history of each candidate (a destroyed stream no exchange state names)
 * into pieces, the units attribution asks about: a launch word (it touches a tensor whose
 * allocation it points into), a range (a copy's or a set's: it touches what it overlaps) and a box
 * (a wide launch's bounding box or a lost range: it touches what overlaps it from the start of the
 * tensor's allocation). A piece is superseded by a later operation of another stream that hb
 * orders after it and that touches every tensor the piece touches: the same word, a range holding
 * the range, or a box holding the word, range or box; and, when the piece may write, one that may
 * write them (attribute.c's may_write: a launch always may, a copy or a set through its written
 * range). One walk over every history finds them, each of its entries looked up in the pieces,
 * kept in address order. */
#include "superseded.h"

#include "exch.h"
#include "ring.h"
#include "stream_table.h"

#include <stdlib.h>

typedef enum { WORD, RANGE, BOX } piece_kind;

/* One piece of a candidate's pending history. */
typedef struct {
    uintptr_t lo, hi; /* a word: [word, word + 1) */
    uint64_t pos;
    dls_pol_stream *st;
    uint32_t cand; /* st's index among the candidates */
    unsigned char kind, writes, done;
} piece;

#define FIRST_SWEEP 16 /* destroyed streams in the table before the first sweep */

/* Scratch *buf with room for n items of `size` bytes (*cap of them so far, grown by doubling); NULL
 * when memory is short. */
static void *room(void **buf, size_t *cap, size_t n, size_t size)
{
    size_t c = *cap;
    if (n <= c)
        return *buf;
    while (c < n)
        c = c ? 2 * c : 256;
    void *p = realloc(*buf, c * size);
    if (p) {
        *buf = p;
        *cap = c;
    }
    return p;
}

/* Marks every destroyed stream an exchange state names (its frontier, uses, producers or
 * orderings): its positions may still be asked about. */
static void mark_named(uint32_t sweep) DLS_REQUIRES(dls_pol_g.lock)
{
    for (dls_pol_x *x = dls_pol_x_first(); x; x = dls_pol_x_next(x)) {
        uint64_t ids[2 * (DLS_POL_FRONT + DLS_POL_USES)]; /* front, prod; use, ordered */
        unsigned n = 0;
        for (unsigned i = 0; i < x->nfront; i++)
            ids[n++] = x->front[i].at.stream;
        for (unsigned i = 0; i < x->nuse; i++)
            ids[n++] = x->use[i].stream;
        for (unsigned i = 0; i < x->nprod; i++)
            ids[n++] = x->prod[i];
        for (unsigned i = 0; i < x->nordered; i++)
            ids[n++] = x->ordered[i];
        for (unsigned i = 0; i < n; i++) {
            dls_pol_stream *st = dls_pol_stream_find(ids[i]);
            if (st && st->removed)
                st->named = sweep;
        }
    }
}

/* Appends the pieces of candidate st, the candidate numbered c, to the sweep's pieces (*n of them
 * so far). 1 when done, 0 when some pending entry may touch anything (st cannot be superseded),
 * -1 when memory is short. */
static int cut(dls_pol_stream *st, uint32_t c, size_t *n) DLS_REQUIRES(dls_pol_g.lock)
{
    if (st->lost_cons > st->done)
        return 0;
    size_t need = st->lost > st->done ? st->nlost : 0;
    for (unsigned k = 0; k < st->count; k++)
        need += st->ring[k].a.nwords + st->ring[k].a.nranges;
    piece *p = room(&dls_pol_g.superseded.pieces, &dls_pol_g.superseded.npieces, *n + need, sizeof *p);
    if (!p)
        return -1;
    for (unsigned k = 0; k < st->count; k++) {
        const dls_pol_entry *e = &st->ring[k];
        if (e->pos <= st->done)
            continue;
        if (e->a.conservative)
            return 0;
        for (unsigned i = 0; i < e->a.nwords; i++)
            if (e->words[i] >= 4096)
                p[(*n)++] = (piece){e->words[i], e->words[i] + 1, e->pos, st, c, WORD, 1, 0};
        for (unsigned i = 0; i < e->a.nranges; i++)
            p[(*n)++] = (piece){e->a.lo[i],
                                e->a.hi[i],
                                e->pos,
                                st,
                                c,
                                i == 0 && e->a.boxed ? BOX : RANGE,
                                (unsigned char)dls_pol_range_may_write(&e->a, i),
                                0};
    }
    if (st->lost > st->done) {
        const dls_pol_lost *lost = dls_pol_ring_lost_ranges(st);
        for (unsigned i = 0; i < st->nlost; i++)
            if (lost[i].pos > st->done)
                p[(*n)++] = (piece){lost[i].lo, lost[i].hi, lost[i].pos, st, c, BOX, lost[i].wpos > st->done, 0};
    }
    return 1;
}

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = ((const piece *)a)->lo, y = ((const piece *)b)->lo;
    return (x > y) - (x < y);
}

/* The first of p[0..n) with lo >= v. */
static size_t first_at(const piece *p, size_t n, uintptr_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].lo < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Entry f of stream t, which touches [lo, hi) as a word, range or box (`kind`) and writes it when
 * `writes`, supersedes the pieces it holds that hb orders before it. */
static void supersede(piece *p, size_t n, const dls_pol_stream *t, const dls_pol_entry *f, piece_kind kind,
                      uintptr_t lo, uintptr_t hi, int writes) DLS_REQUIRES(dls_pol_g.lock)
{
    for (size_t i = first_at(p, n, lo); i < n && p[i].lo < hi; i++) {
        piece *q = &p[i];
        if (q->done || q->st == t || (q->writes && !writes) || q->hi > hi)
            continue;
        if (kind == WORD ? q->kind != WORD || q->lo != lo : kind == RANGE && q->kind != RANGE)
            continue;
        int before = 0;
        if (!dls_hb_op_before(dls_pol_g.hb, q->st->id, q->pos, t->id, f->pos, &before) && before)
            q->done = 1;
    }
}

/* Every history entry supersedes what it can of p[0..n). */
static void walk_histories(piece *p, size_t n) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_stream *t;
    DLS_POL_EACH_STREAM (t) {
        for (unsigned k = 0; t->ring && k < t->count; k++) {
            const dls_pol_entry *f = &t->ring[k];
            if (f->a.conservative) {
                supersede(p, n, t, f, BOX, 0, UINTPTR_MAX, 1);
                continue;
            }
            for (unsigned i = 0; i < f->a.nwords; i++)
                if (f->words[i] >= 4096)
                    supersede(p, n, t, f, WORD, f->words[i], f->words[i] + 1, 1);
            for (unsigned i = 0; i < f->a.nranges; i++)
                supersede(p, n, t, f, i == 0 && f->a.boxed ? BOX : RANGE, f->a.lo[i], f->a.hi[i],
                          dls_pol_range_may_write(&f->a, i));
        }
    }
}

void dls_pol_forget_superseded(void)
{
    unsigned next = dls_pol_g.superseded.next > FIRST_SWEEP ? dls_pol_g.superseded.next : FIRST_SWEEP;
    if (dls_pol_g.nremoved < next)
        return;
    dls_pol_g.superseded.next = 2 * dls_pol_g.nremoved; /* also when memory is short */
    uint32_t sweep = ++dls_pol_g.superseded.sweeps;
    mark_named(sweep);
    dls_pol_stream **cand =
        room(&dls_pol_g.superseded.cands, &dls_pol_g.superseded.ncands, dls_pol_g.nremoved, sizeof *cand);
    if (!cand)
        return;
    size_t ncand = 0, n = 0;
    dls_pol_stream *s;
    DLS_POL_EACH_STREAM (s) {
        if (!s->removed || s->named == sweep)
            continue;
        size_t before = n;
        int r = cut(s, (uint32_t)ncand, &n);
        if (r < 0)
            return;
        if (r)
            cand[ncand++] = s;
        else
            n = before; /* it stays: drop the pieces cut so far */
    }
    piece *p = dls_pol_g.superseded.pieces;
    if (n)
        qsort(p, n, sizeof *p, by_lo);
    walk_histories(p, n);
    for (size_t i = 0; i < n; i++) /* a piece left keeps its candidate */
        if (!p[i].done)
            cand[p[i].cand] = NULL;
    for (size_t c = 0; c < ncand; c++)
        if (cand[c])
            dls_pol_stream_forget(cand[c]);
    dls_pol_g.superseded.next = 2 * dls_pol_g.nremoved;
}
