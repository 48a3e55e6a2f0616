/* drv_procaddr.c: cuGetProcAddress (the CUDA 12+ _v2 form), so code that fetches driver entry
 * points by name (the runtime, libraries, tools) gets the simulated functions.
 *
 * Models: lookup by base name ("cuMemAlloc" gives cuMemAlloc_v2), the per-thread-default-stream
 * flag (gives the _ptsz / _ptds variants where they exist), the query result.
 * Does not model: version-dependent answers (every known name is found at every version). */
#include <string.h>

#include "sim.h"

static const dls_sim_proc *const g_ptds_tables[] = {dls_sim_procs_queue_ptds, dls_sim_procs_work_ptds,
                                                    dls_sim_procs_capture_ptds};
static const dls_sim_proc *const g_tables[] = {dls_sim_procs_init, dls_sim_procs_errors, dls_sim_procs_stream,
                                               dls_sim_procs_mem,  dls_sim_procs_kernel, dls_sim_procs_queue,
                                               dls_sim_procs_work, dls_sim_procs_graph,  dls_sim_procs_capture};

static void (*find(const dls_sim_proc *const *tables, size_t n, const char *name))(void)
{
    for (size_t t = 0; t < n; t++)
        for (const dls_sim_proc *p = tables[t]; p->name; p++)
            if (strcmp(p->name, name) == 0)
                return p->fn;
    return NULL;
}

static CUresult get_proc(const char *symbol, void **pfn, cuuint64_t flags, CUdriverProcAddressQueryResult *status);

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *symbolStatus)
{
    DRV_PARAMS(cuGetProcAddress) p = {symbol, pfn, cudaVersion, flags, symbolStatus};
    DRV_CALL_ANYTIME(cuGetProcAddress, &p, get_proc(symbol, pfn, flags, symbolStatus));
}

static CUresult get_proc(const char *symbol, void **pfn, cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    void (*fn)(void) = NULL;
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        fn = (void (*)(void))cuGetProcAddress;
    if (!fn && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        fn = find(g_ptds_tables, sizeof g_ptds_tables / sizeof g_ptds_tables[0], symbol);
    if (!fn)
        fn = find(g_tables, sizeof g_tables / sizeof g_tables[0], symbol);
    *pfn = (void *)fn;
    if (status)
        *status = fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
