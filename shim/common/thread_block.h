/* Per-thread state too large for a thread-local object: allocated at a thread's first use, freed
 * when the thread exits.
 *
 * Every byte of the shim's thread-local objects is zeroed at every thread creation in the process
 * (glibc initializes a new thread's static TLS whole), whether the thread ever calls CUDA or not.
 * State of kilobytes that few threads use (a cache, report buffers) lives in a block instead, and
 * costs one thread-local pointer, which the caller keeps:
 *
 *   static dls_thread_block g_block = DLS_THREAD_BLOCK_INIT(sizeof(my_state));
 *   static __thread my_state *t_mine;
 *   my_state *s = t_mine ? t_mine : dls_thread_block_new(&g_block, (void **)&t_mine);
 *
 * At the thread's exit its block is freed and the pointer set back to NULL: a use in a later
 * thread-exit handler of the same thread allocates a fresh block, freed by the next round of
 * handlers (the last round's, if any, is not freed). */
#ifndef DLS_THREAD_BLOCK_H
#define DLS_THREAD_BLOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct {
    size_t size;
    atomic_int state; /* 0: no key yet, 1: key made, -1: no key could be made */
    pthread_key_t key;
} dls_thread_block;

#define DLS_THREAD_BLOCK_INIT(bytes) \
    {                                \
        .size = (bytes)              \
    }

/* Allocates the calling thread's block of b (b->size bytes, zeroed, aligned for any object),
 * stores it in *mine, the caller's thread-local pointer, and returns it. NULL when out of memory
 * or out of thread keys (nothing stored: the caller goes without, and may ask again). Takes a
 * lock only the first time any thread asks for b. */
void *dls_thread_block_new(dls_thread_block *b, void **mine);

#endif
