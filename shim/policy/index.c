/* The index of watched byte ranges (see pol.h: dls_pol_index_*): the [lo, hi) of every live and
 * released exchange state, sorted by lo, each with the highest hi of its prefix, so "does any
 * watched range overlap [a, b)?" is a binary search plus a walk back that stops as soon as no
 * earlier range can reach a. Cost: O(log n) for ranges spread over the heap, whatever their
 * number (the bounding box it replaces let every operation through once tensors were spread).
 *
 * A removed range becomes a hole (hi = 0, overlapping nothing; the prefix maxima after it are
 * recomputed up to the first one it did not define), and the array is compacted once holes are
 * half of it, so removal costs O(log n) amortized for ranges that do not nest; insertion fills
 * a hole where the new range belongs, or moves the ranges above it.
 *
 * Writers hold dls_pol_g.lock (one writer at a time). Readers take no lock: a sequence counter
 * (odd while a writer changes the array) tells them to retry; every element is read and written
 * with relaxed atomics, and an array replaced by a bigger one is kept (not freed) so a reader
 * still walking it reads valid memory; the arrays grow by doubling, so what is kept is at most
 * the size of the current one. */
#include "pol.h"

#include "../report/warn.h"

#include <sched.h>
#include <stdlib.h>

typedef struct {
    uintptr_t lo, hi;
    uintptr_t maxhi; /* highest hi of entries [0, this one] */
    dls_pol_x *x;
} span;

typedef struct retired {
    struct retired *next;
    span *spans;
} retired;

static struct {
    atomic_uint seq;       /* odd while a writer changes the array */
    _Atomic(span *) spans; /* sorted by lo */
    atomic_size_t n;       /* entries, holes included */
    atomic_size_t live;    /* entries that are not holes */
    size_t cap, holes;     /* writers only */
    retired *old;          /* replaced arrays, kept for readers still walking them */
    atomic_int everything; /* memory ran short once: every operation may touch (conservative);
                            * seq stays odd from then on, and the array is no longer changed */
} g_index;

atomic_int dls_pol_index_watching_flag; /* live || everything: the observer's ENTER gate */

/* Publishes whether anything is watched, after the ranges themselves (lock held). */
static void update_watching(void)
{
    int w = atomic_load_explicit(&g_index.live, memory_order_relaxed) ||
            atomic_load_explicit(&g_index.everything, memory_order_relaxed);
    atomic_store_explicit(&dls_pol_index_watching_flag, w, memory_order_release);
}

#define LOAD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

/* Longest walk back a lock-free reader makes before answering "maybe" (nested ranges). */
#define WALK 64

/* Most spans the index holds (16 Mi, 512 MiB of array): past it, as out of memory, every
 * operation may touch (first_from's unrolled steps cover arrays below it). */
#define MAX_SPANS ((size_t)1 << 24)

/* One step of first_from: p moves up by 2^(k-1) spans when the last of them starts below key;
 * the step for arrays of at least 2^k spans. */
#define LIFT(k) p = LOAD(p[((size_t)1 << ((k)-1)) - 1].lo) < key ? p + ((size_t)1 << ((k)-1)) : p
#define STEP(k)  \
    case k:      \
        LIFT(k); \
        __attribute__((fallthrough));
#define STEPS8(k) STEP(k) STEP(k - 1) STEP(k - 2) STEP(k - 3) STEP(k - 4) STEP(k - 5) STEP(k - 6) STEP(k - 7)

/* The first of the n (<= MAX_SPANS) spans with lo >= key (a + n when none): binary lifting, with
 * no branch on what it reads, so a reader walking an array a writer changes stays within its n
 * spans. The first step tests the first 2^k spans (2^k <= n < 2^(k+1)): when they all start
 * below key, the answer is in [n + 1 - 2^k, n], which leaves k steps of 2^(k-1), ..., 1 either
 * way, unrolled (constant offsets, no loop counter: 4 instructions a step on x86-64). */
__attribute__((always_inline)) static inline const span *first_from(const span *a, size_t n, uintptr_t key)
{
    if (!n)
        return a;
    unsigned k = 63 - (unsigned)__builtin_clzl(n);
    size_t top = (size_t)1 << k;
    const span *p = LOAD(a[top - 1].lo) < key ? a + (n + 1 - top) : a;
    if (!k) /* one span: that was the only step */
        return p;
    switch (k) {
        STEPS8(24)
        STEPS8(16)
        STEPS8(8)
    default: /* k = 0 returned above */
        break;
    }
    return p;
}

