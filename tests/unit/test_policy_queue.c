/* Differential test of the queue's drain (shim/policy/queue.c): random sequences of deferred
 * operations by two threads on streams of every kind (one capturing, some records with an
 * unresolved stream), applied through the queue, where a run of one thread on one stream takes
 * positions without asking hb and tells hb at the run's end, and applied one by one with
 * dls_pol_apply (a full hb operation each), must leave the same model: stream positions, what
 * hb orders each stream after, ring entries, lost boxes and the exchange's consumer accesses.
 * Between drains the host sometimes learns a stream complete up to some position. The rings
 * and lost boxes are also checked against a brute-force list of the latest entries and fold of
 * those overwritten while pending. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/config.h"
#include "test_policy_all.h"
#include "test_policy_export.h"
#include "test_policy_forget.h"

#define NREC 3000
#define NSTREAMS 5 /* ids 1..5; 5 is capturing */
#define NSEQS 20
#define XLO 0x10000 /* the live exchange's range */
#define XHI 0x10100

typedef struct {
    uint64_t x;
} rng;

static uint32_t below(rng *r, uint32_t n)
{
    r->x ^= r->x << 13;
    r->x ^= r->x >> 7;
    r->x ^= r->x << 17;
    return (uint32_t)(r->x % n);
}

static const dls_stream_kind g_kinds[NSTREAMS + 1] = {DLS_STREAM_NON_BLOCKING, DLS_STREAM_NON_BLOCKING,
                                                      DLS_STREAM_BLOCKING,     DLS_STREAM_LEGACY,
                                                      DLS_STREAM_PER_THREAD,   DLS_STREAM_BLOCKING};

static dls_cuda_stream stream(uint64_t id)
{
    dls_cuda_stream s = {.id = id, .handle = 0x1000 + id, .ctx = 0xc0, .ctx_id = 1, .kind = g_kinds[id], .resolved = 1};
    return s;
}

/* A record and how its index clearance is set at replay (the index's version differs per run). */
typedef struct {
    dls_pol_rec r;
    int clear;     /* 0: not cleared; 1: cleared in the current version; 2: in a stale one */
    int drain;     /* the queue is applied after this record */
    uint64_t sync; /* then, when nonzero, the record's thread synchronizes with this stream */
    int done;      /* and the host learns that stream complete up to `back` positions before its latest */
    uint32_t lag;  /* its call began while the `lag` records before it were in flight */
    uint64_t back;
} item;

/* An address: in the exchange, elsewhere, or a size (below 4096: not a pointer). */
static uint64_t address(rng *g)
{
    switch (below(g, 4)) {
    case 0:
        return XLO + 8 * below(g, 32);
    case 1:
        return 0x20000 + 0x100 * below(g, 64);
    case 2:
        return 0x90000 + 0x40 * below(g, 16);
    default:
        return below(g, 4096);
    }
}

