/* The policy's table of streams (types.h, dls_pol_g.streams): each CUDA stream the policy has
 * seen, found by its driver id, added to the table and to the hb engine at first sight. Read and
 * written with the policy lock held. */
#ifndef DLS_POL_STREAM_TABLE_H
#define DLS_POL_STREAM_TABLE_H

#include "types.h"

/* Lock held: the stream of `s` (an operation's stream), added at first sight; NULL when it cannot
 * be modelled (unresolved) or memory is short. `tid` is the thread using it. */
dls_pol_stream *dls_pol_stream_get(const dls_cuda_stream *s, uint64_t tid);

/* Lock held: the known stream with hb id `id`, or NULL. */
dls_pol_stream *dls_pol_stream_find(uint64_t id);

/* Tests only (lock held): frees every stream and the table. */
void dls_pol_stream_table_reset_for_tests(void);

#endif