/* Index of the first of the n spans with lo >= key (n when none). */
static size_t lower_bound(const span *a, size_t n, uintptr_t key)
{
    return (size_t)(first_from(a, n, key) - a);
}

/* Recomputes the prefix maxima from index i on. */
static void fix_prefix(span *a, size_t n, size_t i)
{
    uintptr_t m = i ? LOAD(a[i - 1].maxhi) : 0;
    for (; i < n; i++) {
        uintptr_t h = LOAD(a[i].hi);
        if (h > m)
            m = h;
        STORE(a[i].maxhi, m);
    }
}

/* Copies n spans element by element (readers may be reading the source). */
static void copy_spans(span *dst, const span *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        STORE(dst[i].lo, LOAD(src[i].lo));
        STORE(dst[i].hi, LOAD(src[i].hi));
        STORE(dst[i].maxhi, LOAD(src[i].maxhi));
        STORE(dst[i].x, LOAD(src[i].x));
    }
}

void dls_pol_index_add(dls_pol_x *x)
{
    if (atomic_load_explicit(&g_index.everything, memory_order_relaxed))
        return;
    size_t n = atomic_load_explicit(&g_index.n, memory_order_relaxed);
    span *a = atomic_load_explicit(&g_index.spans, memory_order_relaxed);
    if (n == g_index.cap) { /* a bigger array, published before the old one is retired */
        size_t cap = g_index.cap ? 2 * g_index.cap : 64;
        span *b = cap <= MAX_SPANS ? malloc(cap * sizeof *b) : NULL;
        retired *r = a ? malloc(sizeof *r) : NULL;
        if (!b || (a && !r)) {
            free(b);
            free(r);
            atomic_store(&g_index.everything, 1);
            atomic_fetch_add_explicit(&g_index.seq, 1, memory_order_release); /* odd for good */
            update_watching();
            dls_warn_once("policy-index",
                          "out of memory for the index of exchanged tensors (or over 16 Mi of them); every CUDA "
                          "operation is now checked against every exchanged tensor (slower, still correct)");
            return;
        }
        copy_spans(b, a, n);
        atomic_store_explicit(&g_index.spans, b, memory_order_release);
        g_index.cap = cap;
        if (r) { /* the old array stays allocated for readers still walking it */
            r->spans = a;
            r->next = g_index.old;
            g_index.old = r;
        }
        a = b;
    }
    size_t i = lower_bound(a, n, x->lo); /* x goes at i, before the ranges starting at or after it */
    int reuse = i < n && !LOAD(a[i].x);  /* a hole at i or just before keeps the order when filled */
    if (!reuse && i > 0 && !LOAD(a[i - 1].x)) {
        i--;
        reuse = 1;
    }
    atomic_fetch_add_explicit(&g_index.seq, 1, memory_order_relaxed); /* odd: changing */
    atomic_thread_fence(memory_order_release);
    if (reuse) {
        g_index.holes--;
    } else {
        for (size_t k = n; k > i; k--) { /* each moved range's prefix now includes x */
            uintptr_t m = LOAD(a[k - 1].maxhi);
            STORE(a[k].lo, LOAD(a[k - 1].lo));
            STORE(a[k].hi, LOAD(a[k - 1].hi));
            STORE(a[k].maxhi, m > x->hi ? m : x->hi);
            STORE(a[k].x, LOAD(a[k - 1].x));
        }
        n++;
    }
    uintptr_t before = i ? LOAD(a[i - 1].maxhi) : 0;
    STORE(a[i].lo, x->lo);
    STORE(a[i].hi, x->hi);
    STORE(a[i].maxhi, before > x->hi ? before : x->hi);
    STORE(a[i].x, x);
    for (size_t k = i + 1; reuse && k < n && LOAD(a[k].maxhi) < x->hi; k++) /* filled hole: raise */
        STORE(a[k].maxhi, x->hi);
    atomic_store_explicit(&g_index.n, n, memory_order_release); /* after the array it counts (reader_view) */
    atomic_fetch_add_explicit(&g_index.live, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_index.seq, 1, memory_order_release); /* even: stable */
    update_watching();
}

/* Drops the holes (seq odd, lock held). */
static void compact(span *a, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (LOAD(a[i].x)) {
            STORE(a[k].lo, LOAD(a[i].lo));
            STORE(a[k].hi, LOAD(a[i].hi));
            STORE(a[k].x, LOAD(a[i].x));
            k++;
        }
    fix_prefix(a, k, 0);
    *n = k;
    g_index.holes = 0;
}

