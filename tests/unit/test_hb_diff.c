/* Randomized differential test of the happens-before engine (shim/hb) against the brute-force
 * reference model (tests/hb/hb_reference.c): thousands of random sequences of stream, event,
 * sync and capture operations over several contexts, threads and streams of every kind, with
 * every question asked after every step; the answers must be identical.
 *
 * Every call carries host stamps (hb.h, "Host order"): most calls are ordered after every earlier
 * one, others overlap the latest few (as calls of threads running at the same time do), or begin
 * long before they end (a thread that learned nothing for a while).
 *
 * Each sequence has its own seed, printed on failure with the step; HB_DIFF_SEED=<n> changes the
 * base seed and HB_DIFF_SEQS=<n> the number of sequences, to reproduce or to search longer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hb/hb.h"
#include "../hb/hb_reference.h"

#define STEPS 140
#define MAXS 12
#define NTHREADS 3
#define NEVENTS 5
#define OUTCAP 64

typedef struct {
    uint64_t x;
} rng;

static uint64_t next(rng *r)
{
    r->x ^= r->x << 13;
    r->x ^= r->x >> 7;
    r->x ^= r->x << 17;
    return r->x;
}

static uint32_t below(rng *r, uint32_t n)
{
    return (uint32_t)(next(r) % n);
}

/* Parameters of one family of sequences. */
typedef struct {
    const char *name;
    uint32_t nctx;         /* contexts */
    uint32_t legacy_pct;   /* chance a new stream is a legacy stream (when its context has none) */
    uint32_t nonblock_pct; /* chance a new non-legacy stream is non-blocking */
    uint32_t overlap_pct;  /* chance a call overlaps the calls told just before it */
} family;

typedef struct {
    dls_hb *e;
    hbref *r;
    rng g;
    uint64_t seed;
    int step;
    const family *f;
    uint64_t streams[MAXS * 2];
    uint64_t pos[MAXS * 2]; /* current position of each stream */
    int nstreams;
    uint64_t now; /* the last end stamp handed out */
} run;

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            print_error("sequence seed %llu, step %d: ", (unsigned long long)u->seed, u->step); \
            print_error(__VA_ARGS__);                                                           \
            print_error("\n");                                                                  \
            fail();                                                                             \
        }                                                                                       \
    } while (0)

/* The host stamps of the next call: it ends after every earlier call; it began after all of them,
 * or after all but the last few, or long ago. */
static dls_hb_when when(run *u)
{
    uint64_t end = ++u->now, back = 0;
    if (below(&u->g, 100) < u->f->overlap_pct)
        back = below(&u->g, 100) < 85 ? 1 + below(&u->g, 4) : below(&u->g, 40);
    return (dls_hb_when){.begin = end > back ? end - back : 0, .end = end};
}

static uint64_t thread_id(run *u)
{
    return 7 + below(&u->g, NTHREADS);
}

static uint64_t event_id(run *u)
{
    return 50 + below(&u->g, NEVENTS);
}

/* Any stream ever added (removed ones included), or an id never added. */
static uint64_t any_stream(run *u)
{
    if (u->nstreams == 0 || below(&u->g, 40) == 0)
        return 999999;
    return u->streams[below(&u->g, (uint32_t)u->nstreams)];
}

static void add_stream(run *u)
{
    if (u->nstreams == MAXS * 2)
        return;
    uint64_t ctx = 100 + below(&u->g, u->f->nctx);
    dls_hb_stream_kind kind;
    if (below(&u->g, 100) < u->f->legacy_pct)
        kind = DLS_HB_LEGACY;
    else if (below(&u->g, 100) < u->f->nonblock_pct)
        kind = DLS_HB_NON_BLOCKING;
    else
        kind = below(&u->g, 3) ? DLS_HB_BLOCKING : DLS_HB_PER_THREAD;
    /* Ids in an order unrelated to the order of adding, to exercise sorting. */
    uint64_t id = (uint64_t)below(&u->g, 1000) * 64 + (uint64_t)u->nstreams;
    int a = dls_hb_stream_add(u->e, id, ctx, kind);
    int b = hbref_stream_add(u->r, id, ctx, kind);
    CHECK(a == b, "stream_add(%llu, kind %d): engine %d, reference %d", (unsigned long long)id, kind, a, b);
    if (a == 0) {
        u->pos[u->nstreams] = 0;
        u->streams[u->nstreams++] = id;
    }
}

