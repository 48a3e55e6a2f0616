/* Producer attribution: which pending work of which streams may write an exchanged tensor (see
 * attribute.h). Reads the streams' histories, not the index: the question is about
 * operations enqueued before the tensor was exported, when no range described it. The frontier
 * keeps only the pending work that no other pending work of it is ordered after. Lock held. */
#include "attribute.h"

#include "access.h"
#include "ring.h"
#include "stream_table.h"

#include "../common/config.h"
#include "../report/warn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Notes stream s as one of x's producer streams when its history holds an operation touching x,
 * complete or not (the producer's side of the two-way rule: exch.h, dls_pol_x_produced_on). */
static void note_producer(dls_pol_x *x, const dls_pol_stream *s)
{
    if (x->nprod == DLS_POL_FRONT || s->removed) /* a destroyed stream makes no later use */
        return;
    for (unsigned k = 0; k < s->count; k++)
        if (dls_pol_touches(&s->ring[k].a, x->alo, x->lo, x->hi)) {
            x->prod[x->nprod++] = s->id;
            return;
        }
}

/* 1 when history entry a may write x: anything but a copy or set that only reads it (not
 * dls_pol_direction, whose read-only rule is about x's consumers, not the work before its export). */
static int may_write(const dls_pol_access *a, const dls_pol_x *x)
{
    if ((a->kind == DLS_OP_MEMCPY || a->kind == DLS_OP_MEMSET) && !a->conservative)
        return dls_pol_writes(a, x->lo, x->hi);
    return 1;
}

/* 1 when frontier entry a is ordered before entry b in the model: whatever is ordered after b is
 * ordered after a too, its pending access and, for a consumer that only reads, its pending write. */
static int covered_by(const dls_pol_touch *a, const dls_pol_touch *b)
{
    int before = 0;
    if (dls_hb_op_before(dls_pol_g.hb, a->at.stream, a->at.pos, b->at.stream, b->at.pos, &before) || !before)
        return 0;
    if (!a->write)
        return 1;
    return b->write && !dls_hb_op_before(dls_pol_g.hb, a->at.stream, a->write, b->at.stream, b->write, &before) &&
           before;
}

/* The pending work of one attribution that no other pending work follows (lock held): grown as
 * needed, kept from one export to the next. */
static dls_pol_touch *g_kept;
static unsigned g_nkept, g_capkept;

/* Keeps candidate c unless kept work is ordered after it, and drops the kept work ordered before
 * it. 0 when out of memory. */
static int keep(const dls_pol_touch *c)
{
    for (unsigned i = 0; i < g_nkept; i++)
        if (covered_by(c, &g_kept[i]))
            return 1;
    for (unsigned i = 0; i < g_nkept;)
        if (covered_by(&g_kept[i], c))
            g_kept[i] = g_kept[--g_nkept];
        else
            i++;
    if (g_nkept == g_capkept) {
        unsigned cap = g_capkept ? 2 * g_capkept : 2 * DLS_POL_FRONT;
        dls_pol_touch *more = realloc(g_kept, cap * sizeof *more);
        if (!more)
            return 0;
        g_kept = more;
        g_capkept = cap;
    }
    g_kept[g_nkept++] = *c;
    return 1;
}

/* Copies entry e's names (or, when it is gone from the history, says so) into api and name. */
static void name_entry(const dls_pol_entry *e, const char **api, char *name)
{
    *api = e ? e->a.api : NULL;
    if (e)
        memcpy(name, e->name, DLS_POL_NAME);
    else
        snprintf(name, DLS_POL_NAME, "(an operation no longer in the history)");
}

void dls_pol_attribute(dls_pol_x *x)
{
    int full = 0; /* out of memory for the candidates */
    g_nkept = 0;
    x->nprod = 0;
    x->overflow &= ~DLS_POL_OVER_PRODUCERS;
    dls_pol_stream *s;
    DLS_POL_EACH_STREAM (s) {
        if (s->last <= s->done) {
            note_producer(x, s);
            continue;
        }
        const dls_pol_entry *best = NULL, *wbest = NULL;
        uint64_t wpos; /* the lost entries' first, then the walk's */
        uint64_t pos = dls_pol_ring_lost(s, x->alo, x->hi, &wpos);
        /* newest first (the history holds its entries in position order): the first entry that
         * touches x is the latest, and the walk ends at the latest that may write it */
        for (unsigned k = 0; k < s->count && !wbest; k++) {
            const dls_pol_entry *e = &s->ring[(s->head + DLS_POL_RING - 1 - k) % DLS_POL_RING];
            if (e->pos <= s->done)
                break; /* it and every older entry are complete */
            if (!dls_pol_touches(&e->a, x->alo, x->lo, x->hi))
                continue;
            if (!best && e->pos > pos) {
                pos = e->pos;
                best = e;
            }
            if (e->pos > wpos && may_write(&e->a, x)) {
                wpos = e->pos;
                wbest = e;
            }
        }
        if (!pos) {
            note_producer(x, s);
            continue;
        }
        if (x->nprod < DLS_POL_FRONT && !s->removed)
            x->prod[x->nprod++] = s->id;
        dls_pol_touch t = {.at = {.stream = s->id, .pos = pos}, .write = wpos};
        name_entry(best, &t.api, t.name);
        if (wpos)
            name_entry(wbest, &t.wapi, t.wname);
        if (!keep(&t))
            full = 1;
    }
    x->nfront = g_nkept < DLS_POL_FRONT ? g_nkept : DLS_POL_FRONT;
    if (x->nfront) /* g_kept is NULL until the first candidate */
        memcpy(x->front, g_kept, x->nfront * sizeof *x->front);
    if (full || g_nkept > DLS_POL_FRONT) {
        x->overflow |= DLS_POL_OVER_PRODUCERS;
        dls_warn_once("policy-frontier",
                      "an exchanged tensor has pending writers on more than %d streams that the program did not "
                      "order one after another; %s",
                      DLS_POL_FRONT,
                      dls_pol_g.mode == DLS_MODE_FIX ? "its consumers wait for every stream with pending work"
                                                     : "the extra streams are not checked");
    }
}
