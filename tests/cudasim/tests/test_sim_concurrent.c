/* test_sim_concurrent.c: the legacy-stream rules hold when threads enqueue at the same time.
 *
 * Six threads, with the simulator's jitter on (calls overlap and return in every order), each
 * enqueue host functions on the legacy stream, the per-thread stream, a blocking and a
 * non-blocking stream of their own, in random order. Each host function notes when it started
 * and ended (it sleeps a random moment); the host notes when each enqueuing call began and
 * returned. CUDA's rule, checked on every pair of operations whose calls the host ordered (one
 * returned before the other began): an operation on the legacy stream starts after the earlier
 * operations of every blocking and per-thread stream ended, and one on a blocking or per-thread
 * stream after the earlier legacy operations ended; an operation starts after the earlier
 * operations of its own stream ended. Non-blocking streams take no part: the test also checks
 * that some operation of a non-blocking stream ran while legacy work was running (they are not
 * made to wait). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "cudasim.h"
#include "simtest.h"

#define THREADS 6
#define OPS 60 /* per thread */

enum { LEGACY, PER_THREAD, BLOCKING, NON_BLOCKING };

typedef struct {
    int kind;
    uintptr_t stream; /* the stream's identity: a handle, or the thread for per-thread streams */
    unsigned sleep_us;
    int64_t call_begin, call_end; /* host clock around the enqueuing call */
    _Atomic int64_t start, end;   /* host clock in the host function */
} op;

static op g_ops[THREADS][OPS];
static CUcontext g_ctx;
static pthread_barrier_t g_barrier;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void CUDA_CB body(void *arg)
{
    op *o = arg;
    atomic_store(&o->start, now_ns());
    struct timespec ts = {0, (long)o->sleep_us * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&o->end, now_ns());
}

static void *enqueuer(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1) | 1;
    assert_int_equal(cuCtxSetCurrent(g_ctx), CUDA_SUCCESS);
    CUstream blocking, nonblocking;
    assert_int_equal(cuStreamCreate(&blocking, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < OPS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        op *o = &g_ops[t][i];
        o->kind = (int)(x % 4);
        o->sleep_us = (unsigned)(x >> 8) % 60;
        CUstream s = o->kind == LEGACY       ? CU_STREAM_LEGACY
                     : o->kind == PER_THREAD ? CU_STREAM_PER_THREAD
                     : o->kind == BLOCKING   ? blocking
                                             : nonblocking;
        o->stream = o->kind == LEGACY ? 1 : o->kind == PER_THREAD ? 0x100 + (uintptr_t)t : (uintptr_t)s;
        o->call_begin = now_ns();
        assert_int_equal(cuLaunchHostFunc(s, body, o), CUDA_SUCCESS);
        o->call_end = now_ns();
    }
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    cuStreamDestroy(blocking);
    cuStreamDestroy(nonblocking);
    return NULL;
}

static int joins_legacy(int kind)
{
    return kind == BLOCKING || kind == PER_THREAD;
}

/* 1 when CUDA orders b after a, given that a's call returned before b's began. */
static int ordered(const op *a, const op *b)
{
    if (a->stream == b->stream)
        return 1;
    return (a->kind == LEGACY && joins_legacy(b->kind)) || (joins_legacy(a->kind) && b->kind == LEGACY);
}

static void legacy_rules_hold_under_concurrent_enqueues(void **state)
{
    (void)state;
    g_ctx = simtest_init();
    cudasim_set_jitter(20);
    pthread_barrier_init(&g_barrier, NULL, THREADS);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, enqueuer, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    cudasim_set_jitter(0);
    long pairs = 0, overlapped = 0;
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < OPS; i++)
            for (int u = 0; u < THREADS; u++)
                for (int j = 0; j < OPS; j++) {
                    const op *a = &g_ops[t][i], *b = &g_ops[u][j];
                    if (a == b || a->call_end >= b->call_begin || !ordered(a, b))
                        continue;
                    pairs++;
                    if (atomic_load(&b->start) < atomic_load(&a->end))
                        fail_msg("thread %d op %d (kind %d) started before thread %d op %d (kind %d) ended, though "
                                 "its call began after that one returned",
                                 u, j, b->kind, t, i, a->kind);
                }
    /* Non-blocking work ran beside legacy work: the rule did not make it wait. */
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < OPS; i++)
            for (int u = 0; u < THREADS && g_ops[t][i].kind == NON_BLOCKING; u++)
                for (int j = 0; j < OPS; j++)
                    if (g_ops[u][j].kind == LEGACY && g_ops[t][i].start < g_ops[u][j].end &&
                        g_ops[u][j].start < g_ops[t][i].end)
                        overlapped++;
    print_message("%ld host-ordered pairs the rules order, all in order; %ld overlaps of non-blocking and legacy "
                  "work\n",
                  pairs, overlapped);
    assert_true(pairs > 1000);
    assert_true(overlapped > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(legacy_rules_hold_under_concurrent_enqueues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
