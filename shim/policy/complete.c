/* Host completion (see complete.h). */
#include "complete.h"

#include "ring.h"
#include "stream_table.h"

#include "../common/config.h"
#include "../report/warn.h"

#include <errno.h>

uint64_t dls_pol_snap_id(void)
{
    return DLS_POL_OWN_EVENT + dls_pol_g.own_event++;
}

/* A host synchronize the model cannot learn from keeps the work it completed pending: fix may
 * add waits it did not need, check may report a use the synchronize ordered. */
static void not_learned(void)
{
    dls_warn_once("policy-sync-memory",
                  "out of memory recording a host synchronize; the work it completed "
                  "counts as pending (%s)",
                  dls_pol_g.mode == DLS_MODE_FIX ? "fix may add needless waits" : "check may report uses it ordered");
}

/* The id of a capture that rc says was taken, else 0 (forgotten; warned once). */
static uint64_t taken(uint64_t id, int rc)
{
    if (!rc)
        return id;
    dls_hb_event_remove(dls_pol_g.hb, id);
    if (rc == ENOMEM)
        not_learned();
    return 0;
}

uint64_t dls_pol_snap_stream(const dls_pol_stream *st, uint64_t begin)
{
    uint64_t id = dls_pol_snap_id();
    return taken(id, dls_hb_capture_stream(dls_pol_g.hb, id, st->id, begin));
}

uint64_t dls_pol_snap_at(const dls_pol_stream *st, uint64_t pos)
{
    uint64_t id = dls_pol_snap_id();
    return taken(id, dls_hb_capture_at(dls_pol_g.hb, id, st->id, pos));
}

uint64_t dls_pol_snap_event(uint64_t ev)
{
    uint64_t id = dls_pol_snap_id();
    return taken(id, dls_hb_capture_event(dls_pol_g.hb, id, ev));
}

uint64_t dls_pol_snap_ctx(uintptr_t ctx, uint64_t begin)
{
    uint64_t id = dls_pol_snap_id();
    return taken(id, ctx ? dls_hb_capture_context(dls_pol_g.hb, id, (uint64_t)ctx, begin)
                         : dls_hb_capture_all(dls_pol_g.hb, id, begin));
}

void dls_pol_snap_complete(uint64_t snap, uint64_t tid, uint64_t end)
{
    if (!snap)
        return;
    dls_pol_g.syncs++;
    if (dls_hb_sync_event(dls_pol_g.hb, tid, snap) == ENOMEM)
        not_learned();
    int forgettable = 0;
    dls_pol_stream *s;
    DLS_POL_EACH_STREAM (s) {
        if (s->last > s->done) {
            dls_pol_stream_done(s, dls_hb_event_covers(dls_pol_g.hb, snap, s->id), end);
            forgettable |= s->removed && s->last <= s->done;
        }
    }
    dls_hb_event_remove(dls_pol_g.hb, snap);
    if (forgettable)
        dls_pol_stream_forget_done();
}

/* The highest position of s that a host synchronize which returned before stamp `begin` saw
 * complete: the newest value kept whose call ended before `begin` (values only grow), or 0 when
 * every value kept may have come later (less is known, never more). */
static uint64_t done_as_of(const dls_pol_stream *s, uint64_t begin)
{
    for (unsigned i = 0; i < DLS_POL_DONE_SEEN; i++)
        if (s->seen[i].end < begin)
            return s->seen[i].pos;
    return 0;
}

int dls_pol_ordered(uint64_t tid, uint64_t stream, uint64_t begin, const dls_hb_epoch *at)
{
    int o = 0;
    if (at->stream == stream && begin == DLS_HB_NOW)
        return 1;
    int rc = dls_hb_ordered_as_of(dls_pol_g.hb, tid, stream, begin, at->stream, at->pos, &o);
    if (!rc && o)
        return 1;
    const dls_pol_stream *s = dls_pol_stream_find(at->stream);
    if (!s && begin != DLS_HB_NOW) /* forgotten since the begin, perhaps */
        s = dls_pol_stream_find_forgotten(at->stream);
    if (!s)
        return rc != 0; /* forgotten long ago: its work is complete */
    return at->pos <= done_as_of(s, begin);
}

void dls_pol_snap_drop(uint64_t snap)
{
    if (snap)
        dls_hb_event_remove(dls_pol_g.hb, snap);
}