static void compare_epochs(run *u, const char *what, int ra, int rb, const dls_hb_epoch *a, size_t na,
                           const dls_hb_epoch *b, size_t nb)
{
    CHECK(ra == rb, "%s rc: engine %d, reference %d", what, ra, rb);
    if (ra)
        return;
    CHECK(na == nb, "%s: engine %zu entries, reference %zu", what, na, nb);
    for (size_t i = 0; i < na && i < OUTCAP; i++)
        CHECK(a[i].stream == b[i].stream && a[i].pos == b[i].pos,
              "%s entry %zu: engine (%llu, %llu), reference (%llu, %llu)", what, i, (unsigned long long)a[i].stream,
              (unsigned long long)a[i].pos, (unsigned long long)b[i].stream, (unsigned long long)b[i].pos);
}

/* The position stream s has reached (0 for an id never added). */
static uint64_t current_pos(const run *u, uint64_t s)
{
    for (int k = 0; k < u->nstreams; k++)
        if (u->streams[k] == s)
            return u->pos[k];
    return 0;
}

/* A captured frontier as the policy builds one: some streams (unknown ones now and then) at a
 * position up to their current one, position 0 included. */
static size_t random_frontier(run *u, dls_hb_epoch *f)
{
    size_t n = below(&u->g, 5);
    for (size_t i = 0; i < n; i++) {
        uint64_t s = any_stream(u);
        f[i] = (dls_hb_epoch){.stream = s, .pos = below(&u->g, (uint32_t)current_pos(u, s) + 1)};
    }
    return n;
}

static void compare_frontier_waits(run *u)
{
    uint64_t t = thread_id(u), s = any_stream(u);
    dls_hb_epoch f[8], a[OUTCAP], b[OUTCAP];
    size_t nf = random_frontier(u, f), na = 0, nb = 0;
    int ra = dls_hb_frontier_waits(u->e, t, s, f, nf, a, OUTCAP, &na);
    int rb = hbref_frontier_waits(u->r, t, s, f, nf, b, OUTCAP, &nb);
    compare_epochs(u, "frontier waits", ra, rb, a, na, b, nb);
}

static void compare_covers(run *u)
{
    uint64_t ev = event_id(u), s = any_stream(u);
    uint64_t a = dls_hb_event_covers(u->e, ev, s), b = hbref_event_covers(u->r, ev, s);
    CHECK(a == b, "event_covers(event %llu, stream %llu): engine %llu, reference %llu", (unsigned long long)ev,
          (unsigned long long)s, (unsigned long long)a, (unsigned long long)b);
}

static void compare_ordered(run *u)
{
    uint64_t t = thread_id(u), s = any_stream(u), x = any_stream(u), pos = below(&u->g, 40);
    int oa = -1, ob = -1;
    int ra = dls_hb_ordered(u->e, t, s, x, pos, &oa);
    int rb = hbref_ordered(u->r, t, s, x, pos, &ob);
    CHECK(ra == rb, "ordered rc: engine %d, reference %d", ra, rb);
    CHECK(ra != 0 || oa == ob, "ordered(stream %llu after %llu:%llu): engine %d, reference %d", (unsigned long long)s,
          (unsigned long long)x, (unsigned long long)pos, oa, ob);
}

