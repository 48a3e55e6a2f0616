/* Internal state of the policy layer, shared by the files of shim/policy.
 *
 * Locks (docs/architecture.md, "Locks"): one mutex, `dls_pol_g.lock`, guards the policy state
 * and its hb engine, taken through dls_pol_lock / dls_pol_unlock. No CUDA, CUPTI or loader call
 * is ever made with it held: what needs one is planned under the lock (dls_pol_plan), carried
 * out without it (event record, stream wait, host synchronize) and committed to hb after.
 * check's race reports are queued under the lock and written by dls_pol_unlock. The EXIT of an
 * operation that only enqueues work (launch, async copy or set, host function, graph launch,
 * stream-ordered free) takes no lock: it is appended to a lock-free queue (queue.c) that the
 * next holder of the lock applies in order before reading the model (a full queue is applied
 * by the thread that found it full).
 *
 * Model:
 * - Streams are added to the hb engine lazily, the first time an operation names them, with
 *   their kind and context (the CUcontext handle is the hb context id). The shim's own
 *   private hb events take ids from DLS_POL_OWN_EVENT up.
 * - Completion: a host synchronize (stream, event, context, a successful query, a synchronous
 *   copy or free) completes exactly the work enqueued before it began. Its ENTER captures that
 *   work (hb capture, kept as a private hb event); its successful EXIT applies the capture to
 *   the synchronizing thread and to the streams' `done` positions. Work other threads enqueue
 *   meanwhile stays pending. The shim's own host waits do the same around their CUDA call.
 * - Each stream keeps a bounded ring of its recent operations with what they touch (copy/set
 *   ranges, launch argument words or, for wider launches, the bounding box of their pointer-like
 *   words, the conservative flag, the kernel or API name). Entries at or
 *   below the stream's `done` position (known complete to a host thread: stream sync, successful
 *   query, event sync on an event recorded there, context sync, synchronous copy) are ignored;
 *   when the ring overwrites an entry above `done`, `lost` remembers its position and a bounding
 *   box of what the overwritten entries touched (words below 4096 are taken for sizes, not
 *   pointers), and the stream counts as touching that box (everything, for a conservative one)
 *   at that position.
 * - Producer attribution at export: a launch is taken to touch the tensor when one of its words
 *   points into [start of the allocation holding the tensor, hi): kernels are usually given the
 *   base of a buffer and an offset, so a word below a view's start in the same allocation may
 *   still write the view. Copies and sets use their exact ranges. The frontier of an exchange is, for every stream whose
 *   pending ring entries may touch [lo, hi), the position of its latest touching entry (not the
 *   stream's latest position, so an unrelated later op on the producer stream, or a busy
 *   unrelated stream, never makes a correct program look racy). The frontier is a list of hb
 *   epochs; order is asked with dls_hb_ordered and waits with dls_hb_frontier_waits.
 * - The host as a consumer: a probe stream (DLS_POL_HOST_STREAM, non-blocking, in a context of
 *   its own, never given an operation) is added to the engine; "the next operation of thread T
 *   on the probe" is ordered after exactly what T observed complete, so the same two queries
 *   answer host-visible imports and host waits.
 * - Consumer uses: an operation touches an exchange when a launch word lies in [lo, hi), a copy
 *   or set range overlaps it, or it is conservative (then it touches every live exchange). It is
 *   checked (check) or made ordered (fix) at ENTER, and at EXIT its position is remembered per
 *   stream as the consumer's latest access (for release fencing).
 * - Release: the consumer's latest accesses are the release frontier. check keeps the range as
 *   released (bounded list) while that frontier is not host-complete and reports a later
 *   operation touching the memory that is not ordered after it (release-reuse). fix fences
 *   lazily: the released range stays in the same list as a pending fence, and at the ENTER of the
 *   first operation that touches it again (launch word or copy/set range in it, conservative, a
 *   graph launch, or a stream-ordered free of it), on any stream, that stream is made ordered
 *   after the frontier; the producer's unrelated work is never delayed. The frontier is waited
 *   for exactly: at the EXIT of each consumer access (a memory operation that touches a live
 *   exchange, on a stream other than the exchange's only producer stream), fix records a pooled
 *   event right after it, with no lock held (an `after` event), and the consumer entry keeps it;
 *   the fence waits on that event, not on one recorded at reuse time, which would also cover
 *   what the consumer enqueued since. An access without one (its record failed, or it was
 *   enqueued before the export) is fenced by an event recorded on its stream at reuse time. A
 *   fence is dropped when the host knows the frontier complete, or once an operation that reuses all of the range (a
 *   launch given its start or its allocation's, a covering copy/set/free, a conservative one) is
 *   ordered after it: later users of the memory are ordered after that operation by the program
 *   itself. Host-visible memory can be reused by the host with no CUDA operation, so its release
 *   waits on the host at once; a synchronous free waits for the device anyway. When the list is
 *   full, the oldest fence is made at once on the exchange's producer streams (the host when none
 *   can be named). The released list (check and fix) is `released`.
 * - Graph capture: a stream is capturing from the EXIT of its cuStreamBeginCapture to the EXIT of
 *   its cuStreamEndCapture (`capturing`; while some stream captures (`ncapturing`), fix also asks
 *   the driver before ordering a stream, for streams joined to a capture by an event: a stream can
 *   only join a capture some other stream began). Work enqueued on a capturing stream is recorded into
 *   a graph, not run: it is no operation of the stream (no hb op, ring entry or consumer access),
 *   it is never checked at ENTER, and no wait is ever injected on a capturing stream (a wait on an
 *   event recorded outside the capture is a capture error in CUDA, and one with
 *   CU_EVENT_WAIT_EXTERNAL would read the shim's pooled event at launch time). The captured work
 *   runs when a graph is launched, and a graph launch is conservative (it touches every watched
 *   tensor), so the ordering the captured use needed is made at the ENTER of the graph launch on
 *   the launch stream (fix: `capture-end-wait`, warned once; check: reported there). An exchange
 *   whose use was captured unordered is marked `captured` for that label.
 * - Host functions: a host thread may wait for a host function H (cuLaunchHostFunc,
 *   cuStreamAddCallback) instead of a stream or event (XLA does: an event on the compute stream, a
 *   second stream waiting on it, H there waking the thread that wants the buffer). The shim cannot
 *   see that wait, so at the ENTER of every host-function launch on a stream that is not capturing
 *   it records a mark: an event of its own, just before H (hostfn.c). At the ENTER of an operation
 *   that touches a live exchange with a frontier entry W that hb does not order it after, the marks
 *   hb places after W (on W's stream, or on a stream ordered after W) are queried with no lock
 *   held; a complete mark is an observed completion (the thread synchronized with that event: hb
 *   orders it after W, and the mark's stream is done up to it), so check reports nothing and fix
 *   injects nothing. An incomplete mark teaches nothing: the use is checked or ordered as before.
 *   H starts only after its mark completed, so a thread that waited for H finds the mark complete.
 * - Limits: an exchange keeps DLS_POL_MAXF frontier entries and DLS_POL_MAXC consumer streams.
 *   Beyond them it is `overflow`: fix orders its consumers after every pending producer stream
 *   (a context synchronize when even that cannot be named) and check says, once, that the extra
 *   streams are not checked. A failed allocation of the model (hb, stream table, captures)
 *   marks the policy `degraded`: fix then synchronizes the producer's context at every export,
 *   check says what it cannot check; each reason is warned about once. */
