/* The policy's data: its limits, what an operation touches (the access record), a stream's
 * history entries, deferred operation records, streams, the events recorded after consumer
 * accesses, what each stream did to an exchange (its use), exchange states and the process state. docs/architecture.md, "The policy's model",
 * says how they fit together. Fields are guarded by dls_pol_g.lock unless a comment says
 * otherwise. */
#ifndef DLS_POL_TYPES_H
#define DLS_POL_TYPES_H

#include "../common/export.h"
#include "../common/mutex.h"
#include "../common/map.h"
#include "../cuda/cuda_api.h"
#include "../cuda/ops.h"
#include "../hb/hb.h"
#include "../hooks/exchange.h"
#include "../report/stack.h"
#include "kinds.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define DLS_POL_RING 32     /* recent operations remembered per stream */
#define DLS_POL_WORDS 16    /* launch argument words a history entry keeps; more: their bounding box */
#define DLS_POL_NAME 48     /* bytes of a kernel name kept */
#define DLS_POL_FRONT 16    /* frontier entries, and producer streams, kept per exchange */
#define DLS_POL_FOUND 4     /* streams remembered by the table's look-ups, a power of two */
#define DLS_POL_USES 16     /* streams whose uses of an exchange after its export are kept */
#define DLS_POL_NDIM 8      /* shape dimensions kept for reports */
#define DLS_POL_RELEASED 32 /* released ranges kept (check: watched; fix: pending fences) */
#define DLS_POL_HOSTFN 32   /* host-function marks kept (the oldest is reused first) */
#define DLS_POL_PLAN 32     /* orderings planned in one round (more: another round) */
#define DLS_POL_ROUNDS 8    /* rounds of plans one call makes at most (dls_pol_plan_rounds) */
#define DLS_POL_HOST_STREAM UINT64_C(0xffffffffffffff00) /* the host probe stream's hb id */
#define DLS_POL_HOST_CTX UINT64_C(0xffffffffffffff01)
#define DLS_POL_OWN_EVENT (UINT64_C(1) << 62) /* hb ids of the shim's private events */

/* What one operation touches, the one record every "does it touch" question reads (access.h):
 * built where the observer hands the operation over, from a dls_cuda_work or a dls_cuda_op, and
 * pointing into it (words, names), so it lives as long as that call. */
typedef struct {
    dls_op_kind kind;
    unsigned char conservative; /* may touch anything: a graph launch, opaque arguments */
    unsigned char boxed;        /* range 0 is a wide launch's bounding box of its pointer-like words */
    unsigned char nranges;      /* up to 2: a copy's source and destination, a set's or free's range */
    unsigned char writes;       /* bit i: range i is written (a copy's destination, a set, a free) */
    uint32_t nwords;
    uint32_t op; /* the call's correlation id */
    uintptr_t lo[2], hi[2];
    const uint64_t *words;  /* a launch's aligned argument words */
    const char *api, *name; /* the API the program called; a launch's kernel name (may be NULL) */
    uintptr_t graph_exec;   /* a graph launch's CUgraphExec (what it is known to write: graphs.h); else 0 */
} dls_pol_access;

/* One remembered operation of a stream: its position and its access, which owns a copy of the
 * words and the name: a.words points into words[] (a launch with more than DLS_POL_WORDS words
 * keeps the bounding box of its pointer-like words as range 0 instead), a.name into name[] (NULL
 * when there is none; name[] is then empty). Because of these two pointers an entry is copied
 * only with dls_pol_entry_copy (access.h), which stores and copies it. */
typedef struct {
    uint64_t pos;
    dls_pol_access a;
    char name[DLS_POL_NAME];
    uint64_t words[DLS_POL_WORDS];
} dls_pol_entry;

/* An operation whose EXIT was deferred to the queue (queue.h): what applying it needs. */
typedef struct {
    uint64_t tid;
    uint64_t begin;                /* its call's begin stamp (queue.h, host order); its ticket is its end */
    dls_cuda_stream stream;        /* the stream to find or add when applied */
    struct dls_pol_after_s *after; /* fix: the event recorded right after this consumer access */
    uint64_t cleared; /* dls_pol_cleared(v): its ENTER found it touching nothing in index version v; 0: not known */
    uint64_t event;   /* an event record's or a stream's wait's event id */
    int in_doubt;     /* a wait made while another thread recorded its event: it waits for one of two records */
    dls_pol_entry e;  /* its kind, and its history entry (memory operations), pos set when applied */
} dls_pol_rec;