/* One random update applied to both models; return codes and positions must agree. */
static void random_update(run *u)
{
    uint32_t c = below(&u->g, 100);
    uint64_t t = thread_id(u), s = any_stream(u), pa = 0, pb = 0;
    int ra, rb;
    const char *what;
    if (c < 40) {
        dls_hb_when w = when(u);
        what = "op";
        ra = dls_hb_op(u->e, t, s, w, &pa);
        rb = hbref_op(u->r, t, s, w, &pb);
        for (uint32_t more = ra == 0 && rb == 0 ? below(&u->g, 3) : 0; more > 0; more--) { /* the same again */
            CHECK(pa == pb, "op position: engine %llu, reference %llu", (unsigned long long)pa, (unsigned long long)pb);
            uint32_t n = below(&u->g, 4); /* n operations at once (none: nothing changes) */
            uint64_t end = u->now += n;
            what = "op again";
            ra = dls_hb_op_again(u->e, s, n, end, &pa);
            rb = hbref_op_again(u->r, t, s, n, end, &pb);
        }
    } else if (c < 53) {
        uint64_t ev = event_id(u);
        what = "event record";
        dls_hb_when w = when(u);
        ra = dls_hb_event_record(u->e, t, s, ev, w, &pa);
        rb = hbref_event_record(u->r, t, s, ev, w, &pb);
    } else if (c < 66) {
        uint64_t ev = event_id(u);
        what = "event wait";
        dls_hb_when w = when(u);
        ra = dls_hb_event_wait(u->e, t, s, ev, w, &pa);
        rb = hbref_event_wait(u->r, t, s, ev, w, &pb);
    } else if (c < 73) {
        what = "sync stream";
        ra = dls_hb_sync_stream(u->e, t, s);
        rb = hbref_sync_stream(u->r, t, s);
    } else if (c < 79) {
        uint64_t ev = event_id(u);
        what = "sync event";
        ra = dls_hb_sync_event(u->e, t, ev);
        rb = hbref_sync_event(u->r, t, ev);
    } else if (c < 87) {
        /* A capture: what a synchronize (or a query) beginning now completes, applied later with
         * sync event or event wait. */
        uint64_t ev = event_id(u);
        uint32_t how = below(&u->g, 8);
        if (how < 2) {
            what = "capture stream";
            ra = dls_hb_capture_stream(u->e, ev, s, DLS_HB_NOW);
            rb = hbref_capture_stream(u->r, ev, s);
        } else if (how < 3) {
            uint64_t pos = below(&u->g, (uint32_t)current_pos(u, s) + 2); /* 0, past, current, not reached */
            what = "capture at";
            ra = dls_hb_capture_at(u->e, ev, s, pos);
            rb = hbref_capture_at(u->r, ev, s, pos);
        } else if (how < 5) {
            uint64_t from = event_id(u);
            what = "capture event";
            ra = dls_hb_capture_event(u->e, ev, from);
            rb = hbref_capture_event(u->r, ev, from);
        } else if (how < 7) {
            uint64_t ctx = 100 + below(&u->g, u->f->nctx + 1);
            what = "capture context";
            ra = dls_hb_capture_context(u->e, ev, ctx, DLS_HB_NOW);
            rb = hbref_capture_context(u->r, ev, ctx);
        } else if (below(&u->g, 2)) {
            what = "capture all";
            ra = dls_hb_capture_all(u->e, ev, DLS_HB_NOW);
            rb = hbref_capture_all(u->r, ev);
        } else { /* what a synchronous copy told just now completes */
            dls_hb_when w = when(u);
            uint64_t pa2 = 0, pb2 = 0;
            what = "capture op";
            ra = dls_hb_op(u->e, t, s, w, &pa2);
            rb = hbref_op(u->r, t, s, w, &pb2);
            CHECK(ra == rb && pa2 == pb2, "op before capture op: engine rc %d pos %llu, reference rc %d pos %llu", ra,
                  (unsigned long long)pa2, rb, (unsigned long long)pb2);
            if (ra == 0) {
                ra = dls_hb_capture_op(u->e, ev, t, s, w.begin);
                rb = hbref_capture_op(u->r, ev, t, s, w.begin);
            }
            for (int k = 0; k < u->nstreams && pa2; k++)
                if (u->streams[k] == s)
                    u->pos[k] = pa2;
        }
    } else if (c < 89) {
        what = "thread remove";
        dls_hb_thread_remove(u->e, t);
        hbref_thread_remove(u->r, t);
        ra = rb = 0;
    } else if (c < 91) {
        uint64_t ev = event_id(u);
        what = "event remove";
        dls_hb_event_remove(u->e, ev);
        hbref_event_remove(u->r, ev);
        ra = rb = 0;
    } else if (c < 94) {
        what = "stream remove";
        ra = dls_hb_stream_remove(u->e, s);
        rb = hbref_stream_remove(u->r, s);
    } else {
        add_stream(u);
        return;
    }
    CHECK(ra == rb, "%s (thread %llu, stream %llu): engine rc %d, reference rc %d", what, (unsigned long long)t,
          (unsigned long long)s, ra, rb);
    CHECK(pa == pb, "%s position: engine %llu, reference %llu", what, (unsigned long long)pa, (unsigned long long)pb);
    for (int k = 0; k < u->nstreams && pa; k++)
        if (u->streams[k] == s)
            u->pos[k] = pa;
}

