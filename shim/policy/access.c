/* The access record of an operation and the questions asked of it (see access.h). */
#include "access.h"

void dls_pol_access_of_op(dls_pol_access *a, const dls_cuda_op *op)
{
    dls_pol_access_fill(a, op->kind, op->flags, op->correlation_id, op->api, op->name, op->ranges, op->nranges,
                        op->words, op->nwords);
    if (op->kind == DLS_OP_GRAPH_LAUNCH)
        a->graph_exec = op->exec;
}

void dls_pol_entry_box(dls_pol_entry *e, const uint64_t *words)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (uint32_t i = 0; i < e->a.nwords; i++)
        if (words[i] >= 4096) {
            lo = words[i] < lo ? (uintptr_t)words[i] : lo;
            hi = words[i] >= hi ? (uintptr_t)words[i] + 1 : hi;
        }
    e->a.nwords = 0;
    e->a.words = e->words;
    if (lo >= hi)
        return;
    if (e->a.nranges) { /* a box beside ranges: more than an entry keeps */
        e->a.conservative = 1;
        e->a.nranges = 0;
        return;
    }
    e->a.lo[0] = lo;
    e->a.hi[0] = hi;
    e->a.nranges = 1;
    e->a.boxed = 1;
    e->a.writes = 0;
}

const char *dls_pol_access_name(const dls_pol_access *a)
{
    return a->kind == DLS_OP_LAUNCH && a->name ? a->name : a->api;
}

int dls_pol_touches(const dls_pol_access *a, uintptr_t alo, uintptr_t lo, uintptr_t hi)
{
    if (!dls_pol_is_memory_op(a->kind))
        return 0;
    if (a->conservative)
        return 1;
    for (uint32_t i = 0; i < a->nwords; i++)
        if (a->words[i] >= alo && a->words[i] < hi)
            return 1;
    for (unsigned i = 0; i < a->nranges; i++)
        if (a->lo[i] < hi && (i == 0 && a->boxed ? alo : lo) < a->hi[i])
            return 1;
    return 0;
}

int dls_pol_writes(const dls_pol_access *a, uintptr_t lo, uintptr_t hi)
{
    for (unsigned i = 0; i < a->nranges; i++)
        if ((a->writes & (1u << i)) && a->lo[i] < hi && lo < a->hi[i])
            return 1;
    return 0;
}

int dls_pol_reuses(const dls_pol_access *a, const dls_pol_x *x)
{
    if (a->kind != DLS_OP_FREE)
        return dls_pol_touches(a, x->lo, x->lo, x->hi);
    if (a->conservative)
        return 1;
    for (unsigned i = 0; i < a->nranges; i++)
        if (a->lo[i] < x->hi && x->lo < a->hi[i])
            return 1;
    return 0;
}

int dls_pol_reuses_all(const dls_pol_access *a, const dls_pol_x *x)
{
    if (a->conservative)
        return 1;
    for (uint32_t i = 0; i < a->nwords; i++)
        if (a->words[i] == x->lo || a->words[i] == x->alo)
            return 1;
    for (unsigned i = 0; i < a->nranges; i++)
        if (!(i == 0 && a->boxed) && a->lo[i] <= x->lo && x->hi <= a->hi[i])
            return 1;
    return 0;
}
