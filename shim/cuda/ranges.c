/* Allocation ranges kept per thread (see ranges.h). A range is a [start, end) the driver told
 * for an address, with the age it was told at; a global age that every call which may free or
 * unmap memory raises makes every older range stale. The age is raised at that call's ENTER:
 * memory it frees can be handed out again only after the call returns, so a thread that learns
 * of the new allocation (through the program's own ordering) sees the raised age. */
#include "ranges.h"

#include "drv.h"

#include <stdatomic.h>

#define RANGES 4 /* per thread: a pipeline's pool buffers cycle through few allocations per thread */

typedef struct {
    uint64_t age; /* 0: empty */
    uintptr_t start, end;
} range;

static atomic_uint_fast64_t g_age = 1;
static atomic_int g_seen;
static __thread range t_ranges[RANGES];
static __thread unsigned t_next;

void dls_cuda_ranges_age(void)
{
    atomic_fetch_add_explicit(&g_age, 1, memory_order_acq_rel);
}

void dls_cuda_ranges_watch(int seen)
{
    dls_cuda_ranges_age(); /* what was kept before the observer saw every call is not trusted */
    atomic_store_explicit(&g_seen, seen, memory_order_release);
}

/* Asks the driver where the allocation holding p starts and how long it is: 0, or -1 when it
 * cannot tell. */
static int ask(uintptr_t p, uintptr_t *start, uintptr_t *end)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    if (dls_drv_pointer_get_attribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)p) != CUDA_SUCCESS ||
        !base || base > p)
        return -1;
    if (dls_drv_pointer_get_attribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)p) != CUDA_SUCCESS ||
        base + size <= p)
        size = p - base + 1; /* the start alone: kept as a range holding p */
    *start = (uintptr_t)base;
    *end = (uintptr_t)(base + size);
    return 0;
}

int dls_cuda_alloc_range(uintptr_t p, uintptr_t *start, uintptr_t *end)
{
    uint64_t age = atomic_load_explicit(&g_age, memory_order_acquire);
    int seen = atomic_load_explicit(&g_seen, memory_order_acquire);
    for (unsigned i = 0; seen && i < RANGES; i++)
        if (t_ranges[i].age == age && t_ranges[i].start <= p && p < t_ranges[i].end) {
            *start = t_ranges[i].start;
            *end = t_ranges[i].end;
            return 0;
        }
    if (ask(p, start, end) != 0)
        return -1;
    if (seen)
        t_ranges[t_next++ % RANGES] = (range){age, *start, *end};
    return 0;
}

uintptr_t dls_cuda_range_start(uintptr_t p)
{
    uintptr_t start, end;
    return dls_cuda_alloc_range(p, &start, &end) == 0 ? start : 0;
}