static void make_item(rng *g, item *it, uint64_t sid, uint64_t tid, uint32_t corr)
{
    static const uint32_t kinds[] = {DLS_OP_MEMSET, DLS_OP_MEMSET, DLS_OP_MEMSET,    DLS_OP_MEMCPY,
                                     DLS_OP_LAUNCH, DLS_OP_LAUNCH, DLS_OP_HOST_FUNC, DLS_OP_GRAPH_LAUNCH};
    uint64_t words[DLS_POL_WORDS + 3];
    dls_cuda_range ranges[2];
    dls_cuda_op op = {.kind = kinds[below(g, 8)],
                      .flags = DLS_OPF_ASYNC | DLS_OPF_HAS_STREAM,
                      .api = "api",
                      .tid = tid,
                      .correlation_id = corr,
                      .stream = stream(sid)};
    if (op.kind == DLS_OP_MEMSET || op.kind == DLS_OP_MEMCPY) {
        op.nranges = op.kind == DLS_OP_MEMSET ? 1 : 2;
        for (uint32_t i = 0; i < op.nranges; i++) {
            uint64_t a = address(g);
            ranges[i] = (dls_cuda_range){a < 4096 ? 0x40000 + a : a, 0x40, DLS_ACCESS_WRITE};
        }
        op.ranges = ranges;
    } else if (op.kind == DLS_OP_LAUNCH) {
        op.name = below(g, 2) ? "kernel" : NULL;
        op.nwords = below(g, 3) ? 1 + below(g, 3) : DLS_POL_WORDS + 3; /* the wide ones are boxed */
        for (uint32_t i = 0; i < op.nwords; i++)
            words[i] = address(g);
        op.words = words;
        if (!below(g, 20))
            op.flags |= DLS_OPF_CONSERVATIVE;
    }
    memset(it, 0, sizeof *it);
    it->r.e.a.kind = op.kind;
    it->r.tid = tid;
    it->r.stream = op.stream;
    it->r.stream.resolved = below(g, 50) != 0;
    if (dls_pol_is_memory_op(op.kind)) {
        dls_pol_access a;
        dls_pol_access_of_op(&a, &op);
        dls_pol_entry_store(&it->r.e, &a);
    }
    it->clear = below(g, 3);
    it->lag = below(g, 4);
}

/* Runs of one thread on one stream: each record keeps the previous stream and thread mostly. */
static void make_items(uint64_t seed, item *items)
{
    rng g = {seed * 0x9e3779b97f4a7c15ull + 1};
    uint64_t sid = 1, tid = 100;
    for (uint32_t i = 0; i < NREC; i++) {
        if (below(&g, 10) < 2)
            sid = 1 + below(&g, NSTREAMS);
        if (below(&g, 10) < 1)
            tid = tid == 100 ? 101 : 100;
        make_item(&g, &items[i], sid, tid, i + 1);
        items[i].drain = (i + 1) % DLS_POL_QUEUE == 0 || !below(&g, 100);
        items[i].sync = items[i].drain && below(&g, 2) ? 1 + below(&g, NSTREAMS - 1) : 0;
        items[i].done = items[i].sync && below(&g, 2);
        items[i].back = below(&g, 2 * DLS_POL_RING);
    }
}

/* A fresh policy model with one live exchange of [XLO, XHI) and stream 5 capturing. */
static dls_pol_x *fresh_model(void)
{
    dls_test_policy_new_hb(DLS_MODE_CHECK);
    dls_pol_x *p = export_range(XLO, XHI);
    dls_pol_lock();
    dls_cuda_stream s5 = stream(NSTREAMS);
    dls_pol_stream *st = dls_pol_stream_get(&s5, 100);
    assert_non_null(st);
    st->capturing = 1; /* its work is recorded into a graph: never applied */
    dls_pol_unlock();
    return p;
}

/* The record of item i as its EXIT makes it now, its tickets counted from t0: the index's
 * clearance, and the begin of its call (lag records before its own ticket: a later record of a
 * run may begin after more of the other streams' calls returned, and so learn more). */
static dls_pol_rec replayed(const item *items, uint32_t i, uint64_t t0)
{
    const item *it = &items[i];
    dls_pol_rec r = it->r;
    r.begin = 2 * (t0 + i - (it->lag < i ? it->lag : i));
    r.cleared = it->clear ? dls_pol_cleared(dls_pol_index_version() + (it->clear == 2 ? 2 : 0)) : 0;
    return r;
}

/* Item it's host synchronize, if any (lock held): its thread learns what its stream has. */
static void sync_after(const item *it)
{
    dls_pol_stream *st = it->sync ? dls_pol_stream_find(it->sync) : NULL;
    if (!st) /* a stream not seen yet */
        return;
    assert_int_equal(dls_hb_sync_stream(dls_pol_g.hb, it->r.tid, it->sync), 0);
    if (it->done)
        dls_pol_stream_done(st, st->last > it->back ? st->last - it->back : 0, 1); /* the same end in both models */
}