void dls_pol_index_remove(dls_pol_x *x)
{
    if (atomic_load_explicit(&g_index.everything, memory_order_relaxed))
        return;
    size_t n = atomic_load_explicit(&g_index.n, memory_order_relaxed);
    span *a = atomic_load_explicit(&g_index.spans, memory_order_relaxed);
    size_t i = lower_bound(a, n, x->lo);
    while (i < n && LOAD(a[i].x) != x && LOAD(a[i].lo) == x->lo)
        i++;
    if (i == n || LOAD(a[i].x) != x)
        return;
    atomic_fetch_add_explicit(&g_index.seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    STORE(a[i].hi, (uintptr_t)0);
    STORE(a[i].x, (dls_pol_x *)NULL);
    atomic_fetch_sub_explicit(&g_index.live, 1, memory_order_relaxed);
    for (uintptr_t m = i ? LOAD(a[i - 1].maxhi) : 0; i < n; i++) { /* the maxima it defined */
        uintptr_t h = LOAD(a[i].hi) > m ? LOAD(a[i].hi) : m;
        if (h == LOAD(a[i].maxhi))
            break; /* unchanged from here on */
        STORE(a[i].maxhi, h);
        m = h;
    }
    if (++g_index.holes > 32 && 2 * g_index.holes > n) {
        compact(a, &n);
        atomic_store_explicit(&g_index.n, n, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&g_index.seq, 1, memory_order_release);
    update_watching();
}

size_t dls_pol_index_count(void)
{
    return atomic_load_explicit(&g_index.live, memory_order_relaxed);
}

/* A lock-free reader's array and its number of entries: the number first, so that a number
 * stored after a bigger array was published (dls_pol_index_add) is never paired with the smaller
 * array it replaced (a walk past that one's end). */
static inline const span *reader_view(size_t *n)
{
    *n = atomic_load_explicit(&g_index.n, memory_order_acquire);
    return atomic_load_explicit(&g_index.spans, memory_order_acquire);
}

/* 1 when some span may overlap [lo, hi) in a (n spans): certainly when one does, also when the
 * walk back is too long to finish. */
static inline int overlaps(const span *a, size_t n, uintptr_t lo, uintptr_t hi)
{
    size_t i = (size_t)(first_from(a, n, hi) - a); /* spans [0, i) start below hi */
    for (size_t steps = 0; i > 0 && steps < WALK; steps++) {
        i--;
        if (LOAD(a[i].maxhi) <= lo)
            return 0; /* nothing at or before i reaches lo */
        if (LOAD(a[i].hi) > lo)
            return 1;
    }
    return i > 0;
}

/* Lock-free: 1 when some indexed range may overlap [lo, hi). */
static int query(uintptr_t lo, uintptr_t hi)
{
    for (unsigned tries = 0;; tries++) {
        unsigned s = atomic_load_explicit(&g_index.seq, memory_order_acquire);
        if (s & 1) { /* a writer is changing the array (briefly, unless it was preempted) */
            if (atomic_load_explicit(&g_index.everything, memory_order_relaxed))
                return 1;
            if (tries > 64)
                sched_yield();
            continue;
        }
        size_t n;
        const span *a = reader_view(&n);
        int hit = overlaps(a, n, lo, hi);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&g_index.seq, memory_order_relaxed) == s)
            return hit;
    }
}

/* 1 when the index cannot clear anything: memory ran short, or (0) nothing is watched. */
static int trivial(int *answer)
{
    if (atomic_load_explicit(&g_index.everything, memory_order_relaxed))
        return *answer = 1;
    if (!atomic_load_explicit(&g_index.live, memory_order_acquire)) {
        *answer = 0;
        return 1;
    }
    return 0;
}

/* 1 when one of the n words may point into an indexed range. */
static int any_word(const uint64_t *words, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (words[i] < UINTPTR_MAX && query((uintptr_t)words[i], (uintptr_t)words[i] + 1))
            return 1;
    return 0;
}

/* 1 when an operation with these words and ranges may touch an indexed range. */
static int may_touch(int conservative, const uint64_t *words, uint32_t nwords, const dls_cuda_range *ranges,
                     uint32_t nranges)
{
    int answer;
    if (trivial(&answer))
        return answer;
    if (conservative || any_word(words, nwords))
        return 1;
    for (uint32_t i = 0; i < nranges; i++)
        if (query(ranges[i].addr, ranges[i].addr + ranges[i].len))
            return 1;
    return 0;
}

