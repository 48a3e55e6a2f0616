/* Per-thread blocks (see thread_block.h). */
#include "thread_block.h"
#include "mutex.h"

#include <stdalign.h>
#include <stdlib.h>

/* A block's header: the thread-local pointer that names it, cleared when the block is freed. */
typedef struct {
    alignas(max_align_t) void **mine;
} header;

static dls_mutex g_key_lock = PTHREAD_MUTEX_INITIALIZER;

/* Thread exit: the block is freed and its thread's pointer forgets it. */
static void thread_exit(void *arg)
{
    header *h = arg;
    *h->mine = NULL;
    free(h);
}

/* 1 when b has its key (made now by the first caller). */
static int has_key(dls_thread_block *b)
{
    int state = atomic_load_explicit(&b->state, memory_order_acquire);
    if (state)
        return state > 0;
    dls_mutex_lock(&g_key_lock);
    state = atomic_load_explicit(&b->state, memory_order_relaxed);
    if (!state) {
        state = pthread_key_create(&b->key, thread_exit) == 0 ? 1 : -1;
        atomic_store_explicit(&b->state, state, memory_order_release);
    }
    dls_mutex_unlock(&g_key_lock);
    return state > 0;
}

void *dls_thread_block_new(dls_thread_block *b, void **mine)
{
    if (!has_key(b))
        return NULL;
    header *h = calloc(1, sizeof *h + b->size);
    if (!h)
        return NULL;
    h->mine = mine;
    if (pthread_setspecific(b->key, h) != 0) {
        free(h);
        return NULL;
    }
    *mine = h + 1;
    return h + 1;
}