/* Applies the items through the queue, taking the lock (which applies it) where they say. */
static void apply_queued(const item *items)
{
    uint64_t t0 = atomic_load(&dls_pol_queue_tail);
    for (uint32_t i = 0; i < NREC; i++) {
        uint64_t ticket;
        dls_pol_rec *q = dls_pol_defer_claim(&ticket);
        assert_non_null(q);
        *q = replayed(items, i, t0);
        dls_pol_defer_publish(q, ticket);
        if (items[i].drain) {
            dls_pol_lock();
            sync_after(&items[i]);
            dls_pol_unlock();
        }
    }
    dls_pol_lock();
    dls_pol_unlock();
}

/* Applies the items one by one (a full hb operation each). */
static void apply_alone(const item *items)
{
    dls_pol_lock();
    uint64_t t0 = atomic_load(&dls_pol_queue_tail);
    for (uint32_t i = 0; i < NREC; i++) {
        dls_pol_rec r = replayed(items, i, t0);
        dls_pol_apply(&r, dls_pol_end_now());
        sync_after(&items[i]);
    }
    dls_pol_unlock();
}

/* What the test compares: the streams (both ways append to the rings with the same code, so
 * byte for byte), what hb orders each stream's next operation after, and the consumer accesses. */
typedef struct {
    dls_pol_stream s[NSTREAMS + 1];                 /* their rings (s[id].ring NULL) in ring[id] */
    dls_pol_entry ring[NSTREAMS + 1][DLS_POL_RING]; /* the entries written; zero beyond count */
    dls_pol_lost lost[NSTREAMS + 1][DLS_POL_LOST];  /* the lost ranges; zero beyond nlost */
    uint64_t covers[NSTREAMS + 1][NSTREAMS + 1];
    unsigned nuse;
    dls_pol_use use[DLS_POL_USES]; /* after events left out (their pointers differ) */
} view;

/* The model as the comparison sees it. A legacy operation first joins what the blocking streams
 * marked for it, so their marks are compared too. */
static void take_view(view *v, const dls_pol_x *x)
{
    memset(v, 0, sizeof *v);
    dls_pol_lock();
    dls_hb *hb = dls_pol_g.hb;
    assert_int_equal(dls_hb_op(hb, 100, 3, dls_pol_when_now(), NULL), 0);
    for (uint64_t id = 1; id <= NSTREAMS; id++) {
        dls_pol_stream *st = dls_pol_stream_find(id);
        assert_non_null(st);
        v->s[id] = *st;
        v->s[id].ring = NULL;
        if (st->ring)
            memcpy(v->lost[id], dls_pol_ring_lost_ranges(st), st->nlost * sizeof v->lost[id][0]);
        for (unsigned k = 0; k < st->count; k++) { /* what each entry holds (the rest of a history is not cleared) */
            dls_pol_entry *e = &v->ring[id][k];
            dls_pol_entry_copy(e, &st->ring[k]);
            for (unsigned r = e->a.nranges; r < 2; r++)
                e->a.lo[r] = e->a.hi[r] = 0;
            e->a.words = NULL; /* its pointers are into itself */
            e->a.name = e->a.name ? "" : NULL;
        }
        assert_int_equal(dls_hb_capture_stream(hb, 1000 + id, id, DLS_HB_NOW), 0);
        for (uint64_t o = 1; o <= NSTREAMS; o++)
            v->covers[id][o] = dls_hb_event_covers(hb, 1000 + id, o);
    }
    v->nuse = x->nuse;
    for (unsigned i = 0; i < x->nuse; i++) {
        v->use[i] = x->use[i];
        v->use[i].after = NULL;
    }
    dls_pol_unlock();
}

/* The ring and lost ranges of stream sid by brute force: the ring as a list of the last
 * DLS_POL_RING memory entries applied on it, each overwritten one kept while it is pending (above
 * `done`), in a list started afresh when the previous one was complete (its newest position at or
 * below `done`). The stream's lost ranges lie in the list's bounding box in address order, apart,
 * and each range of a pending entry of the list is in one of them at its position or later, and,
 * when the entry may write it, written at its position or later. */
