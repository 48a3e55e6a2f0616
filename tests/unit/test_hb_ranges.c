/* Unit tests of the happens-before engine's building blocks: the interval treap of tracked
 * ranges (against a brute-force list, with random adds, removes and overlap queries), its
 * stale-handle checks and frontier storage, and the id-to-index hash map (against an array). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hb/hb_map.h"
#include "hb/hb_ranges.h"

#define N 600

typedef struct {
    uint64_t handle, lo, hi;
    int live;
} brute;

typedef struct {
    uint64_t seen[N];
    int n;
    uint64_t last_lo;
    int ordered;
} hits;

static int collect(void *ctx, uint64_t handle, dls_hb_rnode *n)
{
    hits *h = ctx;
    if (h->n && n->lo < h->last_lo)
        h->ordered = 0;
    h->last_lo = n->lo;
    h->seen[h->n++] = handle;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void treap_matches_brute_force_overlaps(void **state)
{
    (void)state;
    static brute b[N];
    dls_hb_ranges r;
    dls_hb_ranges_init(&r);
    uint64_t x = 88172645463325252ULL;
    int nb = 0;
    for (int step = 0; step < 20000; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x % 3 != 0 && nb < N) {
            uint64_t lo = x % 5000, hi = lo + 1 + (x >> 20) % 300;
            assert_int_equal(dls_hb_ranges_add(&r, lo, hi, &b[nb].handle), 0);
            b[nb].lo = lo, b[nb].hi = hi, b[nb].live = 1;
            nb++;
        } else if (nb) {
            int i = (int)((x >> 8) % (uint64_t)nb);
            assert_int_equal(dls_hb_ranges_remove(&r, b[i].handle), b[i].live ? 0 : ENOENT);
            if (b[i].live)
                assert_null(dls_hb_ranges_get(&r, b[i].handle));
            b[i] = b[--nb];
        }
        uint64_t qlo = (x >> 16) % 5400, qhi = qlo + (x >> 40) % 200;
        hits h = {.ordered = 1};
        dls_hb_ranges_overlap(&r, qlo, qhi, collect, &h);
        uint64_t want[N];
        int nw = 0;
        for (int i = 0; i < nb; i++)
            if (b[i].lo < qhi && qlo < b[i].hi && qlo < qhi)
                want[nw++] = b[i].handle;
        assert_int_equal(h.n, nw);
        assert_true(h.ordered);
        qsort(h.seen, (size_t)h.n, sizeof h.seen[0], cmp_u64);
        qsort(want, (size_t)nw, sizeof want[0], cmp_u64);
        assert_memory_equal(h.seen, want, (size_t)nw * sizeof want[0]);
    }
    assert_int_equal(r.live, nb);
    dls_hb_ranges_free(&r);
}

static void handles_are_never_revived(void **state)
{
    (void)state;
    dls_hb_ranges r;
    dls_hb_ranges_init(&r);
    uint64_t a, b;
    assert_int_equal(dls_hb_ranges_add(&r, 5, 5, &a), EINVAL);
    assert_int_equal(dls_hb_ranges_add(&r, 0, 8, &a), 0);
    assert_non_null(dls_hb_ranges_get(&r, a));
    assert_int_equal(dls_hb_ranges_remove(&r, a), 0);
    assert_int_equal(dls_hb_ranges_add(&r, 0, 8, &b), 0);
    assert_int_equal((uint32_t)a, (uint32_t)b); /* node reused ... */
    assert_true(a != b);                        /* ... handle not */
    assert_null(dls_hb_ranges_get(&r, a));
    assert_int_equal(dls_hb_ranges_remove(&r, a), ENOENT);
    assert_null(dls_hb_ranges_get(&r, b + 12345));
    dls_hb_ranges_free(&r);
}

static void frontier_storage_grows_past_inline(void **state)
{
    (void)state;
    dls_hb_ranges r;
    dls_hb_ranges_init(&r);
    uint64_t h;
    assert_int_equal(dls_hb_ranges_add(&r, 0, 8, &h), 0);
    dls_hb_rnode *n = dls_hb_ranges_get(&r, h);
    size_t base = dls_hb_ranges_bytes(&r);
    for (uint32_t i = 0; i < 9; i++) {
        assert_int_equal(dls_hb_rnode_reserve(&r, n, n->nacc + 1), 0);
        dls_hb_rnode_acc(n)[n->nacc++] = (dls_hb_acc){.op = i, .pos = i + 1, .slot = i};
    }
    assert_true(dls_hb_ranges_bytes(&r) > base);
    for (uint32_t i = 0; i < 9; i++)
        assert_int_equal(dls_hb_rnode_acc(n)[i].op, i);
    assert_int_equal(dls_hb_ranges_remove(&r, h), 0);
    assert_int_equal(dls_hb_ranges_bytes(&r), base);
    dls_hb_ranges_free(&r);
}

static void map_matches_array(void **state)
{
    (void)state;
    enum { K = 3000 };
    static uint32_t want[K];
    for (int i = 0; i < K; i++)
        want[i] = DLS_HB_NONE;
    dls_hb_map m = {0};
    assert_int_equal(dls_hb_map_get(&m, 1), DLS_HB_NONE);
    uint64_t x = 0x2545F4914F6CDD1DULL;
    for (int step = 0; step < 100000; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t k = (uint32_t)(x % K);
        uint64_t key = (uint64_t)k * 0x100000001ULL; /* keys colliding in their low bits */
        if (x & 0x300000) {
            assert_int_equal(dls_hb_map_put(&m, key, (uint32_t)step), 0);
            want[k] = (uint32_t)step;
        } else {
            dls_hb_map_del(&m, key);
            want[k] = DLS_HB_NONE;
        }
        uint32_t probe = (uint32_t)((x >> 32) % K);
        assert_int_equal(dls_hb_map_get(&m, (uint64_t)probe * 0x100000001ULL), want[probe]);
    }
    uint32_t live = 0;
    for (int i = 0; i < K; i++) {
        assert_int_equal(dls_hb_map_get(&m, (uint64_t)i * 0x100000001ULL), want[i]);
        live += want[i] != DLS_HB_NONE;
    }
    assert_int_equal(m.n, live);
    dls_hb_map_free(&m);
    assert_int_equal(dls_hb_map_get(&m, 0), DLS_HB_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(treap_matches_brute_force_overlaps),
        cmocka_unit_test(handles_are_never_revived),
        cmocka_unit_test(frontier_storage_grows_past_inline),
        cmocka_unit_test(map_matches_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