#ifndef DLS_POL_H
#define DLS_POL_H

#include "../cuda/cuda_api.h"
#include "../cuda/ops.h"
#include "../hb/hb.h"
#include "../hooks/exchange.h"
#include "../report/stack.h"
#include "../common/export.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DLS_POL_RING 32     /* recent operations remembered per stream */
#define DLS_POL_WORDS 16    /* launch argument words kept per entry; more: their bounding box */
#define DLS_POL_NAME 48     /* bytes of a kernel name kept */
#define DLS_POL_MAXF 16     /* frontier entries per exchange */
#define DLS_POL_MAXC 16     /* consumer streams per exchange */
#define DLS_POL_NDIM 8      /* shape dimensions kept for reports */
#define DLS_POL_RELEASED 32 /* released ranges kept (check: watched; fix: pending fences) */
#define DLS_POL_HOSTFN 32   /* host-function marks kept (the oldest is reused first) */
#define DLS_POL_PLAN 32     /* orderings planned in one round (more: another round) */
#define DLS_POL_HOST_STREAM UINT64_C(0xffffffffffffff00) /* the host probe stream's hb id */
#define DLS_POL_HOST_CTX UINT64_C(0xffffffffffffff01)
#define DLS_POL_OWN_EVENT (UINT64_C(1) << 62) /* hb ids of the shim's pooled events */

/* One remembered operation of a stream. A launch with more than DLS_POL_WORDS argument words
 * keeps the bounding box of its pointer-like words (>= 4096) as its one range instead. */
typedef struct {
    uint64_t pos, op;
    union {
        struct {
            uint8_t conservative, nwords, nranges;
            uint8_t boxed; /* ranges[0] is a wide launch's bounding box */
        };
        uint32_t shape; /* the four at once (dls_pol_ring_forget) */
    };
    uintptr_t lo[2], hi[2];
    const char *api;
    char name[DLS_POL_NAME];
    uint64_t words[DLS_POL_WORDS];
} dls_pol_entry;
_Static_assert(offsetof(dls_pol_entry, op) < offsetof(dls_pol_entry, shape) &&
                   offsetof(dls_pol_entry, shape) < offsetof(dls_pol_entry, lo) &&
                   offsetof(dls_pol_entry, hi) < offsetof(dls_pol_entry, api) &&
                   offsetof(dls_pol_entry, api) + sizeof(const char *) == offsetof(dls_pol_entry, name),
               "a copy or set's ring fields lie from op up to the name's first bytes (dls_pol_ring_put)");