/* dls_pol_rec.cleared for an ENTER the index cleared in version `version` (never 0). */
static inline uint64_t dls_pol_cleared(unsigned version)
{
    return ((uint64_t)version << 1) | 1u;
}

/* How many of a stream's latest `done` values it keeps, for questions as of an earlier begin
 * (complete.c): a call whose ENTER callback ran long can ask after several host synchronizes
 * ended. */
#define DLS_POL_DONE_SEEN 4

/* What pending entries a stream's history overwrote touched: a byte range, at the position of
 * the newest of them that touched it and of the newest that may have written it (ring.h). */
#define DLS_POL_LOST 64 /* ranges kept per stream; beyond them the nearest neighbours merge */
typedef struct {
    uint64_t pos, wpos; /* wpos: 0 when they only read it */
    uintptr_t lo, hi;
} dls_pol_lost;

/* One value of a stream's `done`, and the end stamp of the call that learned it. */
typedef struct {
    uint64_t pos, end;
} dls_pol_done_seen;

/* A stream as the policy knows it. A pointer to it stays valid under the lock, and past it while
 * held (stream_table.h: plans, after points, a thread's stream between a call's ENTER and EXIT);
 * id, handle, ctx, ctx_id, device, owner and kind never change. A destroyed stream whose work the
 * host saw complete, or later work superseded (superseded.h), is forgotten: taken out of the table
 * (stream_table.h) and of hb, its history freed. */
typedef struct dls_pol_stream_s {
    uint64_t id;
    uintptr_t handle; /* usable from any thread (CU_STREAM_LEGACY for the legacy stream) */
    uintptr_t ctx;    /* the context the stream belongs to (default streams: where observed) */
    uint64_t ctx_id;  /* its cuCtxGetId: never reused, unlike the handle of a destroyed context */
    int device;       /* ordinal of that context's device; -1 when unknown */
    uint64_t owner;   /* per-thread streams: the thread they belong to */
    dls_stream_kind kind;
    int removed;   /* destroyed: it takes no more operations */
    int capturing; /* between its capture begin and end */
    uint64_t last, done;
    dls_pol_done_seen seen[DLS_POL_DONE_SEEN]; /* done's latest values, newest first ({0, 0}: none) */
    uint64_t lost;                             /* position of the latest pending entry the history overwrote */
    uint64_t lost_cons;                        /* and of the latest one that may touch anything (0: none) */
    unsigned nlost;                            /* ranges of what they touched, kept after the history (ring.h) */
    unsigned head, count;
    dls_pol_entry *ring;                /* the history (ring.h): DLS_POL_RING entries and DLS_POL_LOST + 1 lost
                                           ranges, allocated (not cleared) at the first memory operation;
                                           NULL before */
    uint32_t named;                     /* the sweep (superseded.c) that found an exchange naming it */
    uint32_t listed;                    /* its place in dls_pol_g.listed */
    struct dls_pol_stream_s *forgotten; /* the next forgotten stream not yet freed (stream_table.c) */
    atomic_uint holds;                  /* pointers kept past the lock (dls_pol_stream_hold) */
} dls_pol_stream;

/* A slot of the table of streams (stream_table.h, a dls_map by id): the key, then the stream. */
typedef struct {
    uint64_t id;
    dls_pol_stream *st;
} dls_pol_stream_slot;

/* fix: the point of stream `st` right after a consumer access, shared by the exchanges that
 * access touched and by the orderings planned on it, and the pooled event that marks it, recorded
 * only when a wait needs it (events.h): `state` says whether it is due, being recorded, recorded
 * (ev set) or could not be. */