static void run_sequence(const family *f, uint64_t seed)
{
    run st = {.f = f, .seed = seed, .g = {seed * 0x9e3779b97f4a7c15ULL | 1}};
    run *u = &st;
    u->e = dls_hb_create();
    u->r = hbref_create();
    assert_non_null(u->e);
    assert_non_null(u->r);
    for (int i = 0; i < 6; i++)
        add_stream(u);
    for (u->step = 0; u->step < STEPS; u->step++) {
        random_update(u);
        compare_ordered(u);
        compare_ordered(u);
        compare_covers(u);
        compare_covers(u);
        compare_frontier_waits(u);
        compare_frontier_waits(u);
    }
    dls_hb_destroy(u->e);
    hbref_destroy(u->r);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static void run_family(const family *f, uint64_t base, uint64_t nseq)
{
    base = env_u64("HB_DIFF_SEED", base);
    nseq = env_u64("HB_DIFF_SEQS", nseq);
    print_message("%s: %llu sequences, seeds %llu..%llu\n", f->name, (unsigned long long)nseq, (unsigned long long)base,
                  (unsigned long long)(base + nseq - 1));
    for (uint64_t i = 0; i < nseq; i++)
        run_sequence(f, base + i);
}

/* Two contexts, every kind of stream, legacy streams common. */
static void differential_mixed_kinds(void **state)
{
    (void)state;
    static const family f = {"mixed kinds, two contexts", 2, 30, 30, 10};
    run_family(&f, 1000, 1500);
}

/* One context dominated by a legacy stream and blocking/per-thread streams: the implicit
 * synchronization rules in both directions, with removal and re-adding of the legacy stream. */
static void differential_legacy_heavy(void **state)
{
    (void)state;
    static const family f = {"legacy heavy, one context", 1, 45, 10, 10};
    run_family(&f, 500000, 1000);
}

/* Three contexts and mostly non-blocking streams: ordering only through events and syncs. */
static void differential_events_and_syncs(void **state)
{
    (void)state;
    static const family f = {"non-blocking, three contexts", 3, 10, 80, 10};
    run_family(&f, 900000, 1000);
}

/* Calls of threads running at the same time: most overlap the few told before them, some began
 * long ago; a legacy stream and blocking streams in one context, events recorded and waited. */
static void differential_overlapping_calls(void **state)
{
    (void)state;
    static const family f = {"overlapping calls, legacy heavy", 1, 45, 10, 70};
    run_family(&f, 1300000, 1500);
}

/* The same over two contexts with every kind of stream. */
static void differential_overlapping_kinds(void **state)
{
    (void)state;
    static const family f = {"overlapping calls, mixed kinds", 2, 30, 30, 50};
    run_family(&f, 1700000, 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential_mixed_kinds),       cmocka_unit_test(differential_legacy_heavy),
        cmocka_unit_test(differential_events_and_syncs),  cmocka_unit_test(differential_overlapping_calls),
        cmocka_unit_test(differential_overlapping_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