/* The shape of a copy or set with one range: no words, one range, not conservative, not boxed (a
 * boxed launch's one range is folded by dls_pol_ring_forget_all, to the same box). */
#define DLS_POL_SHAPE_ONE_RANGE ((uint32_t)1 << (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 16 : 8))

/* An operation whose EXIT was deferred to the queue: what applying it needs. */
typedef struct {
    dls_op_kind kind;
    uint64_t tid;
    uint64_t begin;                /* its call's begin stamp (see "Host order" below); its ticket is its end */
    dls_cuda_stream stream;        /* with st NULL: the stream to find or add when applied; else only id */
    struct dls_pol_stream_s *st;   /* the work lane's: the stream, known at the EXIT */
    struct dls_pol_after_s *after; /* fix: the event recorded right after this consumer access */
    uint64_t cleared; /* dls_pol_cleared(v): its ENTER found it touching nothing in index version v; 0: not known */
    dls_pol_entry e;  /* its ring entry (memory operations), pos set when applied */
} dls_pol_rec;

/* dls_pol_rec.cleared for an ENTER the index cleared in version `version` (never 0). */
static inline uint64_t dls_pol_cleared(unsigned version)
{
    return ((uint64_t)version << 1) | 1u;
}

/* A stream as the policy knows it. */
typedef struct dls_pol_stream_s {
    uint64_t id;
    uintptr_t handle; /* usable from any thread (CU_STREAM_LEGACY for the legacy stream) */
    uintptr_t ctx;    /* the context the stream belongs to (default streams: where observed) */
    uint64_t ctx_id;  /* its cuCtxGetId: never reused, unlike the handle of a destroyed context */
    int device;       /* ordinal of that context's device; -1 when unknown */
    uint64_t owner;   /* per-thread streams: the thread they belong to */
    dls_stream_kind kind;
    int removed;
    int capturing; /* between its capture begin and end (see the file comment) */
    uint64_t last, done;
    uint64_t lost;              /* position of the latest pending entry overwritten */
    uintptr_t lost_lo, lost_hi; /* what the overwritten pending entries touched */
    int lost_cons;
    unsigned head, count;
    dls_pol_entry ring[DLS_POL_RING];
} dls_pol_stream;

/* fix: a pooled event the shim recorded on stream `st` right after a consumer access (see
 * Release above), shared by the exchanges that access touched and by the orderings planned on
 * it; returned to the pool when the last reference goes (lock held). */
typedef struct dls_pol_after_s {
    CUevent ev;
    dls_pol_stream *st;
    uint64_t snap; /* hb capture of st at the access (0: not placed yet, or memory was short) */
    unsigned refs;
} dls_pol_after;

/* A frontier entry: a producer operation position plus what reports say about it. */
typedef struct {
    dls_hb_epoch at;
    const char *api;
    char name[DLS_POL_NAME];
    dls_pol_after *after; /* consumer entries in fix: the event right after that access, or NULL */
} dls_pol_touch;

#define DLS_POL_OVER_PRODUCERS 1u
#define DLS_POL_OVER_CONSUMERS 2u

/* Policy state of one exchange (live, or released and kept for release-reuse checks). */
typedef struct dls_pol_x {
    struct dls_pol_x *next, **pprev; /* in the live or the released list */
    uint64_t xid;
    uintptr_t data, lo, hi;
    uintptr_t alo; /* attribution: launch words in [alo, hi) count (alo = start of
                                          the allocation holding lo, when the driver tells) */
    DLDevice device;
    DLDataType dtype;
    int ndim;
    int64_t shape[DLS_POL_NDIM];
    const char *framework, *symbol;
    dls_xpath path; /* how it was exchanged (reports' fix line) */
    int host_visible;
    int released;
    int captured;      /* a use was captured into a graph before it was ordered */
    unsigned overflow; /* DLS_POL_OVER_*: more streams than front[] / cons[] hold */
    dls_pol_touch front[DLS_POL_MAXF];
    unsigned nfront;
    dls_pol_touch cons[DLS_POL_MAXC]; /* latest consumer access per stream */
    unsigned ncons;
    uint64_t ordered[DLS_POL_MAXC]; /* streams known ordered after the frontier (released, in fix:
                                          after the consumer's accesses) */
    unsigned nordered;
    dls_stack stack; /* producer's host stack at export; the consumer's at release */
} dls_pol_x;

