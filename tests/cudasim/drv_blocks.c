/* drv_blocks.c: the memory behind allocations: blocks from the C heap, and the blocks of freed
 * allocations, held back until no operation enqueued before the free can touch them.
 *
 * cuMemFree waits for its context's work, but an operation of another context (a peer copy, a
 * copy into page-locked memory) may still be queued on the freed memory; such a program is wrong
 * in CUDA, but the simulator must not touch memory it gave back to the C heap. So a freed block
 * keeps the place of the last operation enqueued at its free, and is neither handed out again nor
 * given back to the heap until every operation up to that place has completed. Once clean, it is
 * handed out again to the next allocation of its size (the most recently freed first), as real
 * allocators reuse addresses; clean blocks beyond QUARANTINE_BLOCKS or QUARANTINE_BYTES go back
 * to the heap, the oldest first.
 *
 * Page-locked host blocks are whole pages of a memory file mapped twice: the program's view,
 * which it reads and writes and dlsync may protect from the CPU, and the device's view, through
 * which stream work writes them, as a GPU writes pinned memory by DMA without the CPU's page
 * tables (dls_sim_mem_device_view). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cudasim.h"
#include "sim.h"

#define QUARANTINE_BLOCKS 4096
#define QUARANTINE_BYTES ((size_t)64 << 20)

typedef struct block {
    struct block *next;
    void *p, *view;
    size_t cap;
    int is_host;
    uint64_t mark; /* dls_sim_work_mark_locked() at the free */
} block;

static block *g_freed; /* newest first (scheduler lock) */

static size_t capacity(size_t size, int is_host)
{
    size_t unit = is_host ? (size_t)sysconf(_SC_PAGESIZE) : 256;
    return (size + unit - 1) / unit * unit;
}

/* Maps a fresh memory file of cap bytes twice: the program's view (returned) and the device's
 * (*view); NULL when the system refuses. */
static void *map_host(size_t cap, void **view)
{
    int fd = memfd_create("cudasim-host", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *p = MAP_FAILED, *v = MAP_FAILED;
    if (ftruncate(fd, (off_t)cap) == 0) {
        p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        v = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    close(fd);
    if (p == MAP_FAILED || v == MAP_FAILED) {
        if (p != MAP_FAILED)
            munmap(p, cap);
        if (v != MAP_FAILED)
            munmap(v, cap);
        return NULL;
    }
    *view = v;
    return p;
}

/* Gives block b's memory back to the system. */
static void unmap(const block *b)
{
    if (!b->is_host) {
        free(b->p);
        return;
    }
    munmap(b->p, b->cap);
    munmap(b->view, b->cap);
}

void *dls_sim_block_take(size_t size, int is_host, void **view)
{
    size_t cap = capacity(size, is_host);
    void *p = NULL;
    *view = NULL;
    dls_sim_lock();
    uint64_t oldest = dls_sim_oldest_pending_locked();
    for (block **pp = &g_freed; *pp; pp = &(*pp)->next) {
        block *b = *pp;
        if (b->cap == cap && b->is_host == is_host && b->mark < oldest) {
            *pp = b->next;
            p = b->p;
            *view = b->view;
            free(b);
            break;
        }
    }
    dls_sim_unlock();
    if (!p && !(p = is_host ? map_host(cap, view) : aligned_alloc(256, cap)))
        return NULL;
    memset(*view ? *view : p, 0xA5, size); /* like a GPU, fresh memory is not zero */
    return p;
}

void dls_sim_block_give_locked(void *p, void *view, size_t size, int is_host)
{
    block *b = malloc(sizeof *b);
    if (!b)
        abort(); /* test infrastructure */
    *b = (block){g_freed, p, view, capacity(size, is_host), is_host, dls_sim_work_mark_locked()};
    g_freed = b;
    /* keep the newest blocks within the bounds; beyond them, give back the clean ones */
    uint64_t oldest = dls_sim_oldest_pending_locked();
    size_t bytes = 0;
    unsigned n = 0;
    for (block **pp = &g_freed; *pp;) {
        b = *pp;
        if (n < QUARANTINE_BLOCKS && bytes + b->cap <= QUARANTINE_BYTES) {
            n++;
            bytes += b->cap;
            pp = &b->next;
        } else if (b->mark < oldest) {
            *pp = b->next;
            unmap(b);
            free(b);
        } else {
            pp = &b->next; /* still touched by queued work: kept whatever the bounds */
        }
    }
}
