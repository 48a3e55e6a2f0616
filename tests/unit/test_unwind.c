/* Tests of the cached-rule stack walk (shim/report/unwind.h): it finds the return addresses
 * backtrace(3) finds, on the main thread and on others, again from its cached rules, truncated at
 * its maximum; and where it cannot walk (a signal handler on an alternate stack) it says so
 * instead of reading outside the thread's stack. */
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/unwind.h"

#define MAX 32

/* A capture of both walks from the same function. */
typedef struct {
    void *walk[MAX], *bt[MAX];
    int nwalk, nbt;
} capture;

__attribute__((noinline)) static void take(capture *c, int max)
{
    c->nwalk = dls_unwind(c->walk, max);
    c->nbt = backtrace(c->bt, MAX);
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
}

/* Nested frames of different sizes, some with locals on the stack, down to take. */
__attribute__((noinline)) static int depth3(capture *c, int max)
{
    volatile char pad[200];
    pad[0] = (char)max;
    take(c, max);
    return pad[0];
}

__attribute__((noinline)) static int depth2(capture *c, int max, int k)
{
    volatile long x[3] = {1, 2, k};
    if (k > 0)
        return depth2(c, max, (int)x[2] - 1) + (int)x[0];
    return depth3(c, max) + (int)x[1];
}

__attribute__((noinline)) static int depth1(capture *c, int max)
{
    return depth2(c, max, 5) + 1;
}

/* Where walk[1] is in backtrace's frames: pc[0] is where take resumes after each call, the two
 * calls differ, and a sanitizer's backtrace(3) interceptor adds its own frame before them. */
static int aligned(const capture *c, int n)
{
    for (int j = 1; j < c->nbt && j < 3; j++)
        if (c->bt[j] == c->walk[1])
            return j;
    fail_msg("the walk's second frame %p is not among backtrace's first three", n > 1 ? c->walk[1] : NULL);
    return -1;
}

/* The walk's frames are backtrace's, from the second on. */
static void assert_same_stack(const capture *c)
{
    assert_true(c->nwalk > 9); /* take, depth3, 6 depth2, depth1, and their callers */
    int j = aligned(c, c->nwalk);
    assert_int_equal(c->nwalk - 1, c->nbt - j);
    for (int i = 1; i < c->nwalk; i++)
        assert_ptr_equal(c->walk[i], c->bt[i - 1 + j]);
}

static void the_walk_finds_backtraces_frames(void **state)
{
    (void)state;
    capture c[2];
    for (int i = 0; i < 2; i++) { /* the second from the rules kept */
        depth1(&c[i], MAX);
        assert_same_stack(&c[i]);
    }
    assert_int_equal(c[0].nwalk, c[1].nwalk);
}

/* A stack walked again is walked from the rules kept; after an unload told by the shim's
 * dlclose, its rules are found anew (the unloaded object's addresses may hold other code). The
 * walks come from one loop, but a compiler may unroll it: each copy's call site may then add the
 * rule of its own return address, and no more. */
static void an_unload_makes_the_walk_find_its_rules_again(void **state)
{
    (void)state;
    capture c;
    unsigned long found[3];
    for (int i = 0; i < 3; i++) {
        unsigned long before = dls_unwind_rules_found_for_tests();
        depth1(&c, MAX);
        found[i] = dls_unwind_rules_found_for_tests() - before;
        assert_same_stack(&c);
        if (i == 1)
            dls_unwind_unloaded();
    }
    assert_true(found[1] <= 1);
    assert_true(found[2] >= 4); /* take, depth3, depth2 (one site), depth1, and their callers */
}

static void the_walk_stops_at_its_maximum(void **state)
{
    (void)state;
    capture c;
    depth1(&c, 4);
    assert_int_equal(c.nwalk, 4);
    int j = aligned(&c, c.nwalk);
    for (int i = 1; i < 4; i++)
        assert_ptr_equal(c.walk[i], c.bt[i - 1 + j]);
}

static void *on_a_thread(void *arg)
{
    depth1(arg, MAX);
    return NULL;
}

static void the_walk_works_on_other_threads(void **state)
{
    (void)state;
    capture c;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, on_a_thread, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_same_stack(&c);
}

static capture g_in_handler;

static void handler(int sig)
{
    (void)sig;
    g_in_handler.nwalk = dls_unwind(g_in_handler.walk, MAX);
}

/* On an alternate signal stack the thread's stack bounds do not hold: the walk declines. */
static void the_walk_declines_on_an_alternate_stack(void **state)
{
    (void)state;
    stack_t alt = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16}, old;
    assert_non_null(alt.ss_sp);
    assert_int_equal(sigaltstack(&alt, &old), 0);
    struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_ONSTACK}, prev;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &prev), 0);
    g_in_handler.nwalk = 0;
    raise(SIGUSR1);
    assert_int_equal(g_in_handler.nwalk, -1);
    sigaction(SIGUSR1, &prev, NULL);
    alt.ss_flags = SS_DISABLE;
    sigaltstack(&alt, NULL);
    free(alt.ss_sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_walk_finds_backtraces_frames),
        cmocka_unit_test(an_unload_makes_the_walk_find_its_rules_again),
        cmocka_unit_test(the_walk_stops_at_its_maximum),
        cmocka_unit_test(the_walk_works_on_other_threads),
        cmocka_unit_test(the_walk_declines_on_an_alternate_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