/* The policy's process state. Fields are guarded by `lock` unless said otherwise. */
typedef struct {
    pthread_mutex_t lock;
    int mode; /* dls_mode; set once at start */
    dls_hb *hb;
    dls_pol_stream **streams; /* open-addressed by id, `cap` slots (power of two); also read
                                 without the lock (dls_pol_stream_find_unlocked) */
    size_t nstreams, cap;
    dls_pol_x *live;     /* live exchanges */
    dls_pol_x *released; /* released exchanges still watched (check) or fenced (fix),
                                      newest first */
    unsigned nreleased;
    uint64_t own_event;     /* private hb event ids used so far */
    atomic_uint ncapturing; /* streams with `capturing` set (read without the lock) */
    atomic_int degraded;    /* an allocation of the model failed (see the file comment) */
    dls_pol_stream *last;   /* the stream dls_pol_stream_get found last */
} dls_pol_state;

extern dls_pol_state dls_pol_g;

/* queue.c: the lock and the deferred operations. */

/* Takes dls_pol_g.lock and applies every deferred operation queued before. */
void dls_pol_lock(void);

/* At exit: applies the queue unless another thread holds the lock (then it is not waited for). */
void dls_pol_drain_at_exit(void);

/* Releases the lock, then writes the race reports queued while it was held. */
void dls_pol_unlock(void);

/* The queue of deferred operations (queue.c): slot i holds the record of claim i (mod size). */
#define DLS_POL_QUEUE 1024
typedef struct {
    _Atomic uint64_t seq; /* k * DLS_POL_QUEUE: free for lap k; + 1: published in lap k */
    dls_pol_rec rec;
} dls_pol_slot;
extern dls_pol_slot dls_pol_queue[DLS_POL_QUEUE];
extern _Atomic uint64_t dls_pol_queue_tail;

/* Host order (hb.h): the queue's claim counter is the host clock that stamps calls, in halves of
 * a ticket. A record's call ends at 2 * ticket + 1 (the ticket is claimed after the call
 * returned, with a release that every later claim continues); an operation applied under the
 * lock while the tickets below T are applied ends at 2T, between those and the next (the drain
 * reads the counter with a read-modify-write, so later claims continue that release too). A
 * call's begin stamp is the calling thread's horizon `h` when it began: a stamp below which
 * every end belongs to a call known (acquired through the counter or the lock) to have returned
 * before: 2 * its own last ticket + 2, 2T + 1 after its own operation applied at T, twice the
 * counter as its last delivered ENTER read it, 2T + 1 after the drain of a lock it took inside a
 * call's ENTER. A stale horizon (an ENTER the gate did not deliver) only makes a begin earlier,
 * which orders less. What a call nested in another of the thread's calls (ops.h, `nested`)
 * would raise the horizon to waits in `later` until the outermost call returns: the outer call
 * began before it. */
typedef struct {
    uint64_t h, later;
} dls_pol_horizon_state;
extern __thread dls_pol_horizon_state dls_pol_horizon DLS_HIDDEN __attribute__((tls_model("local-dynamic")));

/* The calling thread learned that every ticket below `to` belongs to a call that returned: at
 * once, or (`nested`, inside a call nested in another) when the outermost call returns. */
static inline void dls_pol_horizon_raise(uint64_t to, int nested)
{
    dls_pol_horizon_state *t = &dls_pol_horizon;
    if (nested) {
        if (to > t->later)
            t->later = to;
        return;
    }
    if (t->later > to)
        to = t->later;
    t->later = 0;
    if (to > t->h)
        t->h = to;
}

/* At a delivered ENTER of a call (nested or not): the calling thread's horizon catches up with
 * the counter. Inline: it is on the ENTER of every operation while memory is watched. */
static inline void dls_pol_horizon_enter(int nested)
{
    dls_pol_horizon_raise(2 * atomic_load_explicit(&dls_pol_queue_tail, memory_order_acquire), nested);
}

/* The end stamp of the call that holds `ticket`. */
static inline uint64_t dls_pol_ticket_end(uint64_t ticket)
{
    return 2 * ticket + 1;
}

/* Lock held: the end stamp of an operation applied now (2T: the tickets below T are applied). */
uint64_t dls_pol_applied(void);

/* Lock held: the host stamps of an operation of the calling thread, outside any call, applied now. */
static inline dls_hb_when dls_pol_when_now(void)
{
    return (dls_hb_when){.begin = dls_pol_horizon.h, .end = dls_pol_applied()};
}

/* Defers an operation, lock-free: claims the next queue slot, whose record the caller fills in
 * place and then publishes with the ticket. The claim holds up whoever drains the queue until it
 * is published, so nothing between the two may block or call anything that takes a lock. NULL
 * when the queue is full: the caller applies its record with dls_pol_apply_now (which drains).
 * Inline: it is on every launch's path. */
