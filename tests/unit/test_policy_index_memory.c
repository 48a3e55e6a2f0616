/* The index of watched ranges when its array cannot grow (shim/policy/index.c): the binary is
 * linked with malloc wrapped (and dls_warn_once, to count warnings). The growth that fails must
 * leave the index answering "may touch" to every question, whichever way it is asked, with one
 * warning, and insertions and removals after it must change none of that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "test_policy_all.h"

void *__real_malloc(size_t n);

static int g_fail, g_warnings;

void *__wrap_malloc(size_t n)
{
    return g_fail ? NULL : __real_malloc(n);
}

int __wrap_dls_warn_once(const char *key, const char *fmt, ...)
{
    (void)key;
    (void)fmt;
    g_warnings++;
    return 1;
}

#define FIRST 64 /* the ranges the index's first array holds */
#define BASE 0x10000000
#define FAR 0x90000000 /* no range comes near it */

/* 1 when the index clears a set of [addr, addr + 0x100), asked as a work and as an op (both
 * answers must agree). */
static int cleared(uintptr_t addr)
{
    dls_cuda_work w = {.kind = DLS_OP_MEMSET, .ranges = {{.addr = addr, .len = 0x100}}, .nranges = 1};
    dls_cuda_range r = {.addr = addr, .len = 0x100, .access = DLS_ACCESS_WRITE};
    dls_cuda_op op = {.kind = DLS_OP_MEMSET, .ranges = &r, .nranges = 1};
    uint64_t note;
    uint64_t v;
    int a = test_clears_work(&w, &note);
    assert_int_equal(a, test_clears_op(&op, &v));
    return a;
}

/* 1 when a launch whose only word is w may touch a watched range, asked as the drain does
 * (test_may_touch_op); checked against the ENTER's question for the same launch. */
static int may_touch_word(uintptr_t w)
{
    uint64_t words[1] = {w};
    dls_cuda_op op = {.kind = DLS_OP_LAUNCH, .words = words, .nwords = 1};
    uint64_t v;
    int touch = test_may_touch_op(&op);
    assert_int_equal(touch, !test_clears_op(&op, &v));
    return touch;
}

static void add(dls_pol_x *x, uintptr_t lo)
{
    x->lo = lo;
    x->hi = lo + 0x100;
    dls_pol_index_add(x);
}

static void an_index_that_cannot_grow_lets_every_operation_through(void **state)
{
    (void)state;
    static dls_pol_x xs[FIRST + 2];
    for (size_t i = 0; i < FIRST; i++)
        add(&xs[i], BASE + i * 0x1000);
    assert_int_equal(cleared(FAR), 1);
    assert_int_equal(may_touch_word(FAR), 0);
    assert_int_equal(may_touch_word(BASE + 0x10), 1);
    assert_int_equal(dls_pol_index_version() & 1, 0);

    g_fail = 1; /* the next range needs a bigger array */
    add(&xs[FIRST], BASE + FIRST * 0x1000);
    g_fail = 0;
    assert_int_equal(g_warnings, 1);
    unsigned version = dls_pol_index_version();
    assert_int_equal(version & 1, 1); /* odd for good: no reader clears anything */
    assert_int_equal(cleared(FAR), 0);
    assert_int_equal(may_touch_word(FAR), 1);
    assert_int_equal(may_touch_word(BASE + FIRST * 0x1000), 1); /* the range that was not added */
    assert_int_equal(atomic_load(dls_pol_index_watching()), 1);

    for (size_t i = 0; i < FIRST; i++) /* removals and insertions change nothing any more */
        dls_pol_index_remove(&xs[i]);
    add(&xs[FIRST + 1], BASE - 0x1000);
    assert_int_equal(dls_pol_index_version(), version);
    assert_int_equal(cleared(FAR), 0);
    assert_int_equal(cleared(BASE + 0x10), 0);
    assert_int_equal(may_touch_word(FAR), 1);
    assert_int_equal(atomic_load(dls_pol_index_watching()), 1);
    assert_int_equal(g_warnings, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_index_that_cannot_grow_lets_every_operation_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