int dls_pol_index_may_touch(const dls_cuda_op *op)
{
    return may_touch(op->kind == DLS_OP_GRAPH_LAUNCH || (op->flags & DLS_OPF_CONSERVATIVE), op->words, op->nwords,
                     op->ranges, op->nranges);
}

/* 1 when an operation with these words and ranges certainly touches nothing indexed in the
 * version it stores in *version: one read section (the sequence counter is read once before and
 * once after; a change means "may touch"), with no retry per range. */
__attribute__((noinline)) static int clears(int conservative, const uint64_t *words, uint32_t nwords,
                                            const dls_cuda_range *ranges, uint32_t nranges, unsigned *version)
{
    unsigned before = atomic_load_explicit(&g_index.seq, memory_order_acquire);
    if (before & 1) /* a writer is changing the array, or everything may be touched */
        return 0;
    if (atomic_load_explicit(&g_index.live, memory_order_acquire)) {
        if (conservative)
            return 0;
        size_t n;
        const span *a = reader_view(&n);
        /* every span lies in [least, most): a word outside (a launch's scalars) needs no search */
        uintptr_t least = n ? LOAD(a[0].lo) : 0, most = n ? LOAD(a[n - 1].maxhi) : 0;
        for (uint32_t i = 0; i < nwords; i++)
            if (words[i] >= least && words[i] < most && overlaps(a, n, (uintptr_t)words[i], (uintptr_t)words[i] + 1))
                return 0;
        for (uint32_t i = 0; i < nranges; i++)
            if (overlaps(a, n, ranges[i].addr, ranges[i].addr + ranges[i].len))
                return 0;
    }
    atomic_thread_fence(memory_order_acquire);
    *version = before;
    return atomic_load_explicit(&g_index.seq, memory_order_relaxed) == before;
}

int dls_pol_index_clears(const dls_cuda_op *op, unsigned *version)
{
    return clears(op->kind == DLS_OP_GRAPH_LAUNCH || (op->flags & DLS_OPF_CONSERVATIVE), op->words, op->nwords,
                  op->ranges, op->nranges, version);
}

/* clears for work w, answering in *cleared (dls_pol_cleared of the version) when it clears.
 * (Not inlined: the leaf below reaches it by a tail call, and needs no frame of its own.) */
__attribute__((noinline)) static int clears_work_by_search(const dls_cuda_work *w, int conservative, uint64_t *cleared)
{
    unsigned version;
    if (!clears(conservative, w->words, w->nwords, w->ranges, w->nranges, &version))
        return 0;
    *cleared = dls_pol_cleared(version);
    return 1;
}

/* A copy or set's one range is asked in one leaf that answers the common case, no span before
 * the range reaches it: no walk for an empty index (it finds no span below hi), no check of
 * `everything` (seq is odd for good then); any other case is clears's. (The fence stays in a
 * function that is not inlined: GCC's ThreadSanitizer build rejects an inlined one.) */
__attribute__((noinline)) int dls_pol_index_clears_work(const dls_cuda_work *w, uint64_t *cleared)
{
    int conservative = (w->flags & DLS_OPF_CONSERVATIVE) != 0;
    if (conservative || w->nwords || w->nranges != 1)
        return clears_work_by_search(w, conservative, cleared);
    uintptr_t lo = w->ranges[0].addr, hi = lo + w->ranges[0].len;
    unsigned before = atomic_load_explicit(&g_index.seq, memory_order_acquire);
    if (before & 1)
        return 0;
    size_t n;
    const span *a = reader_view(&n);
    const span *above = first_from(a, n, hi);     /* the spans before it start below hi */
    if (above != a && LOAD(above[-1].maxhi) > lo) /* one of them reaches lo: overlap or nesting */
        return clears_work_by_search(w, 0, cleared);
    atomic_thread_fence(memory_order_acquire);
    *cleared = dls_pol_cleared(before);
    return atomic_load_explicit(&g_index.seq, memory_order_relaxed) == before;
}

unsigned dls_pol_index_version(void)
{
    return atomic_load_explicit(&g_index.seq, memory_order_acquire);
}

int dls_pol_index_may_touch_entry(const dls_pol_entry *e)
{
    int answer;
    if (trivial(&answer))
        return answer;
    if (e->conservative || any_word(e->words, e->nwords))
        return 1;
    for (unsigned i = 0; i < e->nranges; i++)
        if (query(e->lo[i], e->hi[i]))
            return 1;
    return 0;
}
