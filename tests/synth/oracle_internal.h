/* oracle_internal.h: the reference's model of a trace, shared by its parts: oracle_parse.c reads
 * the trace into it, oracle_past.c computes every operation's guaranteed past, oracle_pairs.c the
 * exchanges and their pairs, oracle.c the queries and descriptions (oracle.h is the interface). */
#ifndef ORACLE_INTERNAL_H
#define ORACLE_INTERNAL_H

#include "oracle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ORACLE_NONE UINT32_MAX
#define ORACLE_NEVER UINT64_MAX /* a stamp that never comes: no later return */

/* ---- bit sets over operation indices (a set of operation i < n needs ORACLE_WORDS(n) words) ---- */
#define ORACLE_WORDS(n) (((n) + 63) / 64)

static inline int bits_has(const uint64_t *b, size_t i)
{
    return (int)((b[i / 64] >> (i % 64)) & 1);
}

static inline void bits_set(uint64_t *b, size_t i)
{
    b[i / 64] |= UINT64_C(1) << (i % 64);
}

/* dst |= src over `words` words. */
static inline void bits_or(uint64_t *dst, const uint64_t *src, size_t words)
{
    for (size_t i = 0; i < words; i++)
        dst[i] |= src[i];
}

/* dst &= src over `words` words. */
static inline void bits_and(uint64_t *dst, const uint64_t *src, size_t words)
{
    for (size_t i = 0; i < words; i++)
        dst[i] &= src[i];
}

/* Growth of an array of `size`-byte items to hold n + 1 (*cap grows by doubling); exits on no
 * memory (a test tool). */
void *oracle_grow(void *p, size_t *cap, size_t n, size_t size);

/* ---- the trace ---- */

typedef enum { SK_LEGACY, SK_USER, SK_PTDS } stream_kind;
typedef enum { AC_READ = 1, AC_WRITE = 2, AC_MAY = 4 } access_mode;
typedef enum { OK_KERNEL, OK_COPY, OK_SET, OK_HOSTFN, OK_RECORD, OK_WAIT, OK_MARK, OK_OTHER } op_kind;

typedef struct {
    uint64_t lo, hi;
    unsigned mode; /* access_mode */
} o_access;

/* Where something happened: its thread, stamp, the begin of the innermost call open at it (its
 * own stamp for a note), that call's return (ORACLE_NEVER: none) and the thread's open calls. */
typedef struct {
    uint32_t thread;
    uint64_t stamp, lastc, nextr;
    int depth;
} o_point;

/* A thread's ops on one stream, in enqueue order (stamp, seq and return stamps all increase). */
typedef struct {
    uint32_t thread;
    uint32_t *ops;
    size_t n, cap;
} o_lane;

typedef struct {
    uint64_t id;
    uint32_t ctx;
    int dev;
    stream_kind kind;
    int blocking; /* 1: the legacy rule applies (legacy, blocking user, per-thread) */
    o_lane *lanes;
    size_t nlanes, cap;
    uint32_t *byseq; /* its ops in seq order (for P lines) */
    size_t nbyseq, capseq;
    int destroyed; /* 1: destroyed by a call (its X line), at `destroy` */
    o_point destroy;
} o_stream;

typedef struct {
    uint64_t uid;
    uint32_t legacy;   /* its legacy stream, or ORACLE_NONE */
    uint32_t *streams; /* every stream made in it (destroyed ones too) */
    size_t nstreams, cap;
} o_ctx;

typedef struct {
    uint64_t id;
    o_point at;
    uint64_t call;
    uint32_t stream;
    uint64_t seq;
    op_kind kind;
    uint32_t record_of, wait_for; /* event indices, or ORACLE_NONE */
    uint32_t acc, nacc;           /* its accesses in o_model.acc */
    uint32_t dep, ndep;           /* its P lines in o_model.deps */
    char name[40];                /* its call's name (for messages) */
} o_op;

typedef struct {
    uint64_t id;
    uint32_t *records; /* record ops, in stamp order */
    size_t n, cap;
    uint64_t *max_nextr; /* max_nextr[i]: the largest nextr of records[0..i] */
    uint64_t *min_lastc; /* min_lastc[i]: the smallest lastc of records[i..n) */
} o_event;

/* A host wait: an H line (stream, seq), an HE line (event), or every H line of one call that
 * waits for a whole context (ctx: the simulator's context synchronizes, frees and lazy loads list
 * the streams they found, not those already reclaimed, so the reference completes every stream
 * the context ever had). */
