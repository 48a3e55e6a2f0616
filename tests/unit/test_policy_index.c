/* Unit tests of the policy's index of watched ranges (shim/policy/index.c): exact answers for
 * ranges spread over the address space (words, copy ranges, their edges), nested and
 * overlapping ranges, removal (holes and compaction), growth, readers running while a writer
 * adds and removes, and random ranges and questions against a linear scan at every array size
 * around the powers of two the search steps by. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>

#include "test_policy_all.h"

#define SPREAD 5000
#define STEP 0x1000

static dls_pol_x g_x[SPREAD];

/* 1 when a launch whose only word is w may touch a watched range. */
static int word(uintptr_t w)
{
    uint64_t words[1] = {w};
    dls_cuda_op op = {.kind = DLS_OP_LAUNCH, .words = words, .nwords = 1};
    return test_may_touch_op(&op);
}

/* 1 when a set of [addr, addr + len) may touch a watched range. */
static int range(uintptr_t addr, size_t len)
{
    dls_cuda_range r = {.addr = addr, .len = len, .access = DLS_ACCESS_WRITE};
    dls_cuda_op op = {.kind = DLS_OP_MEMSET, .ranges = &r, .nranges = 1};
    return test_may_touch_op(&op);
}

/* 1 when the index clears a set of [addr, addr + len) given as an op. */
static int cleared_op(uintptr_t addr, size_t len)
{
    dls_cuda_range r = {.addr = addr, .len = len, .access = DLS_ACCESS_WRITE};
    dls_cuda_op op = {.kind = DLS_OP_MEMSET, .ranges = &r, .nranges = 1};
    uint64_t v;
    return test_clears_op(&op, &v);
}

/* 1 when the index clears a launch whose words are a small scalar and w. */
static int cleared_word(uintptr_t w)
{
    uint64_t words[2] = {16, w};
    dls_cuda_op op = {.kind = DLS_OP_LAUNCH, .words = words, .nwords = 2};
    uint64_t v;
    return test_clears_op(&op, &v);
}

/* The same, given as an op and as a work of the work lane (no writer running: both answers must
 * agree, and be the opposite of range()'s). */
static int cleared(uintptr_t addr, size_t len)
{
    dls_cuda_work w = {.kind = DLS_OP_MEMSET, .ranges = {{.addr = addr, .len = len}}, .nranges = 1};
    uint64_t note = 0;
    int a = cleared_op(addr, len);
    assert_int_equal(a, test_clears_work(&w, &note));
    if (a)
        assert_int_equal(note, dls_pol_cleared(dls_pol_index_version()));
    assert_int_equal(a, !range(addr, len));
    return a;
}

static void add(dls_pol_x *x, uintptr_t lo, uintptr_t hi)
{
    x->lo = lo;
    x->hi = hi;
    dls_pol_index_add(x);
}

static void spread_ranges_answer_exactly_and_removal_leaves_no_trace(void **state)
{
    (void)state;
    assert_int_equal(word(0x10000), 0);
    /* Every other page from 0x10000 holds a 256-byte range, added out of order. */
    for (size_t k = 0; k < SPREAD; k++) {
        size_t i = (k * 7919) % SPREAD;
        add(&g_x[i], 0x10000 + 2 * STEP * i, 0x10000 + 2 * STEP * i + 256);
    }
    assert_int_equal(dls_pol_index_count(), SPREAD);
    for (size_t i = 0; i < SPREAD; i += 97) {
        uintptr_t lo = 0x10000 + 2 * STEP * i;
        assert_int_equal(word(lo), 1);
        assert_int_equal(word(lo + 255), 1);
        assert_int_equal(cleared(lo + 128, 1), 0);
        assert_int_equal(cleared(lo + 256, STEP), 1);
        assert_int_equal(cleared(lo - 16, 17), 0);
        assert_int_equal(word(lo + 256), 0);
        assert_int_equal(word(lo - 1), 0);
        assert_int_equal(word(lo + STEP), 0); /* the free page between two ranges */
        assert_int_equal(range(lo + 256, STEP), 0);
        assert_int_equal(range(lo + 255, 1), 1);
        assert_int_equal(range(lo - 16, 17), 1);
        assert_int_equal(range(lo - 16, 16), 0);
    }
    for (size_t i = 0; i < SPREAD; i++)
        if (i % 3)
            dls_pol_index_remove(&g_x[i]);
    for (size_t i = 0; i < SPREAD; i += 7)
        assert_int_equal(word(0x10000 + 2 * STEP * i + 8), i % 3 == 0);
    for (size_t i = 0; i < SPREAD; i += 3)
        dls_pol_index_remove(&g_x[i]);
    assert_int_equal(dls_pol_index_count(), 0);
    assert_int_equal(word(0x10000), 0);
}

