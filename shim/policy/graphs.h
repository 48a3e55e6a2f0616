/* What captured CUDA graphs are known to write. A graph launch may touch any memory, so by itself
 * it is only "may write" (access.h); but when its graph was captured from a stream, the copies and
 * sets captured into it are known writes, and they follow the graph to every executable graph
 * instantiated from it. A launch of such an executable graph is then a known write of the bytes
 * those operations wrote (dls_pol_direction), which check reports as such (write-after-use,
 * use-after-write) instead of counting a kernel pair.
 *
 * Only what a capture saw is known: work joined into the capture from other streams, nodes added
 * or changed by the graph API, and clones are not, and their graph launches stay "may write".
 * An executable graph that is updated or destroyed, and a graph destroyed, are forgotten. At most
 * DLS_POL_GRAPH_WRITES ranges are kept per graph (the rest are not known), and at most
 * DLS_POL_GRAPHS graphs and executable graphs with known writes (more are not remembered).
 *
 * Every function runs with dls_pol_g.lock held. */
#ifndef DLS_POL_GRAPHS_H
#define DLS_POL_GRAPHS_H

#include "types.h"

#define DLS_POL_GRAPHS 4096 /* graphs and executable graphs with known writes kept, each */

/* Stream `stream` begins a capture: its captured operations' known writes are collected. */
void dls_pol_graph_capture_begin(uint64_t stream) DLS_REQUIRES(dls_pol_g.lock);

/* Access a was captured on stream `stream` (applied while it captures): its known writes, if the
 * stream's capture is collected, join the capture's. */
void dls_pol_graph_captured(uint64_t stream, const dls_pol_access *a) DLS_REQUIRES(dls_pol_g.lock);

/* Stream `stream`'s capture ends with graph `graph` (0: none was made): the capture's known
 * writes become the graph's. */
void dls_pol_graph_capture_end(uint64_t stream, uintptr_t graph) DLS_REQUIRES(dls_pol_g.lock);

/* Executable graph `exec` is instantiated from `graph`: it writes what the graph does. */
void dls_pol_graph_instantiated(uintptr_t graph, uintptr_t exec) DLS_REQUIRES(dls_pol_g.lock);

/* Executable graph `exec` is destroyed or updated: what it writes is no longer known. */
void dls_pol_graph_exec_changed(uintptr_t exec) DLS_REQUIRES(dls_pol_g.lock);

/* Graph `graph` is destroyed. */
void dls_pol_graph_destroyed(uintptr_t graph) DLS_REQUIRES(dls_pol_g.lock);

/* 1 when a launch of executable graph `exec` is known to write bytes of [lo, hi). */
int dls_pol_graph_writes(uintptr_t exec, uintptr_t lo, uintptr_t hi) DLS_REQUIRES(dls_pol_g.lock);

#endif
