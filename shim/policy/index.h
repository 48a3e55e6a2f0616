/* The index of watched byte ranges: the [lo, hi) of every live exchange and every released one
 * still fenced (fix) or watched (check), read without a lock at the ENTER of every memory
 * operation while memory is watched. "May this operation touch a watched range?" is a binary
 * search and a walk back over the ranges sorted by lo with the highest hi of each prefix: O(log n)
 * for ranges spread over the heap, whatever their number. Writers hold dls_pol_g.lock. */
#ifndef DLS_POL_INDEX_H
#define DLS_POL_INDEX_H

#include "types.h"

/* Adds x's [lo, hi) (lock held). When memory is short, warns once and from then on clears
 * nothing (every operation may touch): slower, never unsafe. */
void dls_pol_index_add(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* Removes x's range (lock held); nothing when it is not there. */
void dls_pol_index_remove(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock);

/* The flag that is nonzero while some range is indexed (or the index clears nothing): the
 * observer's ENTER gate. */
extern atomic_int dls_pol_index_watching_flag DLS_HIDDEN;
static inline const atomic_int *dls_pol_index_watching(void)
{
    return &dls_pol_index_watching_flag;
}

/* Number of ranges in the index. */
size_t dls_pol_index_count(void);

/* Lock-free: 1 when access a certainly touches no indexed range, answering in *cleared
 * dls_pol_cleared of the version it asked; 0 when it may touch (conservative accesses and graph
 * launches may touch anything watched). */
int dls_pol_index_clears(const dls_pol_access *a, uint64_t *cleared);

/* The index's current version (it changes with every insertion and removal). */
unsigned dls_pol_index_version(void);

#endif