static void nested_and_overlapping_ranges_are_found_behind_a_long_one(void **state)
{
    (void)state;
    dls_pol_x whole, views[100];
    add(&whole, 0x100000, 0x200000); /* a buffer and 100 views of its first half */
    for (int i = 0; i < 100; i++)
        add(&views[i], 0x100000 + (uintptr_t)i * 0x100, 0x100000 + (uintptr_t)i * 0x100 + 0x80);
    assert_int_equal(word(0x1ff000), 1); /* only the whole buffer covers it, 100 ranges back */
    assert_int_equal(range(0x1ffff0, 0x100), 1);
    assert_int_equal(word(0x200000), 0);
    dls_pol_index_remove(&whole);
    assert_int_equal(word(0x1ff000), 0);
    assert_int_equal(word(0x100040), 1);
    assert_int_equal(word(0x100090), 0);
    for (int i = 0; i < 100; i++)
        dls_pol_index_remove(&views[i]);
    assert_int_equal(dls_pol_index_count(), 0);
}

static void a_range_added_into_a_hole_reaches_past_its_neighbours(void **state)
{
    (void)state;
    dls_pol_x r[40], wide;
    for (int i = 0; i < 40; i++)
        add(&r[i], 0x300000 + (uintptr_t)i * 0x1000, 0x300000 + (uintptr_t)i * 0x1000 + 0x10);
    dls_pol_index_remove(&r[10]);
    assert_int_equal(word(0x30a000), 0);
    add(&wide, 0x30a000, 0x320000); /* fills the hole, covers the ranges after it */
    assert_int_equal(word(0x31f800), 1);
    assert_int_equal(word(0x30b800), 1);
    assert_int_equal(word(0x320800), 0); /* past it, between two small ranges */
    dls_pol_index_remove(&wide);
    assert_int_equal(word(0x31f800), 0);
    assert_int_equal(word(0x30b008), 1);
    for (int i = 0; i < 40; i++)
        dls_pol_index_remove(&r[i]);
    assert_int_equal(dls_pol_index_count(), 0);
}

static void graph_launches_and_conservative_operations_may_touch_anything_watched(void **state)
{
    (void)state;
    dls_cuda_op graph = {.kind = DLS_OP_GRAPH_LAUNCH}, opaque = {.kind = DLS_OP_LAUNCH, .flags = DLS_OPF_CONSERVATIVE};
    assert_int_equal(test_may_touch_op(&graph), 0); /* nothing watched */
    dls_pol_x x;
    add(&x, 0x5000, 0x6000);
    assert_int_equal(test_may_touch_op(&graph), 1);
    assert_int_equal(test_may_touch_op(&opaque), 1);
    dls_pol_index_remove(&x);
}

static uint64_t g_rand = 0x9e3779b97f4a7c15u;

static uint64_t next_rand(void)
{
    g_rand ^= g_rand << 13;
    g_rand ^= g_rand >> 7;
    g_rand ^= g_rand << 17;
    return g_rand;
}

/* 1 when one of the n live ranges (those with x set) overlaps [lo, hi): the linear scan. */
static int scan(const dls_pol_x *xs, const int *in, size_t n, uintptr_t lo, uintptr_t hi)
{
    for (size_t i = 0; i < n; i++)
        if (in[i] && xs[i].lo < hi && lo < xs[i].hi)
            return 1;
    return 0;
}