static inline dls_pol_rec *dls_pol_defer_claim(uint64_t *ticket)
{
    uint64_t pos = atomic_load_explicit(&dls_pol_queue_tail, memory_order_relaxed);
    for (;;) {
        uint64_t lap = pos - pos % DLS_POL_QUEUE;
        dls_pol_slot *s = &dls_pol_queue[pos % DLS_POL_QUEUE];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq == lap) {
            if (atomic_compare_exchange_weak_explicit(&dls_pol_queue_tail, &pos, pos + 1, memory_order_acq_rel,
                                                      memory_order_relaxed)) {
                *ticket = pos;
                return &s->rec;
            }
        } else if (seq < lap) {
            return NULL; /* the previous lap's record is not applied yet */
        } else {
            pos = atomic_load_explicit(&dls_pol_queue_tail, memory_order_relaxed);
        }
    }
}

/* Publishes record r, claimed with `ticket` (r is the record of that ticket's slot). */
static inline void dls_pol_defer_publish(dls_pol_rec *r, uint64_t ticket)
{
    dls_pol_slot *s = (dls_pol_slot *)((char *)r - offsetof(dls_pol_slot, rec)); /* no look-up by ticket */
    atomic_store_explicit(&s->seq, ticket - ticket % DLS_POL_QUEUE + 1, memory_order_release);
}

/* Takes the lock (applying the queue), applies r, releases the lock. Returns the end stamp r
 * was applied with. */
uint64_t dls_pol_apply_now(const dls_pol_rec *r);

/* Applies r to the model (lock held): hb operation, ring entry, consumer accesses; drops r's
 * reference of its after event. */
void dls_pol_apply(const dls_pol_rec *r);

/* 1 for the operations that touch memory (ring entries, touch tests). */
static inline int dls_pol_is_memory_op(dls_op_kind k)
{
    return k == DLS_OP_LAUNCH || k == DLS_OP_MEMCPY || k == DLS_OP_MEMSET || k == DLS_OP_GRAPH_LAUNCH;
}

/* The model lost something it needs (an allocation failed, `reason`): warns once per reason and
 * marks the policy degraded (see the file comment). Any thread, lock held or not. */
void dls_pol_degrade(const char *key, const char *reason);

/* recording.c: event records in flight. A wait on an event, or a host synchronize of it, that
 * a record of the same event on another thread may precede in the driver (its ENTER came, its
 * EXIT is not applied yet) cannot know which record it waits for: it is ordered after none
 * (hb.h, "Host order"). dls_pol_recording_begin at the ENTER of a record (no lock needed),
 * dls_pol_recording_end once its EXIT is applied (or failed); dls_pol_recording_other (lock
 * held) says whether another thread may be recording `event` now. */
void dls_pol_recording_begin(uint64_t event);
void dls_pol_recording_end(void);
int dls_pol_recording_other(uint64_t event);

/* complete.c: host completion (lock held). */

/* A fresh private hb event id (a capture, or an injected record). */
uint64_t dls_pol_snap_id(void);

/* Captures what a host synchronize beginning now completes, as a private hb event: of stream st,
 * of user event ev, of context ctx (every context when ctx is 0). Returns its id, or 0 when
 * memory is short (then nothing will be learned from the synchronize: warned once). */
uint64_t dls_pol_snap_stream(const dls_pol_stream *st);
uint64_t dls_pol_snap_event(uint64_t ev);
uint64_t dls_pol_snap_ctx(uintptr_t ctx);

/* Thread tid's host synchronize of capture snap returned: tid and every stream's `done` learn
 * what it completed. The capture is forgotten (0 is ignored). */
void dls_pol_snap_complete(uint64_t snap, uint64_t tid);

/* Forgets capture snap without learning from it (0 is ignored). */
void dls_pol_snap_drop(uint64_t snap);

/* streams.c: the stream table and rings (lock held). */

/* The stream of `s` (an op's stream), adding it to the table and the engine at first sight;
 * NULL when it cannot be modelled (unresolved) or memory is short. `tid` is the thread using it. */
dls_pol_stream *dls_pol_stream_get(const dls_cuda_stream *s, uint64_t tid);

/* The known stream with hb id `id`, or NULL. */
dls_pol_stream *dls_pol_stream_find(uint64_t id);

/* The same with no lock held (a stream, once added, is never freed while the process runs):
 * NULL also when the stream is being added, or the table is growing, at that moment. */
dls_pol_stream *dls_pol_stream_find_unlocked(uint64_t id);

/* Tests only (lock held, no lock-free reader running): frees every stream and the table. */
void dls_pol_stream_table_reset_for_tests(void);

/* Fills e (all but pos) from memory operation op, or from work w: no lock needed. */
void dls_pol_entry_fill(dls_pol_entry *e, const dls_cuda_op *op);

/* dls_pol_entry_fill for work w that is a launch or conservative. */
void dls_pol_entry_fill_launch(dls_pol_entry *e, const dls_cuda_work *w);

/* Fills e (all but pos) as a copy or set with n <= 2 ranges: the words and the name stay unused. */
static inline void dls_pol_entry_fill_ranges(dls_pol_entry *e, uint32_t corr, const char *api,
                                             const dls_cuda_range *ranges, uint32_t n)
{
    e->op = corr;
    e->api = api;
    e->conservative = e->nwords = e->boxed = 0;
    e->nranges = (uint8_t)n;
    for (uint32_t i = 0; i < n; i++) {
        e->lo[i] = ranges[i].addr;
        e->hi[i] = ranges[i].addr + ranges[i].len;
    }
    e->name[0] = '\0';
}