static void expect_ring(const item *items, uint64_t sid, const dls_pol_stream *s, const dls_pol_entry *history,
                        const dls_pol_lost *lost_r, uint64_t seed)
{
    const dls_pol_entry *ring[DLS_POL_RING];
    uint64_t at[DLS_POL_RING];
    uint64_t pos = 0, done = 0, lost = 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int cons = 0;
    unsigned n = 0, nl = 0;
    static dls_pol_lost list[NREC * (DLS_POL_WORDS + 2)];
    for (uint32_t i = 0; i < NREC; i++) {
        const dls_pol_rec *r = &items[i].r;
        int on_sid = r->stream.id == sid && r->stream.resolved;
        pos += on_sid;
        if (on_sid && dls_pol_is_memory_op(r->e.a.kind) && n && dls_pol_entry_same(ring[n - 1], &r->e)) {
            at[n - 1] = pos; /* the same operation as the newest: that entry moves to its position */
        } else if (on_sid && dls_pol_is_memory_op(r->e.a.kind)) {
            if (n == DLS_POL_RING && at[0] > done) {
                if (lost <= done) {
                    lo = UINTPTR_MAX;
                    hi = 0;
                    cons = 0;
                    nl = 0;
                }
                lost = at[0];
                cons |= ring[0]->a.conservative;
                for (unsigned k = 0; k < ring[0]->a.nwords; k++)
                    if (ring[0]->words[k] >= 4096) {
                        lo = ring[0]->words[k] < lo ? ring[0]->words[k] : lo;
                        hi = ring[0]->words[k] + 1 > hi ? ring[0]->words[k] + 1 : hi;
                        list[nl++] = (dls_pol_lost){at[0], at[0], ring[0]->words[k], ring[0]->words[k] + 1};
                    }
                const dls_pol_access *a = &ring[0]->a;
                for (unsigned k = 0; k < a->nranges; k++) {
                    uint64_t wpos = dls_pol_range_may_write(a, k) ? at[0] : 0;
                    lo = a->lo[k] < lo ? a->lo[k] : lo;
                    hi = a->hi[k] > hi ? a->hi[k] : hi;
                    list[nl++] = (dls_pol_lost){at[0], wpos, a->lo[k], a->hi[k]};
                }
            }
            if (n == DLS_POL_RING) {
                memmove(ring, ring + 1, (n - 1) * sizeof *ring);
                memmove(at, at + 1, (n - 1) * sizeof *at);
                n--;
            }
            ring[n] = &r->e;
            at[n++] = pos;
        }
        if (items[i].sync == sid && items[i].done && pos) { /* the stream was seen: the host learns */
            uint64_t d = pos > items[i].back ? pos - items[i].back : 0;
            done = d > done ? d : done;
        }
    }
    if (s->count != n)
        fail_msg("seed %llu, stream %llu: %u ring entries, expected %u", (unsigned long long)seed,
                 (unsigned long long)sid, s->count, n);
    for (unsigned k = 0; k < n; k++) { /* the ring holds the latest, oldest first from its head */
        const dls_pol_entry *e = &history[(s->head + DLS_POL_RING - n + k) % DLS_POL_RING];
        if (e->pos != at[k] || e->a.op != ring[k]->a.op)
            fail_msg("seed %llu, stream %llu: ring entry %u is %llu (op %llu), expected %llu (op %llu)",
                     (unsigned long long)seed, (unsigned long long)sid, k, (unsigned long long)e->pos,
                     (unsigned long long)e->a.op, (unsigned long long)at[k], (unsigned long long)ring[k]->a.op);
    }
    if (s->done != done || s->lost != lost || (lost > done && (s->lost_cons != 0) != cons))
        fail_msg("seed %llu, stream %llu: done %llu, lost %llu cons %llu, expected %llu, %llu cons %d",
                 (unsigned long long)seed, (unsigned long long)sid, (unsigned long long)s->done,
                 (unsigned long long)s->lost, (unsigned long long)s->lost_cons, (unsigned long long)done,
                 (unsigned long long)lost, cons);
    if (lost <= done)
        return;
    for (unsigned k = 0; k < s->nlost; k++)
        if (lost_r[k].pos > done && (lost_r[k].lo < lo || lost_r[k].hi > hi || lost_r[k].pos > lost ||
                                     lost_r[k].wpos > lost_r[k].pos || (k && lost_r[k].lo < lost_r[k - 1].hi)))
            fail_msg("seed %llu, stream %llu: lost range [%#lx, %#lx) at %llu (written %llu) outside [%#lx, %#lx) up "
                     "to %llu, or not after the one before",
                     (unsigned long long)seed, (unsigned long long)sid, (unsigned long)lost_r[k].lo,
                     (unsigned long)lost_r[k].hi, (unsigned long long)lost_r[k].pos, (unsigned long long)lost_r[k].wpos,
                     (unsigned long)lo, (unsigned long)hi, (unsigned long long)lost);
    for (unsigned j = 0; j < nl; j++) {
        unsigned k = 0;
        while (k < s->nlost && !(lost_r[k].lo <= list[j].lo && list[j].hi <= lost_r[k].hi &&
                                 lost_r[k].pos >= list[j].pos && lost_r[k].wpos >= list[j].wpos))
            k++;
        if (list[j].pos > done && k == s->nlost)
            fail_msg("seed %llu, stream %llu: lost [%#lx, %#lx) at %llu (written %llu) is in no lost range",
                     (unsigned long long)seed, (unsigned long long)sid, (unsigned long)list[j].lo,
                     (unsigned long)list[j].hi, (unsigned long long)list[j].pos, (unsigned long long)list[j].wpos);
    }
}