typedef struct {
    o_point at;
    uint32_t stream; /* H: the stream, else ORACLE_NONE */
    uint64_t seq;
    uint32_t event; /* HE: the event, else ORACLE_NONE */
    uint32_t ctx;   /* a context's wait: the context, else ORACLE_NONE */
} o_hostwait;

typedef struct {
    o_point at;
    char *text;
    int import;   /* an `import <x>` note: the thread's later host reads are also judged as of it */
    int hostread; /* a `hostread <x>` note */
} o_note;

typedef struct {
    uint64_t tid;
    uint64_t lastc;
    uint64_t *pending; /* indices (tagged by kind) of things waiting for the thread's next return */
    size_t npending, cappending;
    int depth;         /* open calls */
    uint64_t ctx_call; /* the latest call whose context wait was noted, and its context */
    uint32_t ctx_of_call;
    struct {
        uint64_t call;
        uint64_t begin; /* its C stamp (body order: its B stamp; 0 until its body began) */
        char name[40];
    } open[16]; /* the innermost open calls (deeper ones are not named) */
} o_thread;

/* One line of the sweep, in stamp order. */
typedef enum { EV_CALL, EV_RETURN, EV_OP, EV_HOSTWAIT, EV_NOTE } ev_type;
typedef struct {
    ev_type type;
    uint32_t index; /* thread (call, return), op, host wait or note */
    int depth;      /* a return: the depth of the call that returns (1: outermost) */
} o_ev;

/* A map from 64-bit ids to 32-bit indices (open addressing). */
typedef struct {
    uint64_t *keys;
    uint32_t *vals;
    size_t n, cap;
} o_map;

int oracle_map_get(const o_map *m, uint64_t key, uint32_t *val);
void oracle_map_put(o_map *m, uint64_t key, uint32_t val);
void oracle_map_free(o_map *m);

typedef struct {
    o_op *ops;
    size_t nops, capops;
    o_access *acc;
    size_t nacc, capacc;
    struct {
        uint32_t stream;
        uint64_t seq;
    } * deps;
    size_t ndeps, capdeps;
    o_stream *streams;
    size_t nstreams, capstreams;
    o_ctx *ctxs;
    size_t nctxs, capctxs;
    o_event *events;
    size_t nevents, capevents;
    o_hostwait *waits;
    size_t nwaits, capwaits;
    o_note *notes;
    size_t nnotes, capnotes;
    o_thread *threads;
    size_t nthreads, capthreads;
    o_ev *evs;
    size_t nevs, capevs;
    o_map op_ids, stream_ids, event_ids, ctx_ids, thread_ids, call_threads;
    size_t ncalls, nbodies, nlines;
    int body_order; /* set before parsing: host order from B and D lines, not C and R */
} o_model;

/* Parses the trace text into m (zeroed by the caller, body_order set). Returns 0, or -1 with a
 * reason in err. */
int oracle_model_parse(o_model *m, const char *text, char *err, size_t n);
void oracle_model_free(o_model *m);

/* Point a is host-before point b. */
static inline int oracle_before(const o_point *a, const o_point *b)
{
    return a->thread == b->thread ? a->stamp < b->stamp : a->nextr < b->lastc;
}

/* ---- guaranteed pasts ---- */

typedef struct {
    uint64_t **gp;        /* gp[i]: GP(op i), ORACLE_WORDS(i) words */
    uint64_t **hk_note;   /* hk_note[k]: host knowledge at note k */
    uint64_t **hk_import; /* hk_import[k]: at hostread note k, what its thread had published to it as
                             of its latest import note, with its own waits up to k (else NULL) */
    size_t passes;
} o_past;

/* Computes every operation's guaranteed past (and the host knowledge at each note). Returns
 * 0, or -1 with a reason in err (no convergence). `lenient`: a host wait's completion is known to
 * every thread from the wait's H line on, not from its call's return (oracle_pair_window). */
int oracle_past_compute(const o_model *m, o_past *p, int lenient, char *err, size_t n);
void oracle_past_free(const o_model *m, o_past *p);

/* op a is in GP(op b) (a, b indices). */
static inline int oracle_in_past(const o_past *p, size_t a, size_t b)
{
    return a < b && bits_has(p->gp[b], a);
}

/* ---- the judged result ---- */

struct oracle {
    o_model m;
    o_past past;
    o_past lenient; /* computed when a pair is not guaranteed (oracle_pair_window) */
    oracle_exchange *x;
    size_t nx, capx;
    oracle_pair *pairs;
    size_t npairs, cappairs;
};

/* Finds the exchanges in the notes and computes their pairs. Returns 0, or -1 with a reason. */
int oracle_pairs_compute(oracle *o, char *err, size_t n);

#endif
