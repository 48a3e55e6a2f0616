/* Allocation ranges: where the driver's allocation holding an address starts, asked of the
 * driver (cuPointerGetAttribute) once and kept per thread until any call that may free or unmap
 * memory (a free, an unmap, an address range freed, host memory unregistered, a pool trimmed or
 * destroyed, IPC or external memory closed, a context destroyed or reset) ages every range kept.
 * Ranges are kept only while the observer sees those calls (dls_cuda_ranges_watch); without it
 * every question goes to the driver. */
#ifndef DLS_CUDA_RANGES_H
#define DLS_CUDA_RANGES_H

#include "../common/compiler.h"

#include <stdint.h>

/* The allocation holding address p: [*start, *end), and 0; -1 when the driver cannot tell where
 * it starts (*end is p + 1 when it tells the start alone). No lock held (it may call the driver);
 * any thread. */
int dls_cuda_alloc_range(uintptr_t p, uintptr_t *start, uintptr_t *end) DLS_UNLOCKED;

/* The start of the allocation holding address p, or 0 when the driver cannot tell
 * (dls_cuda_alloc_range). */
uintptr_t dls_cuda_range_start(uintptr_t p) DLS_UNLOCKED;

/* A call that may free or unmap memory is about to run: every range kept is stale. Any thread,
 * lock held or not (no driver call). */
void dls_cuda_ranges_age(void);

/* Whether the observer sees every call that ages ranges (1: ranges may be kept) or not (0: the
 * default; every question then goes to the driver). Any thread. */
void dls_cuda_ranges_watch(int seen);

#endif