/* Fills e (all but pos) from work w. Inline: every copy and set of the work lane is filled. */
static inline void dls_pol_entry_fill_work(dls_pol_entry *e, const dls_cuda_work *w)
{
    if (w->kind != DLS_OP_LAUNCH && !(w->flags & DLS_OPF_CONSERVATIVE)) /* a copy or set (at most 2 ranges) */
        dls_pol_entry_fill_ranges(e, w->correlation_id, w->api, w->ranges, w->nranges);
    else
        dls_pol_entry_fill_launch(e, w);
}

/* Widens st's box of what its lost entries touched to [lo, hi). */
static inline void dls_pol_lost_widen(dls_pol_stream *st, uintptr_t lo, uintptr_t hi)
{
    if (lo < st->lost_lo)
        st->lost_lo = lo;
    if (hi > st->lost_hi)
        st->lost_hi = hi;
}

/* dls_pol_ring_forget's fold of e's words, ranges and conservative flag into the box. */
void dls_pol_ring_forget_all(dls_pol_stream *st, const dls_pol_entry *e);

/* Folds pending entry e, about to be overwritten, into st's summary of lost entries. */
static inline void dls_pol_ring_forget(dls_pol_stream *st, const dls_pol_entry *e)
{
    if (st->lost <= st->done) { /* the previous summary is complete: start afresh */
        st->lost_lo = UINTPTR_MAX;
        st->lost_hi = 0;
        st->lost_cons = 0;
    }
    st->lost = e->pos;
    if (e->shape == DLS_POL_SHAPE_ONE_RANGE) /* a copy or set with one range */
        dls_pol_lost_widen(st, e->lo[0], e->hi[0]);
    else
        dls_pol_ring_forget_all(st, e);
}

/* The slot of st's ring its next entry goes to. */
static inline dls_pol_entry *dls_pol_ring_slot(dls_pol_stream *st)
{
    return &st->ring[st->head];
}

/* Puts src (at position pos of st) into slot e of st's ring and returns the slot after it. e is
 * dls_pol_ring_slot(st), or the slot the previous put returned while its caller alone appended to
 * st; the caller sets the ring's head to the slot returned last (dls_pol_ring_set_head) before
 * anything else appends to st. Inline: every deferred operation is put.
 * The entry overwritten is pending when the summary of lost entries is open (lost > done: the
 * ring overwrites in position order, so e is newer than every lost entry) or when its own
 * position says so; a slot never written has position 0 (streams are allocated zeroed), never
 * pending, so a full ring's put does not look at the count. */
static inline dls_pol_entry *dls_pol_ring_put(dls_pol_stream *st, dls_pol_entry *e, const dls_pol_entry *src,
                                              uint64_t pos)
{
    if (st->lost > st->done || e->pos > st->done)
        dls_pol_ring_forget(st, e);
    else if (st->count < DLS_POL_RING)
        st->count++;
    if (__builtin_expect(!(src->nwords | src->name[0]), 1)) /* a copy or set: up to its empty name's first 8 bytes */
        memcpy(&e->op, &src->op, offsetof(dls_pol_entry, name) + 8 - offsetof(dls_pol_entry, op));
    else
        *e = *src;
    e->pos = pos;
    return ++e == st->ring + DLS_POL_RING ? st->ring : e;
}

/* Makes e, a slot of st's ring, the one its next entry goes to. */
static inline void dls_pol_ring_set_head(dls_pol_stream *st, const dls_pol_entry *e)
{
    st->head = (unsigned)(e - st->ring);
}

/* 1 when ring entry e touches [lo, hi) (launch words counted from alo). */
int dls_pol_entry_touches(const dls_pol_entry *e, uintptr_t alo, uintptr_t lo, uintptr_t hi);

/* The host observed completion of st up to position pos. */
void dls_pol_stream_done(dls_pol_stream *st, uint64_t pos);

/* Fills the frontier of [lo, hi) into x->front (see the file comment). */
void dls_pol_attribute(dls_pol_x *x);

/* 1 when op touches [lo, hi) (words, ranges or conservative). */
int dls_pol_op_touches(const dls_cuda_op *op, uintptr_t lo, uintptr_t hi);

/* Report name of an op: the kernel name for launches, else the API. */
const char *dls_pol_op_name(const dls_cuda_op *op);

/* exch.c: exchange states (lock held unless said otherwise). */

/* A new state for x (NULL when memory is short), not yet linked. Reads the tensor's shape. */
dls_pol_x *dls_pol_x_new(const dls_exchange *x);

/* Links x into the live list and adds its range to the index. */
void dls_pol_x_link(dls_pol_x *x);

