/* Internal state of the happens-before engine, shared by hb.c (model updates) and hb_query.c
 * (queries). Streams live in slots numbered in the order they were added. A forgotten stream's
 * slot is reused by a later stream whose positions continue after the forgotten one's last
 * position, so a clock entry left from the old stream is below every position of the new one and
 * never reads as knowledge of it. */
#ifndef DLS_HB_INTERNAL_H
#define DLS_HB_INTERNAL_H

#include "hb.h"
#include "hb_clock.h"
#include "hb_map.h"
#include "hb_slab.h"

#include <string.h>

/* One recent operation of a stream (or run of dls_hb_op_again): its position, its end stamp and
 * what the stream's operations up to it are ordered after (shared). */
typedef struct {
    uint64_t pos, end;
    dls_hb_clk *clk;
} dls_hb_point;

/* What completing an event's record (or a capture) completes: positions in clk, and (slot, pos)
 * unless multi; pos 0: nothing. end: the record's end stamp (0 for a capture). */
typedef struct {
    uint64_t pos, end;
    uint32_t slot;
    uint8_t multi; /* a capture of several streams: clk holds each one's position */
    dls_hb_clk *clk;
} dls_hb_cap;

/* How many of a stream's latest operations keep their end stamps alone (no clock): enough for a
 * question as of a begin about the stream itself while many threads' calls on it ended since. */
#define DLS_HB_ENDS 128

typedef struct {
    uint64_t id;
    uint64_t pos;                    /* position of the last operation, 0 before the first */
    uint64_t base;                   /* the position before its first operation */
    uint64_t ends[DLS_HB_ENDS];      /* ends[p % DLS_HB_ENDS]: the end stamp of its operation p */
    uint64_t end;                    /* end stamp of the last operation */
    uint64_t last_thread;            /* the thread that told the last operation (0: none yet) */
    dls_hb_clk *clk;                 /* what the last operation is ordered after (own slot implied by pos) */
    dls_hb_point pts[DLS_HB_POINTS]; /* the latest operations, a ring (as-of questions) */
    uint8_t npts, next_pt;           /* points kept; the slot the next one goes to */
    uint64_t *tseen;                 /* tseen[t]: version of thread t's clock already joined */
    uint32_t ntseen;
    uint32_t ctx; /* index of the context */
    uint8_t kind; /* dls_hb_stream_kind */
    uint8_t removed;
    uint8_t dirty; /* blocking stream changed since the context's legacy stream last joined it */
} dls_hb_stream;

typedef struct {
    uint64_t id;
    uint64_t ver; /* changes whenever clk grows; 0 while clk is empty */
    dls_hb_clk *clk;
    /* the last operation the thread told, which every later call of the thread follows: its
     * stream (id and slot), position and what it is ordered after (shared; NULL: none) */
    uint64_t own_stream, own_pos;
    uint32_t own_slot;
    dls_hb_clk *own_clk;
    uint8_t used;
} dls_hb_thread;

typedef struct {
    uint64_t id;
    dls_hb_cap cur;  /* the most recent record or capture (cur.pos 0: never recorded) */
    dls_hb_cap prev; /* the record or capture before it (prev.pos 0: none) */
    uint8_t used;
} dls_hb_event;

typedef struct {
    uint64_t id;
    uint32_t legacy; /* slot of the live legacy stream, DLS_HB_NONE when none */
    uint32_t *all;   /* every stream ever added to the context */
    uint32_t nall, capall;
    uint32_t *blk; /* live blocking and per-thread streams */
    uint32_t nblk, capblk;
    uint32_t *dirty; /* the dirty ones among blk (capacity capblk) */
    uint32_t ndirty;
} dls_hb_ctx;

/* One remembered stream lookup (dls_hb.hits): slot DLS_HB_NONE, none. */
typedef struct {
    uint64_t id;
    uint32_t slot;
} dls_hb_stream_hit;

#define DLS_HB_HITS 8 /* stream lookups remembered, a power of two */

struct dls_hb {
    dls_hb_stream *streams;
    dls_hb_slab stream_slots; /* a forgotten stream's slot is released */
    dls_hb_thread *threads;
    dls_hb_slab thread_slots;
    dls_hb_event *events;
    dls_hb_slab event_slots;
    dls_hb_ctx *ctxs;
    uint32_t nctxs, capctxs;
    dls_hb_map stream_map, thread_map, event_map, ctx_map;
    uint64_t ver;
    uint64_t now; /* the highest end stamp told */
    /* the latest stream lookups, direct-mapped by id (an exchange's operations and queries ask
     * for the same few streams again and again): ids are never reused, a forgotten stream
     * clears its own entry; a pointer, so that lookups through a const engine keep them too */
    dls_hb_stream_hit *hits;
    /* the last thread looked up by an operation: a removed thread clears it */
    uint64_t last_tid;
    uint32_t last_ti; /* valid while tid_cached; DLS_HB_NONE: a thread without a record */
    uint8_t tid_cached;
    uint8_t wary; /* dls_hb_set_wary */
    /* query scratch, capacity capscratch (stream_slots.cap at least) */
    uint32_t *mark; /* mark[slot] == stamp: slot is in cand */
    uint32_t *cand;
    uint32_t capscratch;
    uint32_t stamp;
};

