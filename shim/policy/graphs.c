/* What captured CUDA graphs are known to write (see graphs.h). */
#include "graphs.h"

#include "../common/map.h"

#include <stdlib.h>

typedef dls_pol_known_writes writes;

/* The captures, graphs and executable graphs live in the policy's state (types.h), which one
 * reset clears. */
static writes *const g_captures = dls_pol_g.graphs.captures; /* key 0: free */
static dls_map *const g_graphs = &dls_pol_g.graphs.by_graph, *const g_execs = &dls_pol_g.graphs.by_exec;

/* The key of capturing stream id (never 0). */
static uintptr_t capture_key(uint64_t stream)
{
    return (uintptr_t)stream | (uintptr_t)1 << 63;
}

static writes *capture_of(uint64_t stream)
{
    for (unsigned i = 0; i < DLS_POL_CAPTURES; i++)
        if (g_captures[i].key == capture_key(stream))
            return &g_captures[i];
    return NULL;
}

void dls_pol_graph_capture_begin(uint64_t stream)
{
    writes *w = capture_of(stream);
    for (unsigned i = 0; !w && i < DLS_POL_CAPTURES; i++)
        if (!g_captures[i].key)
            w = &g_captures[i];
    if (w)
        *w = (writes){.key = capture_key(stream)};
}

void dls_pol_graph_captured(uint64_t stream, const dls_pol_access *a)
{
    if ((a->kind != DLS_OP_MEMCPY && a->kind != DLS_OP_MEMSET) || a->conservative)
        return;
    writes *w = capture_of(stream);
    if (!w)
        return;
    for (unsigned i = 0; i < a->nranges && w->n < DLS_POL_GRAPH_WRITES; i++)
        if (a->writes & (1u << i)) {
            w->lo[w->n] = a->lo[i];
            w->hi[w->n++] = a->hi[i];
        }
}

/* Puts a copy of w under key in map m (grown when needed; not kept when memory is short or m
 * holds DLS_POL_GRAPHS keys). */
static void keep(dls_map *m, uintptr_t key, const writes *w)
{
    if (dls_map_full(m) && !dls_map_get(m, key)) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        writes *slots = cap <= 2 * DLS_POL_GRAPHS ? calloc(cap, sizeof *slots) : NULL;
        if (!slots)
            return;
        free(dls_map_rehash(m, slots, cap));
    }
    writes *slot = dls_map_put(m, key);
    *slot = *w;
    slot->key = key;
}

/* Forgets key in map m. */
static void forget(dls_map *m, uintptr_t key)
{
    if (!m->cap)
        return;
    size_t i = dls_map_index(m, key);
    if (dls_map_key_at(m, i))
        dls_map_remove_at(m, i);
}

void dls_pol_graph_capture_end(uint64_t stream, uintptr_t graph)
{
    writes *w = capture_of(stream);
    if (!w)
        return;
    if (graph && w->n)
        keep(g_graphs, graph, w);
    w->key = 0;
}

void dls_pol_graph_instantiated(uintptr_t graph, uintptr_t exec)
{
    const writes *w = graph ? dls_map_get(g_graphs, graph) : NULL;
    if (w && exec)
        keep(g_execs, exec, w);
    else if (exec) /* a handle reused for another executable graph */
        forget(g_execs, exec);
}

void dls_pol_graph_exec_changed(uintptr_t exec)
{
    if (exec)
        forget(g_execs, exec);
}

void dls_pol_graph_destroyed(uintptr_t graph)
{
    if (graph)
        forget(g_graphs, graph);
}

int dls_pol_graph_writes(uintptr_t exec, uintptr_t lo, uintptr_t hi)
{
    const writes *w = exec ? dls_map_get(g_execs, exec) : NULL;
    for (unsigned i = 0; w && i < w->n; i++)
        if (w->lo[i] < hi && lo < w->hi[i])
            return 1;
    return 0;
}