/* Unlinks x from whichever list holds it and frees it. */
void dls_pol_x_drop(dls_pol_x *x);

/* Moves live x to the released list, dropping the oldest beyond the bound. */
void dls_pol_x_release(dls_pol_x *x);

/* 1 when stream id is in x->ordered; dls_pol_x_mark_ordered adds it. */
int dls_pol_x_is_ordered(const dls_pol_x *x, uint64_t stream);
void dls_pol_x_mark_ordered(dls_pol_x *x, uint64_t stream);

/* Remembers that stream's operation `name` at pos touched x (consumer access), with the event
 * recorded right after it (`after`, a reference is taken; NULL: none). */
void dls_pol_x_note_access(dls_pol_x *x, uint64_t stream, uint64_t pos, const char *name, dls_pol_after *after);

/* index.c: the ranges of live and released exchange states (see index.c). */

/* Adds x's [lo, hi) (lock held). When memory is short, warns once and from then on lets every
 * operation through (dls_pol_index_may_touch answers 1): slower, never unsafe. */
void dls_pol_index_add(dls_pol_x *x);

/* Removes x's range (lock held); nothing when it is not there. */
void dls_pol_index_remove(dls_pol_x *x);

/* The flag that is nonzero while some range is indexed (or the index lets everything through):
 * the observer's ENTER gate. Inline: every deferred operation reads it. */
extern atomic_int dls_pol_index_watching_flag;
static inline const atomic_int *dls_pol_index_watching(void)
{
    return &dls_pol_index_watching_flag;
}

/* Number of ranges in the index. */
size_t dls_pol_index_count(void);

/* Lock-free: 0 when op certainly touches no live or released exchange (its words and ranges
 * overlap no indexed range; graph launches and conservative operations may touch anything). */
int dls_pol_index_may_touch(const dls_cuda_op *op);

/* Lock-free: 1 when op certainly touches nothing indexed in the index's version *version (the
 * index did not change while it was asked); 0 when it may touch, or the index changed. */
int dls_pol_index_clears(const dls_cuda_op *op, unsigned *version);

/* dls_pol_index_clears for a work of the work lane, answering with dls_pol_cleared(version) in
 * *cleared (which may be w's sink note); *cleared may be written when it answers 0. */
int dls_pol_index_clears_work(const dls_cuda_work *w, uint64_t *cleared);

/* The index's current version (it changes with every insertion and removal). */
unsigned dls_pol_index_version(void);

/* The same for a ring entry (a deferred operation's): 0 when it certainly touches no live or
 * released exchange. */
int dls_pol_index_may_touch_entry(const dls_pol_entry *e);

/* Notes that op, enqueued on capturing stream st, is recorded into a graph: every live exchange
 * it touches that st is not ordered for is marked captured. */
void dls_pol_capture_use(const dls_cuda_op *op, const dls_pol_stream *st);

/* check.c */

/* 1 when the next operation of thread tid on `stream` is ordered after `at`. */
int dls_pol_ordered(uint64_t tid, uint64_t stream, const dls_hb_epoch *at);

/* Checks op (ENTER, on st by thread tid) against every exchange it touches; reports races. */
void dls_pol_check_op(const dls_cuda_op *op, dls_pol_stream *st, uint64_t tid);

/* Checks a host-visible import of x by thread tid through `importer` (reports host-read). */
void dls_pol_check_import(dls_pol_x *x, uint64_t tid, const char *importer);

/* 1 when every consumer access of x is known complete to thread tid (nothing to watch after
 * release). */
int dls_pol_check_release(dls_pol_x *x, uint64_t tid);

/* Writes the reports the calling thread queued under the lock (no lock held). */
void dls_pol_check_flush(void);

/* hostfn.c: observed completion through host functions (see "Host functions" above). */

/* The marks one decision asks the driver about, pinned until dls_pol_hostfn_learn. */
typedef struct {
    unsigned n;
    int slot[DLS_POL_HOSTFN];
    CUevent ev[DLS_POL_HOSTFN];
    CUcontext ctx[DLS_POL_HOSTFN];
    int complete[DLS_POL_HOSTFN]; /* filled by dls_pol_hostfn_query */
} dls_pol_hostfn_ask;

/* ENTER of a host-function launch (op), no lock held: records a mark on op's stream (takes the
 * lock to plan and commit; records outside it). Does nothing on a capturing stream. */
void dls_pol_hostfn_launch(const dls_cuda_op *op);

/* Lock held: for every live exchange op touches that st is not ordered for, and every frontier
 * entry thread tid's next operation on st is not ordered after, learns a mark after it already
 * seen complete, or else collects (pinned) the marks after it into *ask. Returns ask->n > 0. */
int dls_pol_hostfn_wanted(const dls_cuda_op *op, const dls_pol_stream *st, uint64_t tid, dls_pol_hostfn_ask *ask);

