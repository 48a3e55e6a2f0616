/* The index of watched byte ranges (see index.h): the ranges sorted by lo, each with the highest
 * hi of its prefix, so "does any watched range overlap [a, b)?" is a binary search plus a walk
 * back that stops as soon as no earlier range can reach a.
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
#include "index.h"

#include "access.h"

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
 * operation may touch. */
#define MAX_SPANS ((size_t)1 << 24)

/* The first of the n spans with lo >= key (a + n when none): a binary search that stays within
 * the n spans whatever a writer does to them meanwhile (the reader's answer is then discarded). */
static const span *first_from(const span *a, size_t n, uintptr_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (LOAD(a[mid].lo) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return a + lo;
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

/* 1 when the n words and nranges ranges of an access overlap no span of a (n spans). */
static int none_overlap(const span *a, size_t n, const dls_pol_access *acc)
{
    /* every span lies in [least, most): a word or range outside (a launch's scalars, memory far
     * from every exchange) needs no search */
    uintptr_t least = n ? LOAD(a[0].lo) : 0, most = n ? LOAD(a[n - 1].maxhi) : 0;
    for (uint32_t i = 0; i < acc->nwords; i++)
        if (acc->words[i] >= least && acc->words[i] < most &&
            overlaps(a, n, (uintptr_t)acc->words[i], (uintptr_t)acc->words[i] + 1))
            return 0;
    for (unsigned i = 0; i < acc->nranges; i++)
        if (acc->hi[i] > least && acc->lo[i] < most && overlaps(a, n, acc->lo[i], acc->hi[i]))
            return 0;
    return 1;
}

/* A read section: the sequence counter is read before and after; a change (a writer at work)
 * means the answer is asked again. An odd counter for good means memory ran short: everything may
 * be touched. */
int dls_pol_index_clears(const dls_pol_access *acc, uint64_t *cleared)
{
    for (unsigned tries = 0;; tries++) {
        unsigned before = atomic_load_explicit(&g_index.seq, memory_order_acquire);
        if (before & 1) {
            if (atomic_load_explicit(&g_index.everything, memory_order_relaxed))
                return 0;
            if (tries > 64)
                sched_yield(); /* the writer was preempted */
            continue;
        }
        int clear = 1;
        if (atomic_load_explicit(&g_index.live, memory_order_acquire)) {
            size_t n;
            const span *a = reader_view(&n);
            clear = !acc->conservative && none_overlap(a, n, acc);
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&g_index.seq, memory_order_relaxed) != before)
            continue;
        if (clear)
            *cleared = dls_pol_cleared(before);
        return clear;
    }
}

unsigned dls_pol_index_version(void)
{
    return atomic_load_explicit(&g_index.seq, memory_order_acquire);
}