static inline int dls_hb_is_blocking(const dls_hb_stream *s)
{
    return s->kind == DLS_HB_BLOCKING || s->kind == DLS_HB_PER_THREAD;
}

/* Whether stream s's last operation is ordered after position pos of slot (pos 0: always). */
static inline int dls_hb_stream_knows(const dls_hb_stream *s, uint32_t self, uint32_t slot, uint64_t pos)
{
    return slot == self ? pos <= s->pos : dls_hb_clk_get(s->clk, slot) >= pos;
}

/* The live (not removed) stream of id, or NULL; *slot gets its slot. */
dls_hb_stream *dls_hb_live_stream(dls_hb *e, uint64_t id, uint32_t *slot);

/* The record of thread id, made when missing, with its clock owned and room for every slot.
 * 0 or ENOMEM. */
int dls_hb_thread_prepare(dls_hb *e, uint64_t id, dls_hb_thread **out);

/* Joins what operation (slot, pos) with clock clk is ordered after, and the operation itself,
 * into dst (owned, with room for every slot). */
void dls_hb_join_op(dls_hb_clk *dst, uint32_t slot, uint64_t pos, const dls_hb_clk *clk);

/* What operation `pos` of s is ordered after: its clock when it is the last operation, else the
 * clock of its newest point at or below pos (clocks only grow, so an earlier point's clock is
 * part of it); NULL when no point is that old. *at gets the position the clock belongs to. The
 * clock is held by s or one of its points: share it to keep it. */
dls_hb_clk *dls_hb_clock_at_or_below(const dls_hb_stream *s, uint64_t pos, uint64_t *at);

/* dls_hb_asof when s's last operation ended at or after `begin`: its points, newest first. */
uint64_t dls_hb_asof_points(const dls_hb_stream *s, uint64_t begin, dls_hb_clk **clk);

/* The last position of s whose operation ended before `begin` (0: none among its points), and in
 * *clk what s's operations up to it are ordered after (held by s or one of its points: share it
 * to keep it). Inline: asked now (DLS_HB_NOW), or of a stream idle since the begin, it is s's
 * latest operation. */
static inline uint64_t dls_hb_asof(const dls_hb_stream *s, uint64_t begin, dls_hb_clk **clk)
{
    if (s->end < begin) {
        *clk = s->clk;
        return s->pos;
    }
    return dls_hb_asof_points(s, begin, clk);
}

/* Joins into dst (owned, room for every slot) the live blocking streams of context c as of
 * `begin`: with `commit` (dst is the legacy stream's own clock) only those changed since it
 * last joined them, clearing the mark of each joined up to its last operation; else all. */
void dls_hb_join_blocking(dls_hb *e, dls_hb_ctx *c, dls_hb_clk *dst, uint64_t begin, int commit);

/* Enqueues one operation on live stream s (slot) by thread `thread`, made by a call with stamps
 * w, ordered also after capture cap when given (see hb.h). Everything that can fail happens
 * before the model changes. 0 or ENOMEM. */
int dls_hb_stream_op(dls_hb *e, uint64_t thread, dls_hb_stream *s, uint32_t slot, const dls_hb_cap *cap, dls_hb_when w);

/* Drops cap's clock; cap then captures nothing. */
static inline void dls_hb_cap_clear(dls_hb_cap *cap)
{
    dls_hb_clk_release(cap->clk);
    memset(cap, 0, sizeof *cap);
}

/* Releases what event ev holds (its record and the one before). Inline here, not in
 * hb_event.c, so that hb.c's destroy does not call up into the events' file. */
static inline void dls_hb_event_forget(dls_hb_event *ev)
{
    dls_hb_cap_clear(&ev->cur);
    dls_hb_cap_clear(&ev->prev);
}

/* The live thread record of id, or NULL. */
dls_hb_thread *dls_hb_find_thread(const dls_hb *e, uint64_t id);

/* The slot of a known stream (removed ones included), or DLS_HB_NONE. */
uint32_t dls_hb_find_stream(const dls_hb *e, uint64_t id);

#endif