/* No lock held: asks the driver whether each mark of ask is complete. */
void dls_pol_hostfn_query(dls_pol_hostfn_ask *ask);

/* Lock held: unpins ask's marks; thread tid learns those found complete. */
void dls_pol_hostfn_learn(const dls_pol_hostfn_ask *ask, uint64_t tid);

/* Tests only: forgets every mark (no driver call). */
void dls_pol_hostfn_reset_for_tests(void);

/* model.c: the sink and the work sink registered with the CUDA observer. */
void dls_pol_sink(const dls_cuda_op *op, void *user);
int dls_pol_work(dls_cuda_work *w, dls_op_phase phase);

/* order.c: orderings planned under the lock, made without it, committed after. */

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

/* One ordering: `to` (NULL: the host) after what `from` had when the plan was made. Streams are
 * never freed, so the pointers stay valid without the lock; act reads only their immutable
 * fields (handle, kind, ctx, owner, id). */
typedef struct {
    dls_pol_stream *from, *to;
    uint64_t snap;     /* capture of `from` at plan time (0: memory was short) */
    uint64_t ctx_snap; /* capture of `from`'s context, taken before a context synchronize */
    uint64_t xid;
    const char *what, *why;
    int from_capturing;   /* `from` was capturing when planned: the ordering cannot be made */
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
                          const char *what, const char *why, size_t *nwaits);

/* Plans `to` (NULL: the host) after the consumer access that event a follows (lock held): `to`
 * waits on a itself, recorded when the access was enqueued. A full plan sets p->more. */
void dls_pol_plan_after(dls_pol_plan *p, dls_pol_after *a, dls_pol_stream *to, uint64_t xid, const char *what,
                        const char *why);

/* Plans a mark (lock held); a full plan sets p->more. */
void dls_pol_plan_mark(dls_pol_plan *p, uint64_t xid, uint64_t stream, unsigned flags);

/* No lock held: records a pooled event of st's context on st right after the consumer access the
 * calling thread (tid) just enqueued there, and returns it with one reference (position unknown
 * until dls_pol_after_placed). NULL when it cannot (st is another thread's per-thread stream,
 * some stream is capturing, memory is short, or the record failed: warned once); the release
 * fence then records at reuse time instead. */
dls_pol_after *dls_pol_after_record(dls_pol_stream *st, uint64_t tid);

/* Lock held: the access a follows was just applied (it is a->st's latest position): a captures
 * it in hb. */
void dls_pol_after_placed(dls_pol_after *a);

/* Lock held: takes a reference of a (NULL ignored) and returns a. */
dls_pol_after *dls_pol_after_get(dls_pol_after *a);

/* Lock held: drops a reference of a (NULL ignored); the last one returns its event to the pool
 * (no CUDA call: the pool never destroys an event under the policy lock). */
void dls_pol_after_put(dls_pol_after *a);

/* Counts a fallback and writes its `fallback` log record. Any thread, any lock. */
void dls_pol_log_fallback(const char *reason, const char *detail);

/* With the lock held: releases it, makes the orderings, takes it again and commits them (hb,
 * done positions, marks). Nothing to do for an empty plan. The plan is empty again after. */
void dls_pol_plan_carry_out(dls_pol_plan *p);

/* fix.c: what fix orders (plans; lock held). */

/* Plans st after the frontier of every live exchange op touches (ENTER). Returns 1 when op is a
 * consumer access that wants an after event: it touches a live exchange none of whose producer
 * streams is st. */
int dls_pol_fix_op(dls_pol_plan *p, const dls_cuda_op *op, dls_pol_stream *st);

/* Plans st after x's frontier (made and marked at commit; p->rc says whether it was). A
 * capturing st is left alone (x is marked captured; the graph launch is ordered instead). */
void dls_pol_fix_stream(dls_pol_plan *p, dls_pol_x *x, dls_pol_stream *st, const char *reason);

/* Plans the host after x's pending producer work (host-visible import). */
void dls_pol_fix_import(dls_pol_plan *p, dls_pol_x *x);

/* Release of x: returns 1 when x was moved to the released list as a pending fence (ownership
 * passes to the list), 0 when the caller drops it (nothing pending, or host-visible memory,
 * whose host wait is planned). Plans the oldest fence at once when the list is full. */
int dls_pol_fix_release(dls_pol_plan *p, dls_pol_x *x);

/* Plans st after the pending fence of every released exchange op reuses (ENTER); drops fences
 * that are complete, and (at commit) those that op reuses all of once it is ordered. */
void dls_pol_fix_reuse(dls_pol_plan *p, const dls_cuda_op *op, dls_pol_stream *st);

/* Synchronizes the current context and every device's active primary context (the producer's
 * work may be on any device) because exchanges cannot be modelled (no observer, or the model is
 * degraded) at an export; warns once. No lock held. Returns 0, or EIO when the synchronize
 * failed. */
int dls_pol_fix_no_observer(void);

#endif
