/* Randomized differential test of the happens-before engine (shim/hb) against the brute-force
 * reference model (tests/hb/hb_reference.c): thousands of random sequences of stream, event,
 * sync, range and access operations over several contexts, threads and streams of every kind,
 * with every question asked after every step; the answers must be identical.
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
#define MAXR 10
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
} family;

typedef struct {
    dls_hb *e;
    hbref *r;
    rng g;
    uint64_t seed;
    int step;
    const family *f;
    uint64_t streams[MAXS * 2];
    uint64_t stream_ctx[MAXS * 2];
    int removed[MAXS * 2];
    int nstreams;
    uint64_t ranges[MAXR];
    int nranges;
    dls_hb_epoch frontier[MAXS * 2];
    size_t nfrontier;
    uint64_t frontier_thread;
    uint64_t next_op;
} run;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            print_error("sequence seed %llu, step %d: ", (unsigned long long)u->seed, u->step);   \
            print_error(__VA_ARGS__);                                                             \
            print_error("\n");                                                                    \
            fail();                                                                               \
        }                                                                                         \
    } while (0)

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
        u->stream_ctx[u->nstreams] = ctx;
        u->removed[u->nstreams] = 0;
        u->streams[u->nstreams++] = id;
    }
}

static int cmp_conflict(const void *pa, const void *pb)
{
    const dls_hb_conflict *a = pa, *b = pb;
    if (a->range != b->range)
        return a->range < b->range ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    return (int)a->kind - (int)b->kind;
}

static void interval(run *u, uint64_t *lo, uint64_t *hi)
{
    *lo = below(&u->g, 72);
    *hi = *lo + below(&u->g, 24);
}

static void compare_conflicts(run *u, int host)
{
    uint64_t t = thread_id(u), s = any_stream(u), lo, hi;
    interval(u, &lo, &hi);
    dls_hb_access_kind k = below(&u->g, 2) ? DLS_HB_READ : DLS_HB_WRITE;
    dls_hb_conflict a[OUTCAP], b[OUTCAP];
    size_t na = 0, nb = 0;
    int ra = host ? dls_hb_host_conflicts(u->e, t, lo, hi, k, a, OUTCAP, &na)
                  : dls_hb_conflicts(u->e, t, s, lo, hi, k, a, OUTCAP, &na);
    int rb = hbref_conflicts(u->r, t, host ? NULL : &s, lo, hi, k, b, OUTCAP, &nb);
    CHECK(ra == rb, "%sconflicts rc: engine %d, reference %d", host ? "host " : "", ra, rb);
    if (ra)
        return;
    CHECK(na == nb, "%sconflicts [%llu,%llu) kind %d: engine %zu, reference %zu", host ? "host " : "",
          (unsigned long long)lo, (unsigned long long)hi, k, na, nb);
    CHECK(na <= OUTCAP, "more conflicts than the test expects");
    qsort(a, na, sizeof *a, cmp_conflict);
    qsort(b, nb, sizeof *b, cmp_conflict);
    for (size_t i = 0; i < na; i++)
        CHECK(cmp_conflict(&a[i], &b[i]) == 0 && a[i].op == b[i].op,
              "conflict %zu differs: engine (stream %llu pos %llu op %llu), reference (stream %llu pos %llu op %llu)",
              i, (unsigned long long)a[i].stream, (unsigned long long)a[i].pos, (unsigned long long)a[i].op,
              (unsigned long long)b[i].stream, (unsigned long long)b[i].pos, (unsigned long long)b[i].op);
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
              "%s entry %zu: engine (%llu, %llu), reference (%llu, %llu)", what, i,
              (unsigned long long)a[i].stream, (unsigned long long)a[i].pos,
              (unsigned long long)b[i].stream, (unsigned long long)b[i].pos);
}

static void compare_waits(run *u, int host)
{
    uint64_t t = thread_id(u), s = any_stream(u), lo, hi;
    interval(u, &lo, &hi);
    dls_hb_access_kind k = below(&u->g, 2) ? DLS_HB_READ : DLS_HB_WRITE;
    dls_hb_epoch a[OUTCAP], b[OUTCAP];
    size_t na = 0, nb = 0;
    int ra = host ? dls_hb_host_waits(u->e, t, lo, hi, k, a, OUTCAP, &na)
                  : dls_hb_waits(u->e, t, s, lo, hi, k, a, OUTCAP, &na);
    int rb = hbref_waits(u->r, t, host ? NULL : &s, lo, hi, k, b, OUTCAP, &nb);
    compare_epochs(u, host ? "host waits" : "waits", ra, rb, a, na, b, nb);
}

static void compare_frontier(run *u)
{
    uint64_t t = thread_id(u);
    dls_hb_epoch a[OUTCAP], b[OUTCAP];
    size_t na = 0, nb = 0;
    int ra = dls_hb_frontier(u->e, t, a, OUTCAP, &na);
    int rb = hbref_frontier(u->r, t, b, OUTCAP, &nb);
    compare_epochs(u, "frontier", ra, rb, a, na, b, nb);
    if (ra == 0 && below(&u->g, 3) == 0) {
        memcpy(u->frontier, a, na * sizeof *a);
        u->nfrontier = na;
        u->frontier_thread = t;
    }
}

static void compare_frontier_waits(run *u)
{
    uint64_t t = below(&u->g, 2) ? u->frontier_thread : thread_id(u), s = any_stream(u);
    dls_hb_epoch a[OUTCAP], b[OUTCAP];
    size_t na = 0, nb = 0;
    int ra = dls_hb_frontier_waits(u->e, t, s, u->frontier, u->nfrontier, a, OUTCAP, &na);
    int rb = hbref_frontier_waits(u->r, t, s, u->frontier, u->nfrontier, b, OUTCAP, &nb);
    compare_epochs(u, "frontier waits", ra, rb, a, na, b, nb);
}

static void compare_ordered(run *u)
{
    uint64_t t = thread_id(u), s = any_stream(u), x = any_stream(u), pos = below(&u->g, 40);
    int oa = -1, ob = -1;
    int ra = dls_hb_ordered(u->e, t, s, x, pos, &oa);
    int rb = hbref_ordered(u->r, t, s, x, pos, &ob);
    CHECK(ra == rb, "ordered rc: engine %d, reference %d", ra, rb);
    CHECK(ra != 0 || oa == ob, "ordered(stream %llu after %llu:%llu): engine %d, reference %d",
          (unsigned long long)s, (unsigned long long)x, (unsigned long long)pos, oa, ob);
}

/* One random update applied to both models; return codes and positions must agree. */
static void random_update(run *u)
{
    uint32_t c = below(&u->g, 100);
    uint64_t t = thread_id(u), s = any_stream(u), pa = 0, pb = 0;
    uint64_t op = ++u->next_op;
    int ra, rb;
    const char *what;
    if (c < 34) {
        what = "op";
        ra = dls_hb_op(u->e, t, s, op, &pa);
        rb = hbref_op(u->r, t, s, op, &pb);
        for (int n = (int)below(&u->g, 3); ra == 0 && rb == 0 && n > 0 && u->nranges; n--) {
            uint64_t h = u->ranges[below(&u->g, (uint32_t)u->nranges)];
            dls_hb_access_kind k = below(&u->g, 2) ? DLS_HB_READ : DLS_HB_WRITE;
            int xa = dls_hb_access(u->e, s, h, k), xb = hbref_access(u->r, s, h, k);
            CHECK(xa == xb, "access rc: engine %d, reference %d", xa, xb);
        }
    } else if (c < 46) {
        uint64_t ev = event_id(u);
        what = "event record";
        ra = dls_hb_event_record(u->e, t, s, ev, op, &pa);
        rb = hbref_event_record(u->r, t, s, ev, op, &pb);
    } else if (c < 58) {
        uint64_t ev = event_id(u);
        what = "event wait";
        ra = dls_hb_event_wait(u->e, t, s, ev, op, &pa);
        rb = hbref_event_wait(u->r, t, s, ev, op, &pb);
    } else if (c < 65) {
        what = "sync stream";
        ra = dls_hb_sync_stream(u->e, t, s);
        rb = hbref_sync_stream(u->r, t, s);
    } else if (c < 70) {
        uint64_t ev = event_id(u);
        what = "sync event";
        ra = dls_hb_sync_event(u->e, t, ev);
        rb = hbref_sync_event(u->r, t, ev);
    } else if (c < 73) {
        uint64_t ctx = 100 + below(&u->g, u->f->nctx + 1);
        what = "sync context";
        ra = dls_hb_sync_context(u->e, t, ctx);
        rb = hbref_sync_context(u->r, t, ctx);
    } else if (c < 74) {
        what = "sync all";
        ra = dls_hb_sync_all(u->e, t);
        rb = hbref_sync_all(u->r, t);
    } else if (c < 76) {
        what = "thread remove";
        dls_hb_thread_remove(u->e, t);
        hbref_thread_remove(u->r, t);
        ra = rb = 0;
    } else if (c < 78) {
        uint64_t ev = event_id(u);
        what = "event remove";
        dls_hb_event_remove(u->e, ev);
        hbref_event_remove(u->r, ev);
        ra = rb = 0;
    } else if (c < 80) {
        what = "stream remove";
        ra = dls_hb_stream_remove(u->e, s);
        rb = hbref_stream_remove(u->r, s);
    } else if (c < 85) {
        add_stream(u);
        return;
    } else if (c < 93) {
        uint64_t lo, hi, h = 0;
        interval(u, &lo, &hi);
        what = "track";
        if (u->nranges == MAXR)
            return;
        ra = dls_hb_track(u->e, lo, hi, &h);
        rb = hbref_track(u->r, h, lo, hi);
        if (ra == 0)
            u->ranges[u->nranges++] = h;
    } else {
        what = "untrack";
        if (!u->nranges)
            return;
        uint32_t i = below(&u->g, (uint32_t)u->nranges);
        uint64_t h = u->ranges[i];
        ra = dls_hb_untrack(u->e, h);
        rb = hbref_untrack(u->r, h);
        u->ranges[i] = u->ranges[--u->nranges];
        int again = dls_hb_untrack(u->e, h);
        CHECK(again != 0, "untracking twice succeeded");
    }
    CHECK(ra == rb, "%s (thread %llu, stream %llu): engine rc %d, reference rc %d", what,
          (unsigned long long)t, (unsigned long long)s, ra, rb);
    CHECK(pa == pb, "%s position: engine %llu, reference %llu", what, (unsigned long long)pa,
          (unsigned long long)pb);
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
        compare_conflicts(u, 0);
        compare_conflicts(u, 1);
        compare_waits(u, 0);
        compare_waits(u, 1);
        compare_ordered(u);
        compare_ordered(u);
        compare_frontier(u);
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
    print_message("%s: %llu sequences, seeds %llu..%llu\n", f->name, (unsigned long long)nseq,
                  (unsigned long long)base, (unsigned long long)(base + nseq - 1));
    for (uint64_t i = 0; i < nseq; i++)
        run_sequence(f, base + i);
}

/* Two contexts, every kind of stream, legacy streams common. */
static void differential_mixed_kinds(void **state)
{
    (void)state;
    static const family f = {"mixed kinds, two contexts", 2, 30, 30};
    run_family(&f, 1000, 1500);
}

/* One context dominated by a legacy stream and blocking/per-thread streams: the implicit
 * synchronization rules in both directions, with removal and re-adding of the legacy stream. */
static void differential_legacy_heavy(void **state)
{
    (void)state;
    static const family f = {"legacy heavy, one context", 1, 45, 10};
    run_family(&f, 500000, 1000);
}

/* Three contexts and mostly non-blocking streams: ordering only through events and syncs. */
static void differential_events_and_syncs(void **state)
{
    (void)state;
    static const family f = {"non-blocking, three contexts", 3, 10, 80};
    run_family(&f, 900000, 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential_mixed_kinds),
        cmocka_unit_test(differential_legacy_heavy),
        cmocka_unit_test(differential_events_and_syncs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
