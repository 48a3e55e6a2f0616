/* Orderings the shim makes (fix): planned under the policy lock (dls_pol_plan: `to` after what
 * `from` had at plan time, captured in hb), made without it (a pooled event recorded on `from` and
 * `to` made to wait on it, or host waits, with their fallbacks), committed to hb after the lock is
 * taken again. A plan holds DLS_POL_PLAN orderings; more are made in further rounds. */
#ifndef DLS_POL_ORDER_H
#define DLS_POL_ORDER_H

#include "types.h"

/* How an ordering was made (set by dls_pol_plan_act). */
typedef enum {
    DLS_POL_HOW_PENDING = 0,
    DLS_POL_HOW_WAIT,        /* event recorded on `from`, `to` waits on it */
    DLS_POL_HOW_HOST_EVENT,  /* event recorded on `from`, synchronized on the host */
    DLS_POL_HOW_HOST_STREAM, /* `from` synchronized on the host */
    DLS_POL_HOW_HOST_CTX,    /* `from`'s context synchronized on the host */
    DLS_POL_HOW_CAPTURING,   /* `to` turned out to be capturing: nothing injected */
    DLS_POL_HOW_FAILED,      /* every way failed (warned) */
} dls_pol_how;

/* One ordering: `to` (NULL: the host) after what `from` had when the plan was made. Both are held
 * (stream_table.h) until the ordering is committed, so the pointers stay valid without the lock;
 * act reads only their immutable fields (handle, kind, ctx, owner, id). */
typedef struct {
    dls_pol_stream *from, *to;
    uint64_t snap;     /* capture of `from` at plan time (0: memory was short) */
    uint64_t ctx_snap; /* capture of `from`'s context, taken before a context synchronize */
    uint64_t xid;
    const char *what, *why;
    int from_capturing;   /* `from` was capturing when planned: the ordering cannot be made */
    int from_destroyed;   /* `from` was destroyed when planned: no event can be recorded there */
    dls_pol_after *after; /* wait on this event (a reference is held) instead of recording one */
    dls_pol_how how;
} dls_pol_order;

#define DLS_POL_MARK_ORDERED 1u /* x is ordered for `stream` once the orderings to it are made */
#define DLS_POL_MARK_DROP 2u    /* then drop released x (its memory was reused whole) */

typedef struct {
    uint64_t xid, stream;
    unsigned flags;
} dls_pol_mark;

/* A plan: orderings, then marks applied to exchanges (found again by xid) at commit. */
typedef struct {
    uint64_t tid;
    int to_capturing; /* the driver said the planned op's stream is joined to a capture */
    int more;         /* something did not fit: plan another round after this one */
    int rc;           /* after commit: 0, or EIO when some ordering could not be made */
    unsigned n, nmark;
    dls_pol_order o[DLS_POL_PLAN];
    dls_pol_mark mark[DLS_POL_PLAN];
} dls_pol_plan;

/* An empty plan for thread tid. */
void dls_pol_plan_init(dls_pol_plan *p, uint64_t tid);

/* Plans `to` (NULL: the host) after the frontier f[0..n) (lock held): one ordering per stream hb
 * says is not yet ordered, none twice; *nwaits (may be NULL) gets their number. Returns 0, or -1
 * when the plan is full (p->more is set; plan again after this round). */
int dls_pol_plan_frontier(dls_pol_plan *p, const dls_hb_epoch *f, size_t n, dls_pol_stream *to, uint64_t xid,
                          const char *what, const char *why, size_t *nwaits) DLS_REQUIRES(dls_pol_g.lock);

/* Plans `to` (NULL: the host) after the consumer access that event a follows (lock held): `to`
 * waits on a itself, recorded when the access was enqueued. A full plan sets p->more. */
void dls_pol_plan_after(dls_pol_plan *p, dls_pol_after *a, dls_pol_stream *to, uint64_t xid, const char *what,
                        const char *why) DLS_REQUIRES(dls_pol_g.lock);

/* Plans a mark (lock held); a full plan sets p->more. */
void dls_pol_plan_mark(dls_pol_plan *p, uint64_t xid, uint64_t stream, unsigned flags) DLS_REQUIRES(dls_pol_g.lock);

/* With the lock held: releases it, makes the orderings, takes it again and commits them (hb,
 * done positions, marks). Nothing to do for an empty plan. The plan is empty again after. */
void dls_pol_plan_carry_out(dls_pol_plan *p) DLS_REQUIRES(dls_pol_g.lock);

/* What one round plans into p (lock held): 0, or non-zero when nothing is left to plan (what the
 * rounds order for is gone). */
typedef int (*dls_pol_round)(dls_pol_plan *p, void *arg);

/* With the lock held: plans with `round` and carries the plan out, again while a round's plan was
 * full (p->more), up to DLS_POL_ROUNDS rounds (the model may change while the lock is released
 * between them: each round plans from the model as it is). Returns p->rc. */
int dls_pol_plan_rounds(dls_pol_plan *p, dls_pol_round round, void *arg) DLS_REQUIRES(dls_pol_g.lock);

#endif
