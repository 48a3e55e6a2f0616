/* Producer attribution: which pending work of which streams may write an exchanged tensor (see
 * exch.h, dls_pol_attribute). Reads the streams' histories, not the index: the question is about
 * operations enqueued before the tensor was exported, when no range described it. Lock held. */
#include "access.h"
#include "exch.h"

#include "../common/config.h"
#include "../report/warn.h"

#include <stdio.h>
#include <string.h>

/* Notes stream s as one of x's producer streams when its history holds an operation touching x,
 * complete or not (the producer's side of the two-way rule: exch.h, dls_pol_x_produced_on). */
static void note_producer(dls_pol_x *x, const dls_pol_stream *s)
{
    if (x->nprod == DLS_POL_MAXF)
        return;
    for (unsigned k = 0; k < s->count; k++)
        if (dls_pol_touches(&s->ring[k].a, x->alo, x->lo, x->hi)) {
            x->prod[x->nprod++] = s->id;
            return;
        }
}

void dls_pol_attribute(dls_pol_x *x)
{
    x->nfront = 0;
    x->nprod = 0;
    x->overflow &= ~DLS_POL_OVER_PRODUCERS;
    for (size_t i = 0; i < dls_pol_g.cap; i++) {
        dls_pol_stream *s = dls_pol_g.streams[i];
        if (!s)
            continue;
        if (s->last <= s->done) {
            note_producer(x, s);
            continue;
        }
        const dls_pol_entry *best = NULL;
        uint64_t pos = s->lost > s->done && (s->lost_cons || (s->lost_lo < x->hi && x->alo < s->lost_hi)) ? s->lost : 0;
        for (unsigned k = 0; k < s->count; k++) {
            const dls_pol_entry *e = &s->ring[k];
            if (e->pos > s->done && e->pos > pos && dls_pol_touches(&e->a, x->alo, x->lo, x->hi)) {
                pos = e->pos;
                best = e;
            }
        }
        if (!pos) {
            note_producer(x, s);
            continue;
        }
        if (x->nprod < DLS_POL_MAXF)
            x->prod[x->nprod++] = s->id;
        if (x->nfront == DLS_POL_MAXF) {
            x->overflow |= DLS_POL_OVER_PRODUCERS;
            dls_warn_once("policy-frontier", "an exchanged tensor has pending writers on more than %d streams; %s",
                          DLS_POL_MAXF,
                          dls_pol_g.mode == DLS_MODE_FIX ? "its consumers wait for every stream with pending work"
                                                         : "the extra streams are not checked");
            return;
        }
        dls_pol_touch *t = &x->front[x->nfront++];
        t->at.stream = s->id;
        t->at.pos = pos;
        t->api = best ? best->a.api : NULL;
        memcpy(t->name, best ? best->name : "", best ? DLS_POL_NAME : 1);
        if (!best)
            snprintf(t->name, sizeof t->name, "(an operation no longer in the history)");
    }
}