typedef struct dls_pol_after_s {
    CUevent ev;
    dls_pol_stream *st;
    uint64_t pos;     /* the access's position on st (0: not placed yet) */
    unsigned refs;    /* one per use that keeps it, one per planned ordering on it (held across the act
                      step, so the event is never pooled and recorded again while a wait on it is
                      being made), one while its deferred record is applied, one while it is due */
    atomic_int state; /* events.c's after_state */
} dls_pol_after;

/* A frontier entry of an exchange: a producer stream's latest operation touching it that was
 * pending at the export (attribute.c), its position plus what reports say, and the latest of
 * them that may write it (what a consumer that only reads must follow; `write` 0: only reads
 * were pending). */
typedef struct {
    dls_hb_epoch at;
    const char *api;
    char name[DLS_POL_NAME];
    uint64_t write;
    const char *wapi;
    char wname[DLS_POL_NAME];
} dls_pol_touch;

/* What an access does to the bytes of an exchange it touches (access.h, dls_pol_direction). */
typedef enum {
    DLS_POL_READS = 0, /* reads them only: a copy's source; a read-only tensor's consumer kernels */
    DLS_POL_MAY_WRITE, /* may write them: a kernel, a graph launch, an operation of unknown layout */
    DLS_POL_WRITES,    /* writes them: a copy's destination, a set, a stream-ordered free */
} dls_pol_dir;

/* What one stream did to an exchange since its export (its uses, exch.h): positions of its
 * latest access, of its latest access that may write and of its latest known write (0: none),
 * with their names for reports, and (fix) the event recorded right after the latest access. */
typedef struct {
    uint64_t stream;
    uint64_t pos, write, known;
    uint64_t rel; /* released exchanges: its latest position at the release (later ones came after it) */
    char name[DLS_POL_NAME], wname[DLS_POL_NAME], kname[DLS_POL_NAME];
    dls_pol_after *after;
} dls_pol_use;

#define DLS_POL_OVER_PRODUCERS 1u
#define DLS_POL_OVER_USES 2u

/* Policy state of one exchange (live, or released and kept for its release fence). The fields up
 * to `front` are set when a state is made; the arrays are valid up to their counts. */
typedef struct dls_pol_x {
    struct dls_pol_x *next, **pprev; /* in the live or the released list */
    uint64_t xid;
    uintptr_t data, lo, hi;
    uintptr_t alo; /* attribution: launch words in [alo, hi) count (the allocation holding lo) */
    DLDevice device;
    DLDataType dtype;
    int ndim;
    const char *framework, *symbol;
    dls_xpath path; /* how it was exchanged (reports' fix line) */
    int host_visible;
    int read_only; /* exported read-only (DLPack 1.x READ_ONLY): its consumer's kernels only read it */
    int released;
    uint64_t released_syncs;   /* dls_pol_g.syncs at the release */
    int captured;              /* a use was captured into a graph before it was ordered */
    int watch;                 /* check: its pages' watch while its producer's writes are pending (pages.h), or 0 */
    uint64_t host_tid;         /* and the thread that imported it */
    const char *host_importer; /* and the consumer it imported through (NULL: not known) */
    uint32_t host_pending;     /* and its frontier entries whose writes were pending then (bit i: front[i]) */
    unsigned overflow;         /* DLS_POL_OVER_*: more streams than front[] / use[] hold */
    unsigned nfront, nuse, nordered, nprod;
    dls_pol_touch front[DLS_POL_FRONT];
    uint64_t prod[DLS_POL_FRONT];   /* producer streams: the frontier's, and those whose history held a
                                    touching operation (complete) at the export */
    dls_pol_use use[DLS_POL_USES];  /* per stream, its accesses since the export */
    uint64_t ordered[DLS_POL_USES]; /* streams known ordered after the frontier */
    int64_t shape[DLS_POL_NDIM];
    dls_stack stack; /* producer's host stack at export; the consumer's at release */
} dls_pol_x;

#define DLS_POL_GRAPH_WRITES 8 /* known-write ranges kept per graph (graphs.h) */
#define DLS_POL_CAPTURES 16    /* streams capturing at once whose writes are collected (graphs.h) */

/* Known-write ranges of a capture, a graph or an executable graph (graphs.c), keyed by a
 * capturing stream's id, a CUgraph or a CUgraphExec. */
