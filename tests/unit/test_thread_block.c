/* Unit tests of shim/common/thread_block.c: a thread's block is its own, zeroed and aligned, kept
 * through its pointer, freed at the thread's exit with the pointer cleared, and allocated afresh
 * when a later thread-exit handler of the same thread asks again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>

#include "common/thread_block.h"

typedef struct {
    char bytes[3000];
} state;

static dls_thread_block g_block = DLS_THREAD_BLOCK_INIT(sizeof(state));
static __thread state *t_mine;

static state *mine(void)
{
    return t_mine ? t_mine : dls_thread_block_new(&g_block, (void **)&t_mine);
}

/* What a thread saw of its block. */
typedef struct {
    state *block;
    int zeroed, aligned, kept;
} seen;

static void *use(void *arg)
{
    seen *s = arg;
    state *b = mine();
    s->block = b;
    s->aligned = b && (uintptr_t)b % _Alignof(max_align_t) == 0;
    s->zeroed = 1;
    for (size_t i = 0; b && i < sizeof b->bytes; i++)
        s->zeroed &= b->bytes[i] == 0;
    if (b)
        memset(b->bytes, 0x5a, sizeof b->bytes);
    s->kept = b && mine() == b && t_mine == b;
    return NULL;
}

static void each_thread_has_its_own_zeroed_block(void **state_)
{
    (void)state_;
    seen a = {0}, b = {0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, use, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, use, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_non_null(a.block);
    assert_non_null(b.block);
    assert_true(a.zeroed && b.zeroed && a.aligned && b.aligned && a.kept && b.kept);
    seen m = {0};
    use(&m); /* the main thread's */
    assert_true(m.zeroed && m.kept);
    assert_ptr_not_equal(m.block, NULL);
}

/* A thread-exit handler that runs after the block's: the pointer was cleared, and asking again
 * gives a fresh zeroed block. */
static pthread_key_t g_late_key;
static seen g_late;

static void late_exit(void *arg)
{
    (void)arg;
    g_late.kept = t_mine == NULL; /* freed and forgotten */
    state *b = mine();
    g_late.block = b;
    g_late.zeroed = b != NULL;
    for (size_t i = 0; b && i < sizeof b->bytes; i++)
        g_late.zeroed &= b->bytes[i] == 0;
}

static void *use_then_exit_late(void *arg)
{
    (void)arg;
    memset(mine()->bytes, 0x5a, sizeof(state));
    pthread_setspecific(g_late_key, (void *)1); /* a later key: its handler runs after the block's */
    return NULL;
}

static void a_block_is_freed_at_exit_and_a_later_use_gets_a_new_one(void **state_)
{
    (void)state_;
    mine(); /* the block's key exists before the test's keys */
    assert_int_equal(pthread_key_create(&g_late_key, late_exit), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, use_then_exit_late, NULL), 0);
    pthread_join(t, NULL);
    assert_true(g_late.kept);
    assert_non_null(g_late.block);
    assert_true(g_late.zeroed); /* a fresh block, freed by the next round of handlers */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_thread_has_its_own_zeroed_block),
        cmocka_unit_test(a_block_is_freed_at_exit_and_a_later_use_gets_a_new_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