/* Each of n random ranges (0x100 apart on average, up to 0x300 long: short walks back), some
 * removed again, then random questions: the index's answers equal the scan's. */
static void check_random(size_t n)
{
    static dls_pol_x xs[SPREAD];
    static int in[SPREAD];
    uintptr_t base = 0x40000000, span = 0x100 * (uintptr_t)n + 0x1000;
    for (size_t i = 0; i < n; i++) {
        uintptr_t lo = base + next_rand() % span;
        add(&xs[i], lo, lo + 1 + next_rand() % 0x300);
        in[i] = 1;
    }
    for (size_t i = 0; i < n; i++)
        if (next_rand() % 5 == 0) {
            dls_pol_index_remove(&xs[i]);
            in[i] = 0;
        }
    for (int q = 0; q < 400; q++) {
        uintptr_t lo = base - 0x800 + next_rand() % (span + 0x1000), len = 1 + next_rand() % 0x200;
        int expect = scan(xs, in, n, lo, lo + len), expect_word = scan(xs, in, n, lo, lo + 1);
        if (range(lo, len) != expect || cleared(lo, len) == expect || word(lo) != expect_word ||
            cleared_word(lo) == expect_word)
            fail_msg("%zu ranges: [%#lx, +%#lx) answered wrong (a scan says %d)", n, (unsigned long)lo,
                     (unsigned long)len, expect);
    }
    for (size_t i = 0; i < n; i++)
        if (in[i])
            dls_pol_index_remove(&xs[i]);
    assert_int_equal(dls_pol_index_count(), 0);
}

static void random_ranges_answer_as_a_linear_scan_at_every_size(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 70; n++)
        check_random(n);
    for (size_t k = 7; k <= 12; k++) /* around each power of two: one step more or fewer */
        for (size_t n = ((size_t)1 << k) - 1; n <= ((size_t)1 << k) + 1; n++)
            check_random(n);
    check_random(SPREAD);
}

static atomic_int g_stop;

/* A reader: the permanent range is always found (a word, a set asked as an op and as a work),
 * a page no range ever covers never is. */
static void *reader(void *arg)
{
    (void)arg;
    long wrong = 0;
    while (!atomic_load(&g_stop)) {
        wrong += word(0x7000010) != 1;
        wrong += word(0x7ff0000) != 0;
        wrong += cleared_op(0x7000080, 4) != 0;
        dls_cuda_work w = {.kind = DLS_OP_MEMSET, .ranges = {{.addr = 0x6ffff00, .len = 0x101}}, .nranges = 1};
        uint64_t note;
        wrong += test_clears_work(&w, &note) != 0; /* ends in the permanent range */
    }
    return (void *)wrong;
}

static void readers_see_a_consistent_index_while_it_changes(void **state)
{
    (void)state;
    dls_pol_x fixed;
    add(&fixed, 0x7000000, 0x7000100);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, reader, NULL), 0);
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < SPREAD; i++)
            add(&g_x[i], 0x1000000 + 0x100 * i, 0x1000000 + 0x100 * i + 0x80);
        for (size_t i = 0; i < SPREAD; i++)
            dls_pol_index_remove(&g_x[i]);
    }
    atomic_store(&g_stop, 1);
    void *wrong;
    pthread_join(t, &wrong);
    assert_int_equal((long)wrong, 0);
    dls_pol_index_remove(&fixed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spread_ranges_answer_exactly_and_removal_leaves_no_trace),
        cmocka_unit_test(nested_and_overlapping_ranges_are_found_behind_a_long_one),
        cmocka_unit_test(a_range_added_into_a_hole_reaches_past_its_neighbours),
        cmocka_unit_test(graph_launches_and_conservative_operations_may_touch_anything_watched),
        cmocka_unit_test(random_ranges_answer_as_a_linear_scan_at_every_size),
        cmocka_unit_test(readers_see_a_consistent_index_while_it_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