typedef struct {
    uintptr_t key;
    unsigned n;
    uintptr_t lo[DLS_POL_GRAPH_WRITES], hi[DLS_POL_GRAPH_WRITES];
} dls_pol_known_writes;

/* A host-function mark (hostfn.c): one event of the shim's own and what it completes. */
typedef struct {
    int state;       /* hostfn.c's mark_state */
    int complete;    /* a host thread saw its event complete */
    unsigned pins;   /* queries in flight without the lock */
    uint64_t age;    /* when it was recorded: the oldest is evicted first */
    uint64_t evid;   /* its hb event id */
    uint64_t stream; /* its stream's hb id */
    CUevent ev;      /* kept across reuse while the context stays the same */
    CUcontext ctx;
} dls_pol_hostfn_mark;

/* How many of the latest forgotten streams check can still find for a question as of a begin
 * that came before the host knew their work complete (stream_table.h). */
#define DLS_POL_RECENT 64

/* The policy's process state. */
typedef struct {
    dls_mutex lock;
    int mode; /* dls_mode; set once at start */
    dls_hb *hb;
    dls_map streams;         /* dls_pol_stream_slot by id (stream_table.h) */
    dls_pol_stream **listed; /* the same streams side by side, in no set order (DLS_POL_EACH_STREAM) */
    uint32_t nlisted, caplisted;
    unsigned nremoved;   /* destroyed streams still in it (stream_table.c) */
    dls_pol_x *live;     /* live exchanges */
    dls_pol_x *released; /* released exchanges still watched (check) or fenced (fix), newest first */
    unsigned nreleased;
    uint64_t own_event;                   /* private hb event ids used so far */
    uint64_t syncs;                       /* host synchronizes learned so far (complete.h) */
    atomic_uint ncapturing;               /* streams with `capturing` set (read without the lock) */
    atomic_uint nhost;                    /* exchanges with `watch` set (read without the lock) */
    atomic_int degraded;                  /* an allocation of the model failed (see dls_pol_degrade) */
    dls_pol_stream *found[DLS_POL_FOUND]; /* the streams found last, direct-mapped by id */

    /* What single files keep, a group per file (named in its comment; only that file reads or
     * writes the group), here so that one reset clears it (dls_pol_reset_for_tests). */
    struct {
        dls_pol_stream *list;                   /* forgotten streams not yet freed, newest first */
        dls_pol_stream *recent[DLS_POL_RECENT]; /* the latest forgotten ones (NULL: none) */
        unsigned nrecent;                       /* streams forgotten so far */
    } forgotten;                                /* stream_table.c */
    struct {
        unsigned next;          /* destroyed streams in the table that start the next sweep */
        uint32_t sweeps;        /* sweeps made so far (dls_pol_stream.named) */
        void *pieces, *cands;   /* the sweep's scratch, grown as needed */
        size_t npieces, ncands; /* their capacities */
    } superseded;               /* superseded.c */
    struct {
        dls_pol_known_writes captures[DLS_POL_CAPTURES]; /* the captures collected (key 0: free) */
        dls_map by_graph, by_exec;                       /* dls_pol_known_writes by CUgraph, by CUgraphExec */
    } graphs;                                            /* graphs.c */
    struct {
        dls_pol_hostfn_mark marks[DLS_POL_HOSTFN];
        unsigned nlive;    /* LIVE marks */
        uint64_t mark_age; /* marks recorded so far */
    } hostfn;              /* hostfn.c */
} dls_pol_state;

extern dls_pol_state dls_pol_g DLS_HIDDEN;

/* The model lost something it needs (an allocation failed, `reason`): warns once per `key` and
 * marks the policy degraded: fix then synchronizes the producer's context at every export, check
 * says what it cannot check. Any thread, lock held or not. */
void dls_pol_degrade(const char *key, const char *reason);

/* Tests only, lock held or no other thread in the policy: forgets every stream (freed: the table
 * and the forgotten ones), graph and host-function mark (no driver call). The exchanges are the
 * caller's to drop first (dls_pol_x_drop): they may point to streams. */
void dls_pol_reset_for_tests(void);

#endif