static void queued_runs_build_the_model_one_by_one_application_builds(void **state)
{
    (void)state;
    static item items[NREC];
    static view queued, alone;
    for (uint64_t seed = 1; seed <= NSEQS; seed++) {
        make_items(seed, items);
        dls_pol_x *x = fresh_model();
        apply_queued(items);
        take_view(&queued, x);
        dls_test_policy_forget(1);
        x = fresh_model();
        apply_alone(items);
        take_view(&alone, x);
        dls_test_policy_forget(1);
        for (uint64_t id = 1; id <= NSTREAMS; id++)
            if (memcmp(&queued.s[id], &alone.s[id], sizeof queued.s[id]) != 0 ||
                memcmp(queued.ring[id], alone.ring[id], sizeof queued.ring[id]) != 0 ||
                memcmp(queued.lost[id], alone.lost[id], sizeof queued.lost[id]) != 0 ||
                memcmp(queued.covers[id], alone.covers[id], sizeof queued.covers[id]) != 0)
                fail_msg("seed %llu, stream %llu: the queue's model differs from the one-by-one one (last %llu "
                         "vs %llu, lost %llu vs %llu)",
                         (unsigned long long)seed, (unsigned long long)id, (unsigned long long)queued.s[id].last,
                         (unsigned long long)alone.s[id].last, (unsigned long long)queued.s[id].lost,
                         (unsigned long long)alone.s[id].lost);
        if (queued.nuse != alone.nuse || memcmp(queued.use, alone.use, sizeof queued.use) != 0)
            fail_msg("seed %llu: uses differ (%u vs %u)", (unsigned long long)seed, queued.nuse, alone.nuse);
        assert_int_equal(queued.s[NSTREAMS].last, 0); /* the capturing stream took nothing */
        assert_true(queued.nuse > 0);                 /* the exchange was touched: accesses were compared */
        for (uint64_t id = 1; id < NSTREAMS; id++)
            expect_ring(items, id, &queued.s[id], queued.ring[id], queued.lost[id], seed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queued_runs_build_the_model_one_by_one_application_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
